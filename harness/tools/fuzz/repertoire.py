"""The characters `conformance fuzz` writes: Unicode's whole assigned repertoire, from ICU's own tables.

Which code points are assigned, their general category, the Unicode version that encoded them (age) and
whether they are Han come from the ICU that the PyPI package icu4py bundles (ICU 78.3, Unicode 17.0, the
ICU of bun 1.4.5), read through ctypes from its libicuuc (`u_enumCharTypes`, `u_charAge`, `uscript_getScript`).
Python's own unicodedata is Unicode 14.0 in Python 3.11: it lacks the 15,000-odd characters of Unicode 15.0
to 17.0 (CJK Extensions H, I and J, Garay, Sunuwar, Kirat Rai, Tulu-Tigalari, recent emoji, ...), which are
where ICU's collation changes most. The harness reads ICU here itself: it does not import the code it tests
(memfs_prompt.collation uses the same libraries for the port's collation).

`limit_version` caps the repertoire at the reference runtime's Unicode version (bun 1.4.5: 17.0; the wheels'
Node 22.19.0: 16.0), so that a character the runtime does not know is not drawn. Draws are weighted toward
what collation orders differently: characters encoded since Unicode 10, Han (radical-stroke order, the CJK
extensions and compatibility ideographs), combining sequences (a base and one to three marks; canonically
equivalent spellings compare equal), noncharacters (U+FDD0..U+FDEF and U+xFFFE/U+xFFFF of every plane, which
are unassigned but valid in strings and file names) and private use.
"""

from __future__ import annotations

import ctypes
import functools
import importlib.util
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

_PACKAGE = "icu4py"
_LIBRARY_GLOBS = ("icu4py.libs/libicuuc*", "icu4py/.dylibs/libicuuc*", "icu4py/libicuuc*")
_MAJOR = re.compile(r"libicuuc[^/]*?[.-](\d{2,3})(?:\.\d+)*(?:\.so|\.dylib)?$")

# ICU's UCharCategory values (unicode/uchar.h) the repertoire sorts by
UNASSIGNED, PRIVATE_USE, SURROGATE = 0, 17, 18
MARKS = frozenset((6, 7, 8))  # Mn, Me, Mc
_USCRIPT_HAN = 17
RECENT = (10, 0)  # "recent": encoded after Unicode 9, the last version pyuca's table (UCA 9.0) knew
NONCHARACTERS = tuple(range(0xFDD0, 0xFDF0)) + tuple(p << 16 | low for p in range(17) for low in (0xFFFE, 0xFFFF))


class RepertoireUnavailable(RuntimeError):
    """icu4py's ICU libraries cannot be loaded."""


def _library() -> tuple[ctypes.CDLL, str]:
    spec = importlib.util.find_spec(_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise RepertoireUnavailable(f"{_PACKAGE} is not installed (pip install the version pyproject.toml pins)")
    site = Path(next(iter(spec.submodule_search_locations))).parent
    found = sorted(p for pattern in _LIBRARY_GLOBS for p in site.glob(pattern))
    if not found:
        raise RepertoireUnavailable(f"no libicuuc in {_PACKAGE}'s install under {site}")
    library = ctypes.CDLL(str(found[0]))
    match = _MAJOR.search(found[0].name)
    for suffix in ([f"_{match[1]}"] if match else []) + [""]:
        if hasattr(library, "u_charType" + suffix):
            return library, suffix
    raise RepertoireUnavailable(f"{found[0]} exports no u_charType")


def _function(name: str, restype: Any, *argtypes: Any) -> Any:
    library, suffix = _library_cached()
    function = library[name + suffix]
    function.restype, function.argtypes = restype, list(argtypes)
    return function


@functools.cache
def _library_cached() -> tuple[ctypes.CDLL, str]:
    return _library()


@dataclass(frozen=True)
class Run:
    """Consecutive code points of one category, one age and one Han-ness."""

    start: int
    end: int  # inclusive
    category: int
    age: tuple[int, int]
    han: bool


def icu_unicode_version() -> tuple[int, int]:
    """The Unicode version of icu4py's ICU (17.0 for ICU 78.3)."""
    raw = (ctypes.c_uint8 * 4)()
    _function("u_getUnicodeVersion", None, ctypes.c_void_p)(raw)
    return raw[0], raw[1]


@functools.cache
def runs() -> tuple[Run, ...]:
    """Every assigned code point (category other than Cn), as runs; surrogates and private use included."""
    ranges: list[tuple[int, int, int]] = []
    callback_type = ctypes.CFUNCTYPE(ctypes.c_int8, ctypes.c_void_p, ctypes.c_int32, ctypes.c_int32, ctypes.c_int)

    def collect(_context: Any, start: int, limit: int, category: int) -> int:
        if category != UNASSIGNED:
            ranges.append((start, limit, category))
        return 1

    callback = callback_type(collect)
    _function("u_enumCharTypes", None, callback_type, ctypes.c_void_p)(callback, None)
    char_age = _function("u_charAge", None, ctypes.c_int32, ctypes.c_void_p)
    script = _function("uscript_getScript", ctypes.c_int, ctypes.c_int32, ctypes.POINTER(ctypes.c_int))
    raw, status = (ctypes.c_uint8 * 4)(), ctypes.c_int(0)
    out: list[Run] = []
    for start, limit, category in ranges:
        if category in (PRIVATE_USE, SURROGATE):  # one age each (private use: 1.1 and 2.0), never Han
            char_age(start, raw)
            out.append(Run(start, limit - 1, category, (raw[0], raw[1]), False))
            continue
        current: Run | None = None
        for code in range(start, limit):
            char_age(code, raw)
            age, han = (raw[0], raw[1]), script(code, ctypes.byref(status)) == _USCRIPT_HAN
            if current is not None and current.age == age and current.han == han:
                current = Run(current.start, code, category, age, han)
                continue
            if current is not None:
                out.append(current)
            current = Run(code, code, category, age, han)
        if current is not None:
            out.append(current)
    return tuple(out)


_limit: list[tuple[int, int] | None] = [None]


def limit_version(version: tuple[int, int] | None) -> None:
    """Draw only characters encoded up to `version` (the reference runtime's Unicode version; None: ICU's)."""
    _limit[0] = version


def parse_version(text: object) -> tuple[int, int] | None:
    """`"16.0"` -> (16, 0); anything else None."""
    found = re.match(r"(\d+)\.(\d+)", text) if isinstance(text, str) else None
    return (int(found[1]), int(found[2])) if found else None


@functools.cache
def _pools(limit: tuple[int, int]) -> dict[str, tuple[tuple[int, int], ...]]:
    """(start, end) ranges per kind of draw, for characters encoded up to `limit`."""
    known = [r for r in runs() if r.age <= limit]
    text = [r for r in known if r.category != SURROGATE]
    return {
        "any": tuple((r.start, r.end) for r in text),
        "recent": tuple((r.start, r.end) for r in text if r.age >= RECENT),
        "han": tuple((r.start, r.end) for r in text if r.han),
        "mark": tuple((r.start, r.end) for r in text if r.category in MARKS),
        "base": tuple((r.start, r.end) for r in text if r.category in (1, 2, 5) and r.start >= 0x41),  # Lu Ll Lo
        "surrogate": tuple((r.start, r.end) for r in known if r.category == SURROGATE),
    }


def pools() -> dict[str, tuple[tuple[int, int], ...]]:
    return _pools(_limit[0] or icu_unicode_version())


_index = st.integers(0, 1 << 30)
_offset = st.integers(0, 1 << 30)


def _code(draw: st.DrawFn, kind: str) -> int:
    """A code point of one kind: a run chosen uniformly (so small scripts are not swamped by Han and private
    use), then a code point in it."""
    ranges = pools()[kind]
    start, end = ranges[draw(_index) % len(ranges)]
    return start + draw(_offset) % (end - start + 1)


_kind = st.integers(0, 15)
_marks = st.integers(1, 3)
_noncharacter = st.sampled_from(NONCHARACTERS)


def _piece(draw: st.DrawFn) -> str:
    """One character or combining sequence, weighted toward what collation orders differently."""
    kind = draw(_kind)
    if kind < 4:
        return chr(_code(draw, "recent"))
    if kind < 7:
        return chr(_code(draw, "han"))
    if kind < 9:  # a base letter and one to three marks (any order: canonical reordering matters)
        return chr(_code(draw, "base")) + "".join(chr(_code(draw, "mark")) for _ in range(draw(_marks)))
    if kind < 10:
        return chr(draw(_noncharacter))
    if kind < 11:
        return draw(st.sampled_from("aZ_-.09 $"))
    return chr(_code(draw, "any"))


_lengths = st.integers(1, 4)


@st.composite
def unicode_text(draw: st.DrawFn) -> str:
    """One to four pieces of the repertoire (no surrogate): text a file name, a label or a skill name can hold."""
    return "".join(_piece(draw) for _ in range(draw(_lengths)))


_unit_kind = st.integers(0, 9)


@st.composite
def js_text(draw: st.DrawFn) -> str:
    """`unicode_text`, sometimes with a lone surrogate in it or an astral character written as its two UTF-16
    code units (what a YAML `"\\ud83e\\udd80"` escape gives; harness.cases.inputs.js_string joins them)."""
    text = draw(unicode_text())
    kind = draw(_unit_kind)
    if kind == 0:  # a lone surrogate, before or after
        lone = chr(_code(draw, "surrogate"))
        return lone + text if draw(st.booleans()) else text + lone
    if kind == 1:  # the first astral character as two code units
        for index, char in enumerate(text):
            if ord(char) > 0xFFFF:
                high, low = divmod(ord(char) - 0x10000, 0x400)
                units = chr(0xD800 + high) + chr(0xDC00 + low)
                return text[:index] + units + text[index + 1 :]
    return text
