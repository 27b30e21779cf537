"""The Memory tool's view of a memory path (`Memory("projects")`, letta-code 0.34.7 and later).

Upstream's tool (src/tools/impl/memory.ts) refuses some paths (the root, absolute paths, `..` and hidden
segments, `skills/`, root files), renders a file clamped to a budget, and renders a deferred directory: its
MEMORY.md clamped to a line and character budget, then `<memory_files>` and `<deferred-memory>` listing at most
ten entries directly beneath it, most recently edited first. "Edited" is the newest commit that touched the
entry (`git log --name-only`, first mention wins, in git's walk order) or, for an entry with uncommitted
changes, the changed files' mtimes when they are newer; ties go by `localeCompare` (collation.py). A directory's
description is its index's frontmatter `description` or its first plain paragraph.

This module owns that rendering and its refusals. Strings are measured and cut in UTF-16 code units, as
JavaScript does (`length`, `slice`), so a cut may leave a lone surrogate, as upstream's does. The git commands
are upstream's own, run in the same directory with the same arguments (their output decoded as
`execFileSync(..., "utf8")` does); directory listings are in the file system's order, as `readdirSync`'s.
"""

from __future__ import annotations

import os
import re
import stat
import subprocess
from collections.abc import Mapping

from .collation import locale_compare_key
from .errors import UpstreamError
from .frontmatter import parse_frontmatter
from .git_command import run_git
from .profiles import Profile
from .quirks import JS_WHITESPACE, decode_utf8_lossy, js_trim, js_trim_end

INDEX = "MEMORY.md"
# LIMITS in src/tools/impl/truncation.ts
READ_MAX_LINES = 2000
READ_MAX_CHARS_PER_LINE = 2000
READ_OUTPUT_CHARS = 30000
MEMORY_MAX_ENTRIES = 10
MAX_FILE_BYTES = 10 * 1024 * 1024
DESCRIPTION_MAX = 300  # readIndexDescription cuts a paragraph to 297 units and "..."

_JS_S = "[" + re.escape("".join(sorted(JS_WHITESPACE))) + "]"  # JavaScript's \s: no U+0085, no U+001C..U+001F
_BLOCK_SPLIT = re.compile(rf"\n{_JS_S}*\n")
_NOT_PLAIN = re.compile(r"(#|[-*+] |[0-9]+\. |\||```|<)")  # JavaScript's \d is ASCII
_NEWLINE_RUN = re.compile(rf"{_JS_S}*\n{_JS_S}*")
_LINK = re.compile(r"\[([^\]]+)\]\([^)]*\)")
_DRIVE = re.compile(r"[A-Za-z]:")


class MemoryViewRefused(UpstreamError):
    """The tool threw (`new Error(message)`): the protocol's `thrown` is `Error: <message>`."""

    def __init__(self, message: str) -> None:
        super().__init__(f"Error: {message}")


# --- JavaScript strings: UTF-16 code units ------------------------------------------------------------


def js_length(value: str) -> int:
    """`value.length`: UTF-16 code units (an astral character counts two)."""
    return len(value) + sum(1 for char in value if ord(char) > 0xFFFF)


def js_slice(value: str, start: int, end: int | None = None) -> str:
    """`value.slice(start, end)` in code units (negative counts from the end); a cut pair leaves a lone surrogate."""
    if js_length(value) == len(value):
        return value[start:end]
    units = value.encode("utf-16-le", "surrogatepass")
    length = len(units) // 2
    first = max(length + start, 0) if start < 0 else min(start, length)
    last = length if end is None else (max(length + end, 0) if end < 0 else min(end, length))
    return units[2 * first : 2 * max(first, last)].decode("utf-16-le", "surrogatepass")


def js_grouped(number: int) -> str:
    """`number.toLocaleString()` under bun's en-US: thousands grouped with commas."""
    return f"{number:,}"


def escape_xml_text(value: str) -> str:
    return value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def description_attr(description: str | None) -> str:
    return f' description="{escape_xml_text(description).replace(chr(34), "&quot;")}"' if description else ""


# --- files ----------------------------------------------------------------------------------------------


def read_text(path: str) -> str:
    """`readFileSync(path, "utf8")`: invalid UTF-8 becomes U+FFFD; raises OSError as upstream throws."""
    with open(path, "rb") as handle:
        return decode_utf8_lossy(handle.read())


def read_description(path: str, profile: Profile) -> str | None:
    """A file's frontmatter `description`, trimmed; None when absent, not a string, empty or unreadable."""
    try:
        value = parse_frontmatter(read_text(path), profile.frontmatter).frontmatter.get("description")
    except OSError:
        return None
    return (js_trim(value) or None) if isinstance(value, str) else None


def read_index_description(path: str, profile: Profile) -> str | None:
    """A directory's description: its index's frontmatter one, else the index body's first plain paragraph
    (headings, list items, tables, fences and HTML skipped; soft breaks joined; links unwrapped; 300 units)."""
    described = read_description(path, profile)
    if described:
        return described
    try:
        body = parse_frontmatter(read_text(path), profile.frontmatter).body
    except OSError:
        return None
    for block in _BLOCK_SPLIT.split(body):
        text = js_trim(block)
        if not text or _NOT_PLAIN.match(text):
            continue
        paragraph = _LINK.sub(r"\1", _NEWLINE_RUN.sub(" ", text))
        return (
            js_slice(paragraph, 0, DESCRIPTION_MAX - 3) + "..." if js_length(paragraph) > DESCRIPTION_MAX else paragraph
        )
    return None


def truncate_by_chars(text: str, max_chars: int) -> str:
    """truncateByChars(text, maxChars, "Memory") with no overflow file: the middle cut out (the default)."""
    length = js_length(text)
    if length <= max_chars:
        return text
    half = max_chars // 2
    middle = f"\n... [{js_grouped(length - max_chars)} characters omitted] ...\n"
    notice = f"[Output truncated: showing {js_grouped(max_chars)} of {js_grouped(length)} characters.]"
    return js_slice(text, 0, half) + middle + js_slice(text, -half) + "\n\n" + notice


def clamp_content(content: str, full_path: str, max_chars: int) -> str:
    """The first 2000 lines, each cut at 2000 units, the whole cut to `max_chars`, with upstream's notices."""
    lines = content.split("\n")
    shown = lines[:READ_MAX_LINES]
    long_lines = any(js_length(line) > READ_MAX_CHARS_PER_LINE for line in shown)
    result = "\n".join(
        line
        if js_length(line) <= READ_MAX_CHARS_PER_LINE
        else js_slice(line, 0, READ_MAX_CHARS_PER_LINE) + "... [line truncated]"
        for line in shown
    )
    by_total = js_length(result) > max_chars
    if by_total:
        result = truncate_by_chars(result, max_chars)
    notices = []
    if len(shown) < len(lines):
        notices.append(
            f"[File truncated: showing lines 1-{len(shown)} of {len(lines)} total lines. "
            "Use Read with offset and limit on the full file to read other sections.]"
        )
    if long_lines:
        notices.append(f"[Some lines exceeded {js_grouped(READ_MAX_CHARS_PER_LINE)} characters and were truncated.]")
    if by_total:
        notices.append("[Use Read with offset and limit on the full file to read it in smaller sections.]")
    if notices:
        notices.append(f"[Full file: {full_path}]")
    return f"{result}\n\n" + "\n\n".join(notices) if notices else result


# --- when each entry was last edited ------------------------------------------------------------------


def _git(directory: str, env: Mapping[str, str] | None, *args: str) -> str:
    """`execFileSync("git", ["-C", dir, ...args], {encoding: "utf8"})`; CalledProcessError where it throws."""
    done = run_git(None, env, "-C", directory, *args, check=True, timeout=5)
    return decode_utf8_lossy(done.stdout)


def _mtime_ms(path: str, bump: dict[str, float], name: str) -> None:
    """walkMtime: a file's mtime (ms), or every non-hidden file's below a directory, raised into bump[name]."""
    try:
        info = os.stat(path)
        if stat.S_ISREG(info.st_mode):
            time = info.st_mtime_ns / 1_000_000
            if time > bump.get(name, 0):
                bump[name] = time
            return
        if not stat.S_ISDIR(info.st_mode):
            return
        with os.scandir(path) as listing:
            children = [entry.name for entry in listing]
    except OSError:
        return
    for child in children:
        if not child.startswith("."):
            _mtime_ms(os.path.join(path, child), bump, name)


def _commit_times(directory: str, env: Mapping[str, str] | None) -> tuple[dict[str, float], list[str]]:
    """Each child's time from the first commit git's log lists touching it, and the uncommitted paths below
    `directory` (relative to it); raises where one of upstream's three git commands fails."""
    edited: dict[str, float] = {}
    commit_time = 0.0
    for line in _git(directory, env, "log", "--format=%x00%ct", "--name-only", "--relative", "--", ".").split("\n"):
        child = line.split("/")[0]
        if line.startswith("\0"):
            commit_time = float(int(line[1:]) * 1000) if line[1:].strip() else 0.0
        elif line and child not in edited:
            edited[child] = commit_time
    prefix = js_trim(_git(directory, env, "rev-parse", "--show-prefix"))
    records = _git(directory, env, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--", ".").split("\0")
    changed = [record[3:] for record in records if js_length(record) > 3]
    return edited, [path[len(prefix) :] for path in changed if path.startswith(prefix)]


def last_edited_by_child(directory: str, names: list[str], env: Mapping[str, str] | None) -> dict[str, float]:
    """lastEditedByChild: commit times, raised by the mtimes of uncommitted files; when git fails (no repository,
    no commit), every entry's newest file mtime alone."""
    try:
        edited, dirty = _commit_times(directory, env)
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired, OSError):
        edited, dirty = {}, names
    for path in dirty:
        _mtime_ms(os.path.normpath(os.path.join(directory, path)), edited, path.split("/")[0])
    return edited


# --- rendering ------------------------------------------------------------------------------------------


def _listing(directory: str) -> list[tuple[str, bool]]:
    """`readdirSync(dir, {withFileTypes: true})` in the file system's order: (name, is a directory) for each
    non-hidden directory and regular file (a symlink is neither, by its own type)."""
    with os.scandir(directory) as entries:
        return [
            (entry.name, entry.is_dir(follow_symlinks=False))
            for entry in entries
            if not entry.name.startswith(".")
            and (entry.is_dir(follow_symlinks=False) or (entry.is_file(follow_symlinks=False) and entry.name != INDEX))
        ]


def _extname(name: str) -> str:
    """node:path's extname of a name that does not start with a dot."""
    dot = name.rfind(".")
    return name[dot:] if dot > 0 else ""


def _entry_lines(
    rel_path: str, full_path: str, shown: list[tuple[str, bool]], profile: Profile
) -> tuple[list[str], list[str]]:
    files, directories = [], []
    for name, is_dir in shown:
        child = os.path.join(full_path, name)
        shown_path = escape_xml_text(f"{rel_path}/{name}")
        if is_dir:
            attr = description_attr(read_index_description(os.path.join(child, INDEX), profile))
            directories.append(f"  <directory{attr}>{shown_path}</directory>")
        else:
            attr = description_attr(read_description(child, profile) if _extname(name) == ".md" else None)
            files.append(f"  <file{attr}>{shown_path}</file>")
    return files, directories


def render_directory(
    memory_dir: str, rel_path: str, full_path: str, profile: Profile, env: Mapping[str, str] | None
) -> str:
    """renderDirectory: the index clamped, then the entries most recently edited first (at most ten)."""
    entries = _listing(full_path)
    edited = last_edited_by_child(full_path, [name for name, _ in entries], env)
    ordered = sorted(entries, key=lambda entry: (-edited.get(entry[0], 0), locale_compare_key(entry[0])))
    files, directories = _entry_lines(rel_path, full_path, ordered[:MEMORY_MAX_ENTRIES], profile)
    tail = [f"Memory directory: {memory_dir}", "Paths in this memory are relative to the memory directory."]
    if files:
        tail += ["", "<memory_files>", *files, "</memory_files>"]
    if directories:
        tail += ["", "<deferred-memory>", *directories, "</deferred-memory>"]
    if len(entries) > MEMORY_MAX_ENTRIES:
        tail += [
            f"[Output truncated: showing {js_grouped(MEMORY_MAX_ENTRIES)} of {js_grouped(len(entries))} entries.]",
            f"[Full listing: {full_path}]",
        ]
    tail_text = "\n".join(tail)
    index_path = os.path.join(full_path, INDEX)
    opening = f'<memory_content path="{escape_xml_text(rel_path).replace(chr(34), "&quot;")}">'
    closing = "</memory_content>"
    if os.path.exists(index_path):
        budget = max(2000, READ_OUTPUT_CHARS - js_length(tail_text) - js_length(opening) - js_length(closing) - 16)
        head = clamp_content(js_trim_end(read_text(index_path)), index_path, budget)
    else:
        head = f"<note>No {INDEX} index in this directory.</note>"
    return f"{opening}\n{head}\n\n{tail_text}\n{closing}"


def render_file(rel_path: str, full_path: str, profile: Profile) -> str:
    """renderFile: the file clamped to what is left of the output budget, its description on the tag."""
    content = js_trim_end(read_text(full_path))
    attr = description_attr(read_description(full_path, profile))
    opening = f'<memory_content path="{escape_xml_text(rel_path).replace(chr(34), "&quot;")}"{attr}>'
    closing = "</memory_content>"
    budget = READ_OUTPUT_CHARS - js_length(opening) - js_length(closing) - 2
    return f"{opening}\n{clamp_content(content, full_path, budget)}\n{closing}"


# --- the tool -------------------------------------------------------------------------------------------


def _find_by_basename(directory: str, name: str, root: str, found: list[str]) -> list[str]:
    """findByBasename: up to five files named `name` below the root's directories (not skills/), walk order."""
    with os.scandir(directory) as listing:
        entries = [
            (entry.name, entry.is_dir(follow_symlinks=False), entry.is_file(follow_symlinks=False)) for entry in listing
        ]
    for entry, is_dir, is_file in entries:
        if len(found) >= 5:
            break
        if entry.startswith(".") or (directory == root and entry == "skills"):
            continue
        path = os.path.join(directory, entry)
        if is_dir:
            _find_by_basename(path, name, root, found)
        elif is_file and entry == name and directory != root:
            found.append(path[len(root) + 1 :])
    return found


def _checked_path(raw: str) -> tuple[str, list[str]]:
    """The path as the tool normalises it, and its segments; refuses what upstream refuses before looking."""
    rel_path = re.sub(r"/+\Z", "", re.sub(r"\A(\./)+", "", raw.replace("\\", "/")))
    if not rel_path or rel_path in (".", INDEX):
        raise MemoryViewRefused("The memory root is already in your context. Pass a directory from <deferred-memory>.")
    if raw.startswith("/") or _DRIVE.match(raw):
        raise MemoryViewRefused('Paths are relative to the memory directory, e.g. "projects".')
    segments = rel_path.split("/")
    if any(segment in ("..", "") or segment.startswith(".") for segment in segments):
        raise MemoryViewRefused(f"Invalid memory path: {raw}")
    if segments[0] == "skills":
        raise MemoryViewRefused(
            f'skills/ is reserved for skills. Use Skill("{segments[1] if len(segments) > 1 else "<name>"}").'
        )
    return rel_path, segments


def _missing(memory_dir: str, rel_path: str, full_path: str, segments: list[str]) -> MemoryViewRefused:
    if not rel_path.endswith(".md") and os.path.exists(f"{full_path}.md"):
        candidates = [f"{rel_path}.md"]
    else:
        candidates = _find_by_basename(memory_dir, segments[-1], memory_dir, [])
    hint = f" Did you mean {' or '.join(candidates)}? Paths are relative to the memory directory." if candidates else ""
    return MemoryViewRefused(f"No memory at {rel_path}.{hint}")


def memory_view(memory_dir: str, path: str, profile: Profile, env: Mapping[str, str] | None = None) -> str:
    """`Memory({path})` for an agent whose memory directory is `memory_dir`; MemoryViewRefused where it throws."""
    if not os.path.exists(os.path.join(memory_dir, INDEX)):  # resolveMemoryToolDirectory: memfs-v2 only
        raise MemoryViewRefused("Memory() is only available for agents with a MemFS v2 memory directory.")
    raw = js_trim(path)
    rel_path, segments = _checked_path(raw)
    full_path = os.path.join(memory_dir, *segments)
    if not os.path.exists(full_path):
        raise _missing(memory_dir, rel_path, full_path, segments)
    real_root, real_target = os.path.realpath(memory_dir), os.path.realpath(full_path)
    if real_target != real_root and not real_target.startswith(real_root + os.sep):
        raise MemoryViewRefused(f"Invalid memory path: {raw}")
    info = os.stat(full_path)
    if len(segments) == 1 and stat.S_ISREG(info.st_mode):
        raise MemoryViewRefused(f"{rel_path} is root core memory and is already in your context.")
    if stat.S_ISDIR(info.st_mode):
        return render_directory(memory_dir, rel_path, full_path, profile, env)
    if not stat.S_ISREG(info.st_mode):
        raise MemoryViewRefused(f"Not a memory file or directory: {rel_path}")
    if info.st_size > MAX_FILE_BYTES:
        raise MemoryViewRefused(f"{rel_path} is too large: {info.st_size} bytes (max {MAX_FILE_BYTES} bytes).")
    with open(full_path, "rb") as handle:
        if b"\0" in handle.read(8000):
            raise MemoryViewRefused(f"{rel_path} is not a text file. Use Read on {full_path} instead.")
    return render_file(rel_path, full_path, profile)
