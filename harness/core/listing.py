"""Listings of an exact size: padding files that make `git ls-tree -r --name-only HEAD` print N bytes.

Upstream lists the memory with `execFileSync("git", ["ls-tree", "-r", "--name-only", "HEAD"])`,
whose output has a 1 MiB budget (memfs_prompt.quirks.EXEC_MAX_BUFFER). A case's `listing: {bytes: N}`
sits at, under or over it without a big case file: the harness counts what git prints for the
case's own files (each name relative to the memory directory, C-quoted as the repository's
`core.quotePath` says, plus a newline) and adds files that are never read (`.txt`, empty) whose
names make up the rest. The builder checks the count against git's real output (repo.build).
"""

from __future__ import annotations

import math
import re

from harness.core.repomodel import MODE_FILE, Blob

MAX_PATH = 2000  # bytes of one padding path: well under PATH_MAX, so a work tree can hold it
COMPONENT = 200  # bytes of one padding path component: well under NAME_MAX
SUFFIX = ".txt"  # not `.md`: listed, never read
_NUMBER = 5  # digits numbering the padding files (so at most 99999 of them)
_QUOTED_ALWAYS = re.compile(rb'[\x00-\x1f\x7f"\\]')
_QUOTED_BY_DEFAULT = re.compile(rb'[\x00-\x1f\x7f"\\\x80-\xff]')
_FALSE = ("false", "no", "off", "0", "")


class ListingError(ValueError):
    """A listing size that padding cannot reach; the message says why and what to change."""


def config_bool(config: tuple[tuple[str, str], ...], name: str, default: bool) -> bool:
    """A boolean of the repository's own config as git reads it (names ignore case; the last value wins)."""
    value = None
    for key, given in config:
        if key.lower() == name.lower():
            value = given
    return default if value is None else value.strip().lower() not in _FALSE


def quote_path(config: tuple[tuple[str, str], ...]) -> bool:
    """The repository's `core.quotePath` (default true)."""
    return config_bool(config, "core.quotePath", True)


def printed_name(name: bytes, quoted: bool = True) -> bytes:
    """A name as `git ls-tree` prints it: C-quoted when it holds a control character, `"`, `\\` or
    (with core.quotePath true) a byte of 0x80 or more (git quote.c cq_lookup / quote_c_style)."""
    if not (_QUOTED_BY_DEFAULT if quoted else _QUOTED_ALWAYS).search(name):
        return name
    escapes = {7: b"\\a", 8: b"\\b", 9: b"\\t", 10: b"\\n", 11: b"\\v", 12: b"\\f", 13: b"\\r", 34: b'\\"', 92: b"\\\\"}
    out = bytearray(b'"')
    for byte in name:
        if byte in escapes:
            out += escapes[byte]
        elif byte < 0x20 or byte == 0x7F or (quoted and byte >= 0x80):
            out += f"\\{byte:03o}".encode("ascii")
        else:
            out.append(byte)
    return bytes(out + b'"')


def listing_size(names: list[bytes], prefix: bytes | None, quoted: bool = True) -> int:
    """Bytes of `git ls-tree -r --name-only HEAD` run in `<top>/<prefix>` (None: at the top, or in a git
    directory) for a tree holding `names` (every leaf: files, symlinks, gitlinks)."""
    start = prefix + b"/" if prefix else b""
    return sum(len(printed_name(n[len(start) :], quoted)) + 1 for n in names if n.startswith(start))


def padding_path(number: int, directory: bytes, cost: int) -> bytes:
    """Padding file `number` under `directory` whose listed line (name and newline) is `cost` bytes."""
    length = cost - 1 - len(directory) - 1  # the part after `directory/`
    tail = bytearray(f"{number:0{_NUMBER}d}".encode() + b"x" * (length - _NUMBER - len(SUFFIX)) + SUFFIX.encode())
    for spot in range(COMPONENT, length - len(SUFFIX) - 1, COMPONENT + 1):
        tail[spot] = ord("/")  # components of at most COMPONENT bytes; the last keeps an `x` before `.txt`
    return directory + b"/" + bytes(tail)


def padding(own: int, target: int, directory: bytes) -> dict[bytes, Blob]:
    """Empty files under `directory` (relative to the memory directory) that add `target - own` bytes
    to a listing of `own` bytes. ListingError when that cannot be done."""
    rest = target - own
    if rest < 0:
        raise ListingError(f"the case's own files already list {own} bytes, more than {target}; raise `bytes`")
    if rest == 0:
        return {}
    shortest = len(directory) + 1 + _NUMBER + len(SUFFIX) + 1
    longest = MAX_PATH + 1
    count = math.ceil(rest / longest)
    if rest < shortest:
        raise ListingError(
            f"the case's own files list {own} bytes; the {rest} bytes left are fewer than the shortest padding "
            f"line ({shortest} bytes under {directory.decode('utf-8', 'replace')!r}): change `bytes` or the files"
        )
    if count >= 10**_NUMBER:
        raise ListingError(f"{rest} bytes of padding would take {count} files; lower `bytes`")
    base, extra = divmod(rest, count)
    empty = Blob(MODE_FILE, b"")
    return {padding_path(i, directory, base + (1 if i < extra else 0)): empty for i in range(count)}
