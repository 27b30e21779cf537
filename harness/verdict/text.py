"""Showing bytes to people: invisible characters as named glyphs, the first differing index, context around it.

Owns how a value becomes bytes for a diff (`as_bytes`, with ABSENT for a value a side lacks) and how
those bytes are made readable; standard library only.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from typing import Any

#: What a value a side does not have at all reads as, in byte diffs and in messages.
ABSENT = "<absent>"

CONTEXT_BYTES = 48


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
