"""JavaScript `a.localeCompare(b)` as bun runs it: ICU's root collation (bun's ICU 78.3, Unicode 17).

Upstream sorts labels, memfs-v2 root files and child indexes, and skill names with
`localeCompare`. Under bun (JavaScriptCore) that is `Intl.Collator()` with its defaults: locale
en-US (no tailoring: ICU's root), usage "sort", sensitivity "variant" (ICU tertiary strength),
no case level, case first off, not numeric, punctuation not ignored (non-ignorable), and ICU's
normalization mode on (ECMA-402: canonically equivalent strings compare equal). bun ignores
LANG/LC_ALL here (docs/quirks.md).

The ICU is the one the PyPI package icu4py (pinned in pyproject.toml) bundles: its shared
libraries are loaded with ctypes and the collator's sort keys (`ucol_getSortKey`) compared as
bytes, which orders exactly as `ucol_strcoll`. ICU's C symbols carry the major version
(`ucol_open_78`); it is read from the library's file name. `ICU_VERSION`, `UNICODE_VERSION` and
`info()` say which ICU the port uses (reports record it).

All-ASCII strings (nearly every label) take a fast path that builds the same bytes without a
foreign call: ICU's per-character weights for the 128 ASCII characters (read from ICU once)
concatenated level by level, with ICU's sort-key compression of common secondary and tertiary
weights. tests/test_collation.py checks it against ICU's own keys.
"""

from __future__ import annotations

import ctypes
import functools
import importlib.util
import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# ICU's UColAttribute and UColAttributeValue (unicode/ucol.h).
_UCOL_ALTERNATE_HANDLING, _UCOL_CASE_FIRST, _UCOL_CASE_LEVEL, _UCOL_NORMALIZATION_MODE = 1, 2, 3, 4
_UCOL_STRENGTH, _UCOL_NUMERIC_COLLATION = 5, 7
_UCOL_TERTIARY, _UCOL_OFF, _UCOL_ON, _UCOL_NON_IGNORABLE = 2, 16, 17, 21

# What JavaScriptCore's IntlCollator sets for `new Intl.Collator()` (sensitivity "variant").
JSC_DEFAULT_ATTRIBUTES = (
    (_UCOL_STRENGTH, _UCOL_TERTIARY),
    (_UCOL_CASE_LEVEL, _UCOL_OFF),
    (_UCOL_CASE_FIRST, _UCOL_OFF),
    (_UCOL_NUMERIC_COLLATION, _UCOL_OFF),
    (_UCOL_ALTERNATE_HANDLING, _UCOL_NON_IGNORABLE),
    (_UCOL_NORMALIZATION_MODE, _UCOL_ON),
)
LOCALE = "en-US"  # bun's resolvedOptions().locale; ICU has no en-US tailoring, so this is root

_PACKAGE = "icu4py"
_LIBRARY_GLOBS = ("icu4py.libs/libicui18n*", "icu4py/.dylibs/libicui18n*", "icu4py/libicui18n*")
_MAJOR_IN_NAME = re.compile(r"libicui18n[^/]*?[.-](\d{2,3})(?:\.\d+)*(?:\.so|\.dylib)?$")


class CollationUnavailable(RuntimeError):
    """The pinned ICU (icu4py's bundled libraries) cannot be loaded."""


def _library_path() -> Path:
    spec = importlib.util.find_spec(_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise CollationUnavailable(f"{_PACKAGE} is not installed (pip install the version pyproject.toml pins)")
    site = Path(next(iter(spec.submodule_search_locations))).parent
    found = sorted(p for pattern in _LIBRARY_GLOBS for p in site.glob(pattern))
    if not found:
        raise CollationUnavailable(f"no libicui18n in {_PACKAGE}'s install under {site}")
    return found[0]


def _symbol_suffix(library: ctypes.CDLL, path: Path) -> str:
    """`_78` for ICU 78's renamed symbols, or "" for an ICU built without renaming."""
    match = _MAJOR_IN_NAME.search(path.name)
    candidates = ([f"_{match[1]}"] if match else []) + [""]
    for suffix in candidates:
        if hasattr(library, "ucol_open" + suffix):
            return suffix
    raise CollationUnavailable(f"{path} exports no ucol_open (tried suffixes {candidates})")


@dataclass(frozen=True)
class _Icu:
    collator: ctypes.c_void_p
    sort_key: Any  # ucol_getSortKey
    icu_version: str
    unicode_version: str
    uca_version: str
    collator_version: str
    library: str


def _version_string(raw: ctypes.Array[ctypes.c_uint8]) -> str:
    parts = list(raw)
    while len(parts) > 2 and parts[-1] == 0:
        parts.pop()
    return ".".join(map(str, parts))


@functools.cache
def _library() -> tuple[ctypes.CDLL, str, Path]:
    path = _library_path()
    try:
        i18n = ctypes.CDLL(str(path))  # loads libicuuc and libicudata beside it (RPATH $ORIGIN)
    except OSError as error:
        raise CollationUnavailable(f"cannot load {path}: {error}") from None
    return i18n, _symbol_suffix(i18n, path), path


def icu_function(name: str, restype: Any, *argtypes: Any) -> Any:
    """A C function of the pinned ICU by its unversioned name (`u_charType`), typed for ctypes."""
    i18n, suffix, _ = _library()
    function = i18n[name + suffix]  # a fresh function object; dlsym on libicui18n also finds libicuuc's symbols
    function.restype, function.argtypes = restype, list(argtypes)
    return function


@functools.cache
def _icu() -> _Icu:
    fn, path = icu_function, _library()[2]
    status = ctypes.c_int(0)
    open_collator = fn("ucol_open", ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_int))
    set_attribute = fn("ucol_setAttribute", None, ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_void_p)
    collator = ctypes.c_void_p(open_collator(LOCALE.encode("ascii"), ctypes.byref(status)))
    if status.value > 0 or not collator.value:  # a negative status is a warning (root used)
        raise CollationUnavailable(f"ucol_open({LOCALE!r}) failed with ICU status {status.value}")
    for attribute, value in JSC_DEFAULT_ATTRIBUTES:
        set_attribute(collator, attribute, value, ctypes.byref(status))
        if status.value > 0:
            raise CollationUnavailable(f"ucol_setAttribute({attribute}, {value}) failed with ICU status {status.value}")
    versions = {}
    for name in ("u_getVersion", "u_getUnicodeVersion", "ucol_getUCAVersion", "ucol_getVersion"):
        raw = (ctypes.c_uint8 * 4)()
        if name.startswith("ucol_"):
            fn(name, None, ctypes.c_void_p, ctypes.c_void_p)(collator, raw)
        else:
            fn(name, None, ctypes.c_void_p)(raw)
        versions[name] = _version_string(raw)
    sort_key = fn(
        "ucol_getSortKey",
        ctypes.c_int32,
        ctypes.c_void_p,
        ctypes.c_char_p,
        ctypes.c_int32,
        ctypes.c_char_p,
        ctypes.c_int32,
    )
    return _Icu(
        collator,
        sort_key,
        versions["u_getVersion"],
        versions["u_getUnicodeVersion"],
        versions["ucol_getUCAVersion"],
        versions["ucol_getVersion"],
        str(path),
    )


_buffers = threading.local()  # ctypes releases the GIL during the call: one output buffer per thread


def icu_sort_key(value: str) -> bytes:
    """ICU's sort key of a JS string (UTF-16; a lone surrogate is passed as the code unit it is)."""
    icu = _icu()
    units = value.encode("utf-16-le", "surrogatepass")
    buffer = getattr(_buffers, "buffer", None)
    if buffer is None:
        buffer = _buffers.buffer = ctypes.create_string_buffer(1024)
    length = icu.sort_key(icu.collator, units, len(units) // 2, buffer, len(buffer))
    if length > len(buffer):
        buffer = _buffers.buffer = ctypes.create_string_buffer(length * 2)
        length = icu.sort_key(icu.collator, units, len(units) // 2, buffer, len(buffer))
    if length <= 0:
        raise CollationUnavailable(f"ucol_getSortKey returned {length} for a string of {len(value)} characters")
    return ctypes.string_at(buffer, length)


# --- the ASCII fast path ------------------------------------------------------------------------
# ICU's sort-key format (i18n/collationkeys.cpp): levels separated by 01, the key ends in 00; a run
# of n common weights (05) is one byte, counted up from LOW when a lower weight (or the end of the
# level) follows and down from HIGH when a higher one does, with MIDDLE for each full MAX_COUNT.
# tests/test_collation.py compares these keys with ICU's on every two-character ASCII string,
# random ASCII strings, and runs of commons longer than MAX_COUNT.
_COMMON = 0x05
_SECONDARY_RUN = (0x05, 0x25, 0x45, 0x21)  # LOW, MIDDLE, HIGH, MAX_COUNT (SEC_COMMON_*)
_TERTIARY_RUN = (0x05, 0x65, 0xC5, 0x61)  # TER_ONLY_COMMON_* (no case level, case first off)
_COMMON_RUN = re.compile(b"\x05+")


def _compressed_run(count: int, higher_follows: bool, constants: tuple[int, int, int, int]) -> bytes:
    """The bytes ICU writes for `count` common weights in a row."""
    low, middle, high, max_count = constants
    full, rest = divmod(count - 1, max_count)
    return bytes([middle] * full + [high - rest if higher_follows else low + rest])


_SHORT = 256  # runs shorter than this are looked up
_SECONDARY_AT_END = [b"", *(_compressed_run(n, False, _SECONDARY_RUN) for n in range(1, _SHORT))]
_TERTIARY_AT_END = [b"", *(_compressed_run(n, False, _TERTIARY_RUN) for n in range(1, _SHORT))]
_TERTIARY_BEFORE_HIGHER = [b"", *(_compressed_run(n, True, _TERTIARY_RUN) for n in range(1, _SHORT))]


def _run(table: list[bytes], count: int, higher_follows: bool, constants: tuple[int, int, int, int]) -> bytes:
    return table[count] if count < _SHORT else _compressed_run(count, higher_follows, constants)


@dataclass(frozen=True)
class _AsciiTables:
    lead: bytes  # bytes.translate tables: each code's first primary weight byte (00 when none) ...
    trail: bytes  # ... and its second (00 when none): no ASCII primary weight is longer
    tertiary: bytes  # each code's tertiary weight byte
    ignorable: bytes  # the completely ignorable codes (deleted before the levels are built)


@functools.cache
def _ascii_tables() -> _AsciiTables:
    """Each ASCII character's weights, read from ICU's key of that character alone.

    Every ASCII character is either completely ignorable (key 01 01 00) or one collation element
    with a primary weight of one or two bytes, the common secondary weight and a tertiary weight
    not below the common one: the fast path relies on it, so anything else is an error. (A sort
    key holds no 00 byte but its end, so 00 can stand for "no byte".)
    """
    lead, trail, tertiary = bytearray(256), bytearray(256), bytearray(range(256))
    ignorable = bytearray()
    for code in range(128):
        levels = icu_sort_key(chr(code))[:-1].split(b"\x01")
        if levels == [b"", b"", b""]:
            ignorable.append(code)
            continue
        shape_ok = len(levels) == 3 and 1 <= len(levels[0]) <= 2 and levels[1] == bytes([_COMMON])
        if not shape_ok or len(levels[2]) != 1 or levels[2][0] < _COMMON:
            raise CollationUnavailable(f"ICU's key of U+{code:04X} does not have the shape the ASCII fast path needs")
        lead[code], trail[code] = levels[0][0], levels[0][1] if len(levels[0]) == 2 else 0
        tertiary[code] = levels[2][0]
    return _AsciiTables(bytes(lead), bytes(trail), bytes(tertiary), bytes(ignorable))


def ascii_sort_key(value: str) -> bytes:
    """ICU's sort key of an all-ASCII string, built in Python (equal to icu_sort_key(value))."""
    tables = _ascii_tables()
    text = value.encode("ascii")
    weights = text.translate(tables.tertiary, tables.ignorable)  # one per non-ignorable character
    count = len(weights)
    if count == 0:
        return b"\x01\x01\x00"
    secondary = _run(_SECONDARY_AT_END, count, False, _SECONDARY_RUN)
    if weights.count(_COMMON) == count:
        tertiary = _run(_TERTIARY_AT_END, count, False, _TERTIARY_RUN)
    else:  # upper case: a run of commons before it counts down from HIGH (its weight is above common)

        def run(match: re.Match[bytes]) -> bytes:
            higher = match.end() < count
            table = _TERTIARY_BEFORE_HIGHER if higher else _TERTIARY_AT_END
            return _run(table, match.end() - match.start(), higher, _TERTIARY_RUN)

        tertiary = _COMMON_RUN.sub(run, weights)
    primary = bytearray(2 * len(text))
    primary[0::2] = text.translate(tables.lead)
    primary[1::2] = text.translate(tables.trail)
    return b"".join((primary.translate(None, b"\x00"), b"\x01", secondary, b"\x01", tertiary, b"\x00"))


@functools.lru_cache(maxsize=1 << 16)
def locale_compare_key(value: str) -> bytes:
    """Sort key for JS `a.localeCompare(b)` under bun: keys compare as the strings do (equal keys: 0)."""
    if value.isascii():
        return ascii_sort_key(value)
    return icu_sort_key(value)


def info() -> dict[str, str]:
    """Which collation the port uses (for reports): the ICU, Unicode and UCA versions, the locale, the binding."""
    icu = _icu()
    return {
        "icu": icu.icu_version,
        "unicode": icu.unicode_version,
        "uca": icu.uca_version,
        "collator": icu.collator_version,
        "locale": LOCALE,
        "binding": f"{_PACKAGE} {_package_version()} (ctypes)",
    }


def _package_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(_PACKAGE)
    except PackageNotFoundError:
        return "unknown"


def __getattr__(name: str) -> str:
    """`ICU_VERSION` ("78.3") and `UNICODE_VERSION` ("17.0"), read from the loaded ICU on first use."""
    if name == "ICU_VERSION":
        return _icu().icu_version
    if name == "UNICODE_VERSION":
        return _icu().unicode_version
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
