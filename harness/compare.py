"""Byte comparison of compile records: which fields differ, where, and what the bytes around it are."""

from __future__ import annotations

import hashlib
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from deepdiff import DeepDiff

from .runners.base import Outcome

COMPARED_FIELDS = ("content", "coreMemory", "compiledAt", "rawSystemHash", "memfsRevision")
ABSENT = "<absent>"
CONTEXT_BYTES = 48
SUMMARY_CHARS = 2048  # longer strings are summarised in structured diffs

_GLYPHS = {
    "\t": "␉", "\n": "␊\n", "\r": "␍", "\x0b": "␋", "\x0c": "␌", "\x00": "␀", "\x7f": "␡",
    "\ufeff": "⟨BOM⟩", "\u00a0": "⟨NBSP⟩", "\ufffd": "⟨U+FFFD⟩", "\u2028": "⟨LS⟩", "\u2029": "⟨PS⟩",
    "\u0085": "⟨NEL⟩", "\u200b": "⟨ZWSP⟩", "\u3000": "⟨IDSP⟩",
}  # fmt: skip
_NAMES = {"\t": "TAB", "\ufeff": "BOM", "\u00a0": "NBSP", "\ufffd": "U+FFFD", "\u2028": "LS", "\u2029": "PS",
          "\u0085": "NEL", "\u200b": "ZWSP", "\u3000": "IDSP", "\x7f": "DEL"}  # fmt: skip
_C0 = ("NUL", "SOH", "STX", "ETX", "EOT", "ENQ", "ACK", "BEL", "BS", "HT", "LF", "VT", "FF", "CR", "SO", "SI", "DLE",
       "DC1", "DC2", "DC3", "DC4", "NAK", "SYN", "ETB", "CAN", "EM", "SUB", "ESC", "FS", "GS", "RS", "US")  # fmt: skip
_HIDDEN_CATEGORIES = ("Cf", "Cc", "Zl", "Zp", "Zs", "Cs", "Co", "Cn")


def invisible(text: str, index: int) -> tuple[str, str] | None:
    """(terminal glyph, short name) when text[index] would not show as itself, else None.

    Covers C0 controls and DEL, BOM, NBSP, U+FFFD, the other format/space/separator/surrogate
    characters, and a space that ends a line (names: `CR`, `LF`, `TAB`, `BOM`, `NBSP`, `SP`...).
    """
    ch = text[index]
    if ch == " ":
        if index + 1 == len(text) or text[index + 1] in "\r\n":
            return "·", "SP"
        return None
    code = ord(ch)
    if code < 0x20:
        return _GLYPHS.get(ch, chr(0x2400 + code)), _NAMES.get(ch, _C0[code])
    if ch in _GLYPHS:
        return _GLYPHS[ch], _NAMES[ch]
    if unicodedata.category(ch) in _HIDDEN_CATEGORIES:
        return f"⟨U+{code:04X}⟩", f"U+{code:04X}"
    return None


def visible(text: str) -> str:
    """Text with invisible characters as glyphs (␍ for CR, ⟨BOM⟩, · for a trailing space...)."""
    out = []
    for index, ch in enumerate(text):
        shown = invisible(text, index)
        out.append(shown[0] if shown else ch)
    return "".join(out)


def first_difference(left: Sequence[Any], right: Sequence[Any]) -> int | None:
    """Index of the first differing item (bytes or str), the shorter length when one is a prefix, None when equal.

    Compares blocks by slicing first, so a difference near the end of a multi-megabyte value is
    found without a Python-level loop over every item.
    """
    if left == right:
        return None
    start, block = 0, 4096
    while left[start : start + block] == right[start : start + block]:
        start += block
    for index in range(start, min(start + block, len(left), len(right))):
        if left[index] != right[index]:
            return index
    return min(len(left), len(right))


def first_diff_offset(left: bytes, right: bytes) -> int | None:
    """Offset of the first differing byte, the shorter length when one is a prefix, None when equal."""
    return first_difference(left, right)


def as_bytes(value: Any) -> bytes:
    if value is None:
        return ABSENT.encode()
    text = value if isinstance(value, str) else repr(value)
    return text.encode("utf-8", "surrogatepass")


def around(data: bytes, offset: int, width: int = CONTEXT_BYTES) -> str:
    """The bytes around offset, decoded leniently and made visible."""
    start = max(0, offset - width)
    return visible(data[start : offset + width].decode("utf-8", "replace"))


@dataclass(frozen=True)
class FieldDiff:
    field: str
    reference: Any
    port: Any
    offset: int | None  # first differing byte in the UTF-8 encodings

    def to_json(self) -> dict[str, Any]:
        ref_bytes, port_bytes = as_bytes(self.reference), as_bytes(self.port)
        offset = self.offset or 0
        return {
            "field": self.field,
            "offset": self.offset,
            "reference_bytes": len(ref_bytes),
            "port_bytes": len(port_bytes),
            "reference_context": around(ref_bytes, offset),
            "port_context": around(port_bytes, offset),
        }


def outcome_value(outcome: Outcome, field: str) -> Any:
    return (outcome.record or {}).get(field)


# How each field was compared (CaseResult.compared, report.json `compared_fields`):
BOTH = "compared"  # both records have it: compared byte for byte
ABSENT_BOTH = "compared-as-absent"  # neither has it (0.25.x has no coreMemory): the port must not have it either
REFERENCE_ONLY = "reference-only"  # a difference: the port lacks a field the reference returns
PORT_ONLY = "port-only"  # a difference: the port returns a field the reference does not
THROWN = "thrown"  # one side or both threw: the records are not compared field by field


def field_presence(reference: Outcome, port: Outcome, fields: tuple[str, ...] = COMPARED_FIELDS) -> dict[str, str]:
    """For every compared field, how it was compared. Absent fields are compared, never skipped:
    absence on both sides is agreement, absence on one side is a difference."""
    if reference.status == "thrown" or port.status == "thrown":
        return dict.fromkeys(fields, THROWN)
    ref_record, port_record = reference.record or {}, port.record or {}
    states = {}
    for name in fields:
        in_ref, in_port = name in ref_record, name in port_record
        states[name] = (
            BOTH
            if in_ref and in_port
            else ABSENT_BOTH
            if not (in_ref or in_port)
            else (REFERENCE_ONLY if in_ref else PORT_ONLY)
        )
    return states


def compare_outcomes(reference: Outcome, port: Outcome, fields: tuple[str, ...] = COMPARED_FIELDS) -> list[FieldDiff]:
    """Field differences between two outcomes that both ran (status ok or thrown).

    A field one record has and the other lacks is a difference even when its value is null:
    absent and null are different JSON (field_presence says how each field was compared)."""
    if reference.status == "thrown" or port.status == "thrown":
        if reference.status == port.status:
            return []  # both threw: upstream's message is not part of the contract
        return [FieldDiff("thrown", reference.thrown, port.thrown, 0)]
    diffs = []
    ref_record, port_record = reference.record or {}, port.record or {}
    for name in fields:
        ref_value, port_value = ref_record.get(name), port_record.get(name)
        if ref_value != port_value or (name in ref_record) != (name in port_record):
            ref_bytes = as_bytes(ref_value) if name in ref_record else ABSENT.encode()
            port_bytes = as_bytes(port_value) if name in port_record else ABSENT.encode()
            offset = first_diff_offset(ref_bytes, port_bytes)
            diffs.append(FieldDiff(name, ref_value, port_value, 0 if offset is None else offset))
    return diffs


def structured_diff(reference: dict[str, Any] | None, port: dict[str, Any] | None) -> str:
    """A deepdiff of two records, for the report (long strings are summarised, not dumped)."""
    diff = DeepDiff(_summarised(reference or {}), _summarised(port or {}), verbose_level=2, max_diffs=200)
    return diff.to_json(indent=1) if diff else ""


def _summarised(value: Any) -> Any:
    """Strings over SUMMARY_CHARS become head + length + sha256 + tail: a difference still shows, a copy does not."""
    if isinstance(value, dict):
        return {k: _summarised(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_summarised(v) for v in value]
    if isinstance(value, str) and len(value) > SUMMARY_CHARS:
        digest = hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()[:16]
        half = SUMMARY_CHARS // 2
        return f"{value[:half]}…⟨{len(value)} chars, sha256 {digest}…⟩…{value[-half:]}"
    return value


def render_field_diff(diff: FieldDiff) -> str:
    """A readable text block for terminals and pytest: offset, both sides around it."""
    info = diff.to_json()
    return (
        f"{diff.field}: first difference at byte {diff.offset} "
        f"(reference {info['reference_bytes']} bytes, port {info['port_bytes']} bytes)\n"
        f"  reference: …{info['reference_context']}…\n"
        f"  port:      …{info['port_context']}…"
    )
