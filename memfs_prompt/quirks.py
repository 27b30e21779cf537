"""JavaScript and git behaviours that upstream depends on, reproduced in Python.

Every function here is one upstream quirk: a place where a naive Python port
would produce different bytes. Each is listed in docs/quirks.md with the case
that pins it.
"""

from __future__ import annotations

import hashlib
import re
from datetime import datetime

from .collation import locale_compare_key as locale_compare_key  # localeCompare: ICU, in collation.py

# ECMAScript WhiteSpace + LineTerminator (ES2024 12.2/12.3): what String.prototype.trim strips.
JS_WHITESPACE = frozenset(
    "\u0009\u000a\u000b\u000c\u000d\u0020\u00a0\u1680\u2000\u2001\u2002\u2003\u2004"
    "\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)
_JS_WS_CLASS = "".join(sorted(JS_WHITESPACE))


def js_trim(value: str) -> str:
    """JS `String.prototype.trim`: strips U+FEFF but not U+0085 or U+001C..U+001F, unlike str.strip()."""
    return value.strip(_JS_WS_CLASS)


def js_trim_start(value: str) -> str:
    """JS `String.prototype.trimStart` (same character set as js_trim)."""
    return value.lstrip(_JS_WS_CLASS)


def js_trim_end(value: str) -> str:
    """JS `String.prototype.trimEnd` (same character set as js_trim)."""
    return value.rstrip(_JS_WS_CLASS)


def git_quotes_path(name: bytes) -> bool:
    """`git ls-tree` (core.quotePath default) C-quotes a name with control, `"`, `\\` or non-ASCII bytes.

    Upstream splits the unquoted text output, so a quoted name ends in `"` and is dropped.
    """
    return _GIT_QUOTED_BYTE.search(name) is not None


_GIT_QUOTED_BYTE = re.compile(rb'[\x00-\x1f\x7f"\\\x80-\xff]')


EXEC_MAX_BUFFER = 1024 * 1024


def exceeds_exec_max_buffer(output_size: int) -> bool:
    """`execFileSync` throws ENOBUFS past its default maxBuffer (1 MiB); upstream's try/catch then drops the file."""
    return output_size > EXEC_MAX_BUFFER


_C_ESCAPES = {0x07: "a", 0x08: "b", 0x09: "t", 0x0A: "n", 0x0B: "v", 0x0C: "f", 0x0D: "r", 0x22: '"', 0x5C: "\\"}


def git_quoted_path(name: bytes) -> bytes:
    """The name as `git ls-tree` prints it: C-quoted (`"a\\303\\251.md"`) when git_quotes_path says so."""
    if not git_quotes_path(name):
        return name
    out = ['"']
    for b in name:
        if b in _C_ESCAPES:
            out.append("\\" + _C_ESCAPES[b])
        elif b < 0x20 or b >= 0x7F:
            out.append(f"\\{b:03o}")
        else:
            out.append(chr(b))
    out.append('"')
    return "".join(out).encode("ascii")


def decode_utf8_lossy(data: bytes) -> str:
    """`execFileSync(..., {encoding: "utf8"})`: invalid UTF-8 becomes U+FFFD, a BOM is kept."""
    return data.decode("utf-8", "replace")


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def js_utf8_encode(value: str) -> bytes:
    """How node:crypto's `update(string)` encodes text: a lone surrogate becomes U+FFFD."""
    return _LONE_SURROGATE.sub("\ufffd", value).encode("utf-8")


def sha256_hex_of_js_string(value: str) -> str:
    """`createHash("sha256").update(value).digest("hex")` on a JS string."""
    return hashlib.sha256(js_utf8_encode(value)).hexdigest()


def js_replace_all(subject: str, search: str, replacement: str) -> str:
    """`subject.replaceAll(search, replacement)`: `$$`, `$&`, `` $` `` and `$'` in the replacement are expanded."""
    if search == "":
        raise ValueError("empty search string is not used by upstream")
    positions = []
    start = subject.find(search)
    while start != -1:
        positions.append(start)
        start = subject.find(search, start + len(search))
    if not positions:
        return subject
    out: list[str] = []
    last = 0
    for pos in positions:
        out.append(subject[last:pos])
        out.append(_get_substitution(subject, pos, search, replacement))
        last = pos + len(search)
    out.append(subject[last:])
    return "".join(out)


_SUBSTITUTION_PATTERN = re.compile(r"\$([$&`'])")


def _get_substitution(subject: str, position: int, matched: str, replacement: str) -> str:
    """ECMAScript GetSubstitution for a string pattern (no captures, no named groups).

    `$$`, `$&`, `` $` `` and `$'` are replaced, left to right without overlap; any other `$` is literal.
    """
    if "$" not in replacement:
        return replacement  # nothing to substitute

    def substitute(match: re.Match[str]) -> str:
        kind = match[1]
        if kind == "$":
            return "$"
        if kind == "&":
            return matched
        if kind == "`":
            return subject[:position]
        return subject[position + len(matched) :]

    return _SUBSTITUTION_PATTERN.sub(substitute, replacement)


def bun_pragma_literal(value: str) -> str:
    """A non-ASCII string literal in a `// @bun` bundle as bun decodes it: each UTF-8 byte as Latin-1."""
    return value.encode("utf-8").decode("latin-1")


def format_utc_timestamp(moment: datetime) -> str:
    """Upstream `formatUtcTimestamp`: 12-hour clock, `AM`/`PM`, literal `UTC+0000` (see `jsvalues`)."""
    from .jsvalues import JsDate
    from .jsvalues import format_utc_timestamp as format_date

    return format_date(JsDate.from_datetime(moment))
