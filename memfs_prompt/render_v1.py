"""The memfs-v1 projection every released compiler renders (`renderMemfsProjection`).

persona -> `<self>`, `system/**` -> a nested tag tree with `<projection>` paths, every
other non-skill file -> an `<external_projection>` directory tree.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .errors import UpstreamError
from .jsobjects import JsNumber, JsObject, Realm, js_set, truthy
from .quirks import js_trim, js_trim_end, locale_compare_key

__all__ = ["MemoryFile", "UpstreamError", "render_memfs_v1", "render_system_tree"]

MEMORY_DIR_PLACEHOLDER = "${MEMORY_DIR}"
_LEAF_VALUE = "__value__"
_LEAF_DESCRIPTION = "__description__"


@dataclass(frozen=True)
class MemoryFile:
    relative_path: str
    label: str
    value: str
    description: str


def js_string(value: object) -> str:
    """`String(value ?? "")` for what a leaf field can hold: a string, or an object (`[object Object]`, or a
    function's source text, which no leaf field can reach)."""
    if value is None:
        return ""
    return value if isinstance(value, str) else "[object Object]"


def render_system_tree(files: list[MemoryFile]) -> str:
    """Upstream `renderSystemTree`, including what `__proto__`, Object.prototype's members and everything
    reachable from them (memfs_prompt.jsobjects) do to it."""
    realm = Realm()
    tree = realm.new_object()
    for file in files:
        label = file.label[len("system/") :] if file.label.startswith("system/") else file.label
        parts = [part for part in label.split("/") if part]
        if not parts:
            continue
        node: JsObject | JsNumber = tree
        for part in parts:
            existing = realm.get(node, part)
            if not truthy(existing) or isinstance(existing, str):
                js_set(node, part, realm.new_object())
            node = realm.get(node, part)
        js_set(node, _LEAF_VALUE, file.value)
        js_set(node, _LEAF_DESCRIPTION, file.description)

    lines: list[str] = []

    def render(node: JsObject, indent: int, path_parts: list[str]) -> None:
        pad = "  " * indent
        keys = [k for k in node.own_keys() if k not in (_LEAF_VALUE, _LEAF_DESCRIPTION)]
        for key in sorted(keys, key=locale_compare_key):
            child = node.own[key]
            assert isinstance(child, JsObject)  # the walk only ever assigns `{}` to a key
            child_parts = [*path_parts, key]
            lines.append(f"{pad}<{key}>")
            if _LEAF_VALUE in child.own:  # Object.hasOwn(child, LEAF_VALUE)
                lines.append(f"{pad}  <projection>$MEMORY_DIR/system/{'/'.join(child_parts)}.md</projection>")
                # child[LEAF_DESCRIPTION] is a property read: it goes up the prototype chain, so a node that is
                # a leaf only through a `__value__` directory shows a description a `__proto__` leaf polluted
                description = js_trim(js_string(child.get(_LEAF_DESCRIPTION)))
                if description:
                    lines.append(f"{pad}  <description>{description}</description>")
                value = js_trim_end(js_string(child.get(_LEAF_VALUE)))
                if value:
                    lines.append(f"{pad}  {value}")
            render(child, indent + 1, child_parts)
            lines.append(f"{pad}</{key}>")

    render(tree, 0, [])
    return "\n".join(lines)


def render_external_projection(files: list[MemoryFile], literal: Callable[[str], str]) -> str:
    """Upstream `renderExternalProjection`: a `tree`-style listing, directories first, then localeCompare."""
    root: dict[str, dict | None] = {}
    for file in files:
        parts = [part for part in file.relative_path.split("/") if part]
        if not parts:
            continue
        node = root
        for part in parts[:-1]:
            existing = node.get(part)
            if isinstance(existing, dict):
                node = existing
            else:
                child: dict[str, dict | None] = {}
                node[part] = child
                node = child
        node[parts[-1]] = None

    last, middle, bar = literal("└── "), literal("├── "), literal("│   ")
    lines = ["<external_projection>", f"{MEMORY_DIR_PLACEHOLDER}/"]

    def render(node: dict[str, dict | None], prefix: str) -> None:
        entries = sorted(node.items(), key=lambda item: (item[1] is None, locale_compare_key(item[0])))
        for index, (name, child) in enumerate(entries):
            is_last = index == len(entries) - 1
            connector = last if is_last else middle
            is_dir = child is not None
            lines.append(f"{prefix}{connector}{name}{'/' if is_dir else ''}")
            if child is not None:
                render(child, prefix + ("    " if is_last else bar))

    render(root, "")
    lines.append("</external_projection>")
    return "\n".join(lines)


def render_memfs_v1(files: list[MemoryFile], literal: Callable[[str], str]) -> str:
    """Upstream `renderMemfsProjection` on files already sorted by label."""
    if not files:
        return ""
    lines = ["Reminder: <projection> contains the local path of the memory file projection."]
    persona = next((f for f in files if f.label == "system/persona"), None)
    if persona:
        lines += [
            "",
            "<self>",
            "<projection>$MEMORY_DIR/system/persona.md</projection>",
            js_trim_end(persona.value),
            "</self>",
        ]
    system_files = [f for f in files if f.label.startswith("system/") and f.label != "system/persona"]
    external = [f for f in files if not f.label.startswith("system/") and not f.label.startswith("skills/")]
    if system_files or external:
        lines += ["", "<memory>"]
        system_tree = render_system_tree(system_files)
        if system_tree:
            lines.append(system_tree)
        if external:
            lines.append(render_external_projection(external, literal))
        lines.append("</memory>")
    return "\n".join(lines)
