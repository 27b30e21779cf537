"""The turn's `<available_skills>` block: upstream's `compileAvailableSkillsBlock` and
`appendAvailableSkillsBlock` (module `src/backend/local/system-prompt-compilation.ts`).

Every turn of the local backend sends `appendAvailableSkillsBlock(compiled.content,
body.client_skills)` as the system prompt (a `client_skills` that is not an array counts as `[]`).
The block is never stored or cached. Two formats, by release (`Profile.skills_block`):

- `tree` (0.25.3 to 0.30.28): skills grouped by the root directory of their `location` (default
  `${MEMORY_DIR}/skills/<name>/SKILL.md`), each root followed by a box-drawing tree of skill files
  with `(description)`; roots separated by a blank line.
- `list` (0.31.12 and later): one line per skill, "- `name`: description", by name.

Both take the first skill of each name (a non-empty string), skip entries that are not objects,
and keep the first line (split on `\\n` only) of the JS-trimmed description.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from .profiles import Profile
from .quirks import bun_pragma_literal, js_trim, js_trim_end, js_trim_start, locale_compare_key

MEMORY_DIR_PLACEHOLDER = "${MEMORY_DIR}"


def _string_field(value: Any) -> str | None:
    """`stringField`: a non-empty string, else undefined."""
    return value if isinstance(value, str) and value else None


def _first_line(description: Any) -> str:
    text = _string_field(description)
    return js_trim(text).split("\n")[0] if text is not None else ""


def _entries(client_skills: Any) -> list[dict[str, Any]]:
    """The skills upstream keeps: objects with a new non-empty string `name`, first one wins."""
    seen: set[str] = set()
    kept = []
    for skill in client_skills if isinstance(client_skills, list) else []:
        if not isinstance(skill, dict):
            continue  # `!skill || typeof skill !== "object"` (an array is an object with no name)
        name = _string_field(skill.get("name"))
        if name is None or name in seen:
            continue
        seen.add(name)
        kept.append(skill)
    return kept


# --- node:path (posix), as bun implements it -------------------------------------------------
# bun's node:path is native: it reads its arguments as UTF-8, so a lone surrogate comes back as U+FFFD
# (each unpaired code unit one U+FFFD; measured with bun 1.4.5: `path.dirname("/a/\ud800/b")` is `/a/\ufffd`).
# node's JavaScript implementation keeps it (runtime drift, explained by skills-tree-lone-surrogate).

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")  # the port's strings hold pairs as one character


def bun_path_text(path: str) -> str:
    """`path` as bun's node:path functions read it: every lone surrogate replaced by U+FFFD."""
    return path if path.isascii() else _LONE_SURROGATE.sub("\ufffd", path)


def node_dirname(path: str) -> str:
    path = bun_path_text(path)
    if not path:
        return "."
    has_root = path[0] == "/"
    end = -1
    matched_slash = True
    for i in range(len(path) - 1, 0, -1):
        if path[i] == "/":
            if not matched_slash:
                end = i
                break
        else:
            matched_slash = False
    if end == -1:
        return "/" if has_root else "."
    if has_root and end == 1:
        return "//"
    return path[:end]


def node_basename(path: str) -> str:
    path = bun_path_text(path)
    start, end, matched_slash = 0, -1, True
    for i in range(len(path) - 1, -1, -1):
        if path[i] == "/":
            if not matched_slash:
                start = i + 1
                break
        elif end == -1:
            matched_slash = False
            end = i + 1
    return "" if end == -1 else path[start:end]


def _normalize_segments(path: str) -> str:
    """`resolve`'s normalisation of an absolute path: no `.`, `..` clamped at `/`, no empty parts."""
    parts: list[str] = []
    for part in path.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if parts:
                parts.pop()
            continue
        parts.append(part)
    return "/" + "/".join(parts)


# A relative location is resolved against the reference's working directory; only a location
# whose `..` climbs above `/` can tell one directory from another (not modelled: port-limitation).
RESOLVE_CWD = "/"


def node_resolve(path: str) -> str:
    path = bun_path_text(path)
    return _normalize_segments(path if path.startswith("/") else f"{RESOLVE_CWD}/{path}")


def node_relative(source: str, target: str) -> str:
    """`path.posix.relative` (node's algorithm)."""
    source, target = node_resolve(source), node_resolve(target)
    if source == target:
        return ""
    from_start, from_end = 1, len(source)
    from_len = from_end - from_start
    to_start = 1
    to_len = len(target) - to_start
    length = min(from_len, to_len)
    last_common_sep = -1
    i = 0
    while i < length:
        code = source[from_start + i]
        if code != target[to_start + i]:
            break
        if code == "/":
            last_common_sep = i
        i += 1
    if i == length:
        if to_len > length:
            if target[to_start + i] == "/":
                return target[to_start + i + 1 :]
            if i == 0:
                return target[to_start + i :]
        elif from_len > length:
            if source[from_start + i] == "/":
                last_common_sep = i
            elif i == 0:
                last_common_sep = 0
    out = ""
    for j in range(from_start + last_common_sep + 1, from_end + 1):
        if j == from_end or source[j] == "/":
            out += ".." if not out else "/.."
    return f"{out}{target[to_start + last_common_sep :]}"


def _normalize_path(value: str) -> str:
    return value.replace("\\", "/")


def skill_root_and_relative_path(name: str, location: str) -> tuple[str, str]:
    """`skillRootAndRelativePath`: a `<root>/<name>/SKILL.md` location groups under `<root>`."""
    normalized = _normalize_path(js_trim(location))
    if normalized.endswith("/SKILL.md"):
        skill_dir = node_dirname(normalized)
        root = node_dirname(skill_dir)
        relative_path = _normalize_path(node_relative(root, normalized))
        if node_basename(skill_dir) == name.split("/")[-1]:
            return _normalize_path(root), relative_path
    return _normalize_path(node_dirname(normalized)), node_basename(normalized)


# --- the two formats -------------------------------------------------------------------------


def _list_block(skills: list[dict[str, Any]]) -> str:
    entries = [(skill["name"], _first_line(skill.get("description"))) for skill in skills]
    entries.sort(key=lambda entry: locale_compare_key(entry[0]))
    lines = ["<available_skills>"]
    for name, description in entries:
        lines.append(f"- `{name}`: {description}" if description else f"- `{name}`")
    lines.append("</available_skills>")
    return "\n".join(lines)


_Tree = dict[str, "_Tree | str"]


def _tree_block(skills: list[dict[str, Any]], literal: Callable[[str], str]) -> str:
    grouped: dict[str, list[tuple[str, str]]] = {}
    for skill in skills:
        name = skill["name"]
        description = _first_line(skill.get("description"))
        given = _string_field(skill.get("location"))
        location = (js_trim(given) if given is not None else "") or f"{MEMORY_DIR_PLACEHOLDER}/skills/{name}/SKILL.md"
        root, relative_path = skill_root_and_relative_path(name, location)
        grouped.setdefault(root, []).append((relative_path, description))
    lines = ["<available_skills>"]
    roots = sorted(grouped, key=locale_compare_key)
    for index, root in enumerate(roots):
        lines.append(root)
        tree: _Tree = {}
        for relative_path, description in sorted(grouped[root], key=lambda e: locale_compare_key(e[0])):
            parts = [part for part in relative_path.split("/") if part]
            node = tree
            for part in parts[:-1]:
                existing = node.get(part)
                if isinstance(existing, dict):
                    node = existing
                else:
                    child: _Tree = {}
                    node[part] = child  # a Map keeps the first insertion's position
                    node = child
            if parts:
                node[parts[-1]] = description

        def render(node: _Tree, prefix: str = "") -> None:
            items = sorted(
                node.items(), key=lambda item: (0 if isinstance(item[1], dict) else 1, locale_compare_key(item[0]))
            )
            for position, (name, value) in enumerate(items):
                last = position == len(items) - 1
                connector = literal("└── " if last else "├── ")
                if isinstance(value, dict):
                    lines.append(f"{prefix}{connector}{name}/")
                    render(value, prefix + ("    " if last else literal("│   ")))
                else:
                    trimmed = js_trim(value)
                    lines.append(f"{prefix}{connector}{name}{f' ({trimmed})' if trimmed else ''}")

        render(tree)
        if index != len(roots) - 1:
            lines.append("")
    lines.append("</available_skills>")
    return "\n".join(lines)


def compile_available_skills_block(
    client_skills: Sequence[Any] | Any, style: str = "list", *, pragma_latin1_literals: bool = False
) -> str:
    """`compileAvailableSkillsBlock`: "" when no skill survives, else the `<available_skills>` block."""
    skills = _entries(client_skills)
    if not skills:
        return ""
    if style == "list":
        return _list_block(skills)
    if style == "tree":
        return _tree_block(skills, bun_pragma_literal if pragma_latin1_literals else _identity)
    raise ValueError(f"unknown skills block style {style!r} (tree or list)")


def append_available_skills_block(
    system_prompt: str, client_skills: Sequence[Any] | Any, style: str = "list", *, pragma_latin1_literals: bool = False
) -> str:
    """`appendAvailableSkillsBlock`: the trimEnd()-ed prompt, a blank line, the block (or the prompt unchanged)."""
    block = compile_available_skills_block(client_skills, style, pragma_latin1_literals=pragma_latin1_literals)
    if not block:
        return system_prompt
    return f"{js_trim_end(system_prompt)}\n\n{js_trim_start(block)}"


def _identity(value: str) -> str:
    return value


def append_skills_for_profile(system_prompt: str, client_skills: Any, profile: Profile) -> str:
    """The system prompt a turn sends under `profile`: the compiled content with its skills block."""
    return append_available_skills_block(
        system_prompt, client_skills, profile.skills_block, pragma_latin1_literals=profile.pragma_latin1_literals
    )
