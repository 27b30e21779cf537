"""A release's unpacked files against what its verified download held: the listing made then
(`listing_of`) and whether the files still match it (`listing_damage`).

Each release's cache keeps a listing (relative path -> [size, sha256]) written when the download's
pinned digest was verified. Hashing every listed file again at each start of a release cost 240 ms
for a PyPI release (5,600 files, 101 MB), which is a quarter of the start when the result store misses.
So each file's stat is remembered (`.stamps.json`) once its bytes hashed right, and a file whose stat
is unchanged is not read again. The stat holds the change time (ctime), which every write, rename or
`touch` of the file moves and which no user tool can set back; a stat taken within a second of the
file's last change is not remembered, so a write in the same clock tick is still read (git's "racily
clean" rule).
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import time
from pathlib import Path
from typing import Any

STAMPS = ".stamps.json"  # relative path -> [inode, mtime_ns, ctime_ns, size] when it last hashed right
SETTLED_NS = 1_000_000_000  # a change this recent may share its clock tick with a write to come


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def listing_of(dest: Path, names: list[str]) -> dict[str, list[Any]]:
    """The listing of `names` under `dest`: each one's size and sha256."""
    return {name: [(dest / name).stat().st_size, sha256_of(dest / name)] for name in names}


def listing_damage(dest: Path, listing: dict[str, list[Any]]) -> str | None:
    """Why a file `listing` names under `dest` is missing or holds other bytes than listed, or None."""
    stamps = _read_stamps(dest)
    seen: dict[str, list[int]] = {}
    now = time.time_ns()
    for name, (size, digest) in sorted(listing.items()):
        try:
            found = (dest / name).stat()
        except OSError:
            return f"{name} is missing"
        if not stat.S_ISREG(found.st_mode):
            return f"{name} is missing"
        if found.st_size != size:
            return f"{name} is {found.st_size} bytes, {size} when verified"
        stamp = [found.st_ino, found.st_mtime_ns, found.st_ctime_ns, found.st_size]
        if stamps.get(name) != stamp and sha256_of(dest / name) != digest:
            return f"{name} has other bytes than when verified"
        if now - found.st_ctime_ns > SETTLED_NS:
            seen[name] = stamp
    if seen != stamps:
        _write_stamps(dest, seen)
    return None


def _read_stamps(dest: Path) -> dict[str, list[int]]:
    try:
        stamps = json.loads((dest / STAMPS).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}  # none yet, or unreadable: every file is hashed
    return stamps if isinstance(stamps, dict) else {}


def _write_stamps(dest: Path, stamps: dict[str, list[int]]) -> None:
    tmp = dest / f"{STAMPS}.{os.getpid()}.tmp"
    try:
        tmp.write_text(json.dumps(stamps, sort_keys=True) + "\n", encoding="utf-8")
        os.replace(tmp, dest / STAMPS)
    except OSError:  # a read-only cache: checked by hashing next time too
        tmp.unlink(missing_ok=True)
