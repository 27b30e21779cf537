"""Writing an expectations file back (harness.run.expectations owns the format and its reading): one order
whatever order the entries were read in (case entries by case, then broad ones; references in release order),
keys in one order, values quoted only where YAML would misread them, reasons always double-quoted, so writing
what was read changes nothing (`conformance expectations update`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

import yaml

from harness.core.reference import release_key
from harness.run.expectations import Expectation

_PLAIN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.@:/+-]*$")


def _scalar(text: str, quote: bool = False) -> str:
    """A YAML scalar that reads back as `text`: plain where that is safe, else double-quoted with escapes."""
    if not quote and _PLAIN.match(text) and not text.endswith(":") and yaml.safe_load(text) == text:
        return text
    out = []
    for char in text:
        code = ord(char)
        if char in '"\\':
            out.append("\\" + char)
        elif char == "\n":
            out.append("\\n")
        elif char == "\t":
            out.append("\\t")
        elif 0x20 <= code < 0x7F or (
            code > 0xA0 and code not in (0x2028, 0x2029, 0xFEFF, 0xFFFE, 0xFFFF) and not 0xD800 <= code < 0xE000
        ):
            out.append(char)
        elif code <= 0xFF:
            out.append(f"\\x{code:02X}")
        elif code <= 0xFFFF:
            out.append(f"\\u{code:04X}")
        else:
            out.append(f"\\U{code:08X}")
    return '"' + "".join(out) + '"'


def _flow(items: tuple[str, ...]) -> str:
    return "[" + ", ".join(_scalar(item) for item in items) + "]"


def entry_key(entry: Expectation) -> tuple[Any, ...]:
    """The order entries are written in: case entries by case, then broad ones, each then by reference (release
    order) and profile."""
    return (
        entry.selector[0] != "case",
        entry.selector,
        [release_key(label) for label in entry.labels],
        entry.profiles,
        entry.fields,
        entry.error or "",
    )


def dump_expectations(
    implementation: str | None, entries: Iterable[Expectation], description: str | None = None, name: str | None = None
) -> str:
    """The file's text: entries sorted (entry_key), keys in one order, values quoted only where needed."""
    lines = [f"implementation: {_scalar(implementation)}"] if implementation else []
    if name:
        lines.append(f"name: {_scalar(name)}")
    if description is not None:
        lines.append(f"description: {_scalar(description, quote=True)}")
    ordered = sorted(entries, key=entry_key)
    lines.append("expectations:" + ("" if ordered else " []"))
    for entry in ordered:
        key, value = entry.selector
        lines.append(f"  - {key}: {_scalar(value, quote=key == 'cases')}")
        if entry.references:
            lines.append(f"    references: {_flow(entry.references)}")
        if entry.profiles:
            lines.append(f"    profiles: {_flow(entry.profiles)}")
        if entry.fields:
            lines.append(f"    fields: {_flow(entry.fields)}")
        if entry.error is not None:
            lines.append(f"    error: {_scalar(entry.error, quote=True) if entry.error else 'true'}")
        lines.append(f"    kind: {_scalar(entry.kind)}")
        lines.append(f"    reason: {_scalar(entry.reason, quote=True)}")
        if entry.link is not None:
            lines.append(f"    link: {_scalar(entry.link)}")
    return "\n".join(lines) + "\n"
