"""The memfs-v2 rendering described by the spec (chapter 8), not in any npm release.

Root `*.md` files become `<label>` blocks, the root `MEMORY.md` a `<memory>` block whose
`<deferred-memory>` lists first-level `<dir>/MEMORY.md` indexes by path only.
"""

from __future__ import annotations

import re

from .quirks import js_trim, js_trim_end
from .render_v1 import MemoryFile

CHILD_INDEX = re.compile(r"[^/]+/MEMORY\.md\Z")


def is_v2_repository(paths: list[str]) -> bool:
    """Format is decided by the committed tree: a root `MEMORY.md` means memfs-v2."""
    return "MEMORY.md" in paths


def v2_reads_body(relative_path: str) -> bool:
    """Only root files and first-level indexes are read (`git show`); the rest are listed by path."""
    return "/" not in relative_path or bool(CHILD_INDEX.match(relative_path))


def escape_xml_attribute(value: str) -> str:
    """`escapeXmlAttribute`: the five XML special characters (spec 8.4; exact set assumed, see docs/quirks.md)."""
    return (
        value.replace("&", "&amp;")
        .replace('"', "&quot;")
        .replace("'", "&apos;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
    )


def render_memfs_v2(files: list[MemoryFile]) -> str:
    """`renderRootMemoryProjection` on files already sorted by label."""
    root_files = [f for f in files if "/" not in f.relative_path and f.relative_path != "MEMORY.md"]
    root_index = next((f for f in files if f.relative_path == "MEMORY.md"), None)
    child_indexes = [f for f in files if CHILD_INDEX.match(f.relative_path)]
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
