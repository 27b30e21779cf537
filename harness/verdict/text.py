"""Showing bytes to people: invisible characters as named glyphs, the first differing index, context around it.

Owns how a value becomes bytes for a diff (`as_bytes`: ABSENT for a value a side lacks, `null` for a null) and how
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
    "\t": "␉",
    "\n": "␊\n",
    "\r": "␍",
    "\x0b": "␋",
    "\x0c": "␌",
    "\x00": "␀",
    "\x7f": "␡",
    "\ufeff": "⟨BOM⟩",
    "\u00a0": "⟨NBSP⟩",
    "\ufffd": "⟨U+FFFD⟩",
    "\u2028": "⟨LS⟩",
    "\u2029": "⟨PS⟩",
    "\u0085": "⟨NEL⟩",
    "\u200b": "⟨ZWSP⟩",
    "\u3000": "⟨IDSP⟩",
}


_NAMES = {
    "\t": "TAB",
    "\ufeff": "BOM",
    "\u00a0": "NBSP",
    "\ufffd": "U+FFFD",
    "\u2028": "LS",
    "\u2029": "PS",
    "\u0085": "NEL",
    "\u200b": "ZWSP",
    "\u3000": "IDSP",
    "\x7f": "DEL",
}


#: the C0 control characters' names, by code point (U+0000 to U+001F)
_C0 = (
    "NUL",
    "SOH",
    "STX",
    "ETX",
    "EOT",
    "ENQ",
    "ACK",
    "BEL",
    "BS",
    "HT",
    "LF",
    "VT",
    "FF",
    "CR",
    "SO",
    "SI",
    "DLE",
    "DC1",
    "DC2",
    "DC3",
    "DC4",
    "NAK",
    "SYN",
    "ETB",
    "CAN",
    "EM",
    "SUB",
    "ESC",
    "FS",
    "GS",
    "RS",
    "US",
)


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


def as_bytes(value: Any, present: bool = True) -> bytes:
    """A value's bytes in a diff: ABSENT when the side does not have it at all (`present` False), `null`
    for a JSON null it has (null and absent differ), a string's UTF-8, anything else's repr."""
    if not present:
        return ABSENT.encode()
    if value is None:
        return b"null"
    text = value if isinstance(value, str) else repr(value)
    return text.encode("utf-8", "surrogatepass")


def char_start(data: bytes, offset: int) -> int:
    """The start of the UTF-8 character that holds byte `offset` (at most three continuation bytes back)."""
    start = min(max(offset, 0), len(data))
    for _ in range(3):
        if 0 < start < len(data) and 0x80 <= data[start] < 0xC0:
            start -= 1
    return start if start == len(data) or not 0x80 <= data[start] < 0xC0 else min(max(offset, 0), len(data))


def char_end(data: bytes, offset: int) -> int:
    """The first character boundary at or after byte `offset`."""
    end = min(max(offset, 0), len(data))
    for _ in range(3):
        if end < len(data) and 0x80 <= data[end] < 0xC0:
            end += 1
    return end


def readable(data: bytes) -> str:
    """Bytes as text; a byte that is not UTF-8 reads `\\xff` (a real U+FFFD reads ⟨U+FFFD⟩, never confused)."""
    return data.decode("utf-8", "backslashreplace")


def around(data: bytes, offset: int, width: int = CONTEXT_BYTES) -> str:
    """About `width` bytes each side of offset, cut at character boundaries, made visible."""
    start, end = char_start(data, offset - width), char_end(data, offset + width)
    return visible(readable(data[start:end]))


def char_name(ch: str) -> str:
    """`U+0020 SPACE`, `U+000D CR (control)`, `U+D800 (surrogate)`."""
    code = ord(ch)
    if code < 0x20 or code == 0x7F:
        return f"U+{code:04X} {_C0[code] if code < 0x20 else 'DEL'} (control)"
    return f"U+{code:04X} {unicodedata.name(ch, '(' + unicodedata.category(ch) + ')')}"


def _char_at(data: bytes, start: int) -> str:
    """What starts at byte `start`: a character's name, `a byte 0xFF that is not UTF-8`, or `the end`."""
    if start >= len(data):
        return "the end (no more bytes)"
    for size in (1, 2, 3, 4):
        try:
            return char_name(data[start : start + size].decode("utf-8", "surrogatepass"))
        except UnicodeDecodeError:
            continue
    return f"byte 0x{data[start]:02X} (not UTF-8)"


def describe_difference(
    reference: bytes, impl: bytes, offset: int, *, reference_present: bool = True, impl_present: bool = True
) -> str:
    """The first differing characters, named: `reference U+0020 SPACE, implementation U+0062 LATIN SMALL LETTER B`.

    Starts at the character that holds byte `offset` (both sides share the bytes before it).
    """
    start = char_start(reference if len(reference) > offset else impl, offset)
    left = _char_at(reference, start) if reference_present else "absent (no such field)"
    right = _char_at(impl, start) if impl_present else "absent (no such field)"
    return f"reference {left}, implementation {right}"
