"""memfs-v2 as letta-code 0.33.3 and later render it (spec chapter 8; the release wins where they differ).

A committed root `MEMORY.md` switches the repository to memfs-v2 (`collectCommittedMemoryFiles`,
`src/agent/memory-format.ts`). Root `*.md` files become `<label>` blocks; the root `MEMORY.md`
becomes a `<memory>` block whose `<deferred-memory>` lists the first-level `<dir>/MEMORY.md`
indexes by path only. Only root files and projected first-level indexes are read (`git show`);
every other path is listed with an empty body. Nothing under `skills/` is projected.
"""

from __future__ import annotations

import re
from collections.abc import Collection

from .quirks import js_trim, js_trim_end, locale_compare_key
from .render_v1 import MemoryFile

CHILD_INDEX = re.compile(r"[^/]+/MEMORY\.md\Z")


def is_v2_repository(paths: list[str]) -> bool:
    """Format is decided by the committed tree: a root `MEMORY.md` means memfs-v2."""
    return "MEMORY.md" in paths


def is_root_memory_path(relative_path: str) -> bool:
    """`isCoreMemoryPath(path, "memfs-v2")`: a `.md` file at the repository's root."""
    normalized = relative_path.replace("\\", "/")
    return normalized.endswith(".md") and "/" not in normalized


def is_projected_path(relative_path: str, all_paths: Collection[str]) -> bool:
    """`isProjectedMemoryPath(path, allPaths, "memfs-v2")`: not under `skills/`, and every directory
    above the file has its own committed `MEMORY.md`."""
    normalized = relative_path.replace("\\", "/")
    if normalized == "skills" or normalized.startswith("skills/"):
        return False
    parts = normalized.split("/")[:-1]
    current = ""
    for directory in parts:
        current = f"{current}/{directory}" if current else directory
        if f"{current}/MEMORY.md" not in all_paths:
            return False
    return True


def is_child_index(relative_path: str, all_paths: Collection[str]) -> bool:
    """A first-level `<dir>/MEMORY.md` that is projected (so never `skills/MEMORY.md`)."""
    return bool(CHILD_INDEX.match(relative_path)) and is_projected_path(relative_path, all_paths)


def v2_reads_body(relative_path: str, all_paths: Collection[str]) -> bool:
    """`shouldRead`: root files and projected first-level indexes; the rest are listed by path."""
    return is_root_memory_path(relative_path) or is_child_index(relative_path, all_paths)


def escape_xml_attribute(value: str) -> str:
    """`escapeXmlAttribute`: `&`, `"`, `'` (as `&#x27;`), `<`, `>`."""
    return (
        value.replace("&", "&amp;")
        .replace('"', "&quot;")
        .replace("'", "&#x27;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
    )


def render_memfs_v2(files: list[MemoryFile]) -> str:
    """`renderRootMemoryProjection`: root blocks by label, then `<memory>`; child indexes by path."""
    all_paths = {f.relative_path for f in files}
    root_files = [f for f in files if is_root_memory_path(f.relative_path) and f.relative_path != "MEMORY.md"]
    root_files.sort(key=lambda f: locale_compare_key(f.label))
    root_index = next((f for f in files if f.relative_path == "MEMORY.md"), None)
    child_indexes = [f for f in files if is_child_index(f.relative_path, all_paths)]
    child_indexes.sort(key=lambda f: locale_compare_key(f.relative_path))
    blocks: list[str] = []
    for file in root_files:
        lines = [f"<{file.label}>"]
        description = js_trim(file.description)
        if description:
            lines.append(f"<description>{description}</description>")
        value = js_trim_end(file.value)
        if value:
            lines.append(value)
        lines.append(f"</{file.label}>")
        blocks.append("\n".join(lines))
    if root_index is not None:
        lines = ["<memory>"]
        value = js_trim_end(root_index.value)
        if value:
            lines.append(value)
        if child_indexes:
            lines.append("<deferred-memory>")
        for file in child_indexes:
            escaped = escape_xml_attribute(file.relative_path[: -len("/MEMORY.md")])
            lines.append(f'<directory path="{escaped}/" index="{escaped}/MEMORY.md" />')
        if child_indexes:
            lines.append("</deferred-memory>")
        lines.append("</memory>")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)
