"""bun's runtime transpiler cache in the references' private home, kept under a bound.

bun caches the transpiled form of every large module it loads (a release bundle: 25 to 40 MB each) under
`$HOME/.bun/install/cache/@t@/`, which makes the next start of that release about three times faster
(0.65 s against 2.1 s for 0.34.12, measured in docs/scale.md) and never shrinks by itself: a matrix over 35
releases leaves well over a gigabyte. A session prunes it when it closes, least recently used first, down to
`LETTA_CONFORMANCE_TRANSPILER_MAX` (default 1200M: every pinned release stays warm; the 35 take 1.1 GB, and
with 400M a case no run has seen cost 70 s on the warm matrix instead of 51 s, docs/scale.md). The cache
is not an input of any outcome (bun transpiles the same bytes either way), so nothing else depends on it.
"""

from __future__ import annotations

import os
from pathlib import Path

from harness.core.sizes import parse_size

MAX_SIZE_ENV = "LETTA_CONFORMANCE_TRANSPILER_MAX"
DEFAULT_MAX = "1200M"


def transpiler_cache(home: Path) -> Path:
    """Where bun keeps its transpiler cache for a process whose HOME is `home`."""
    return home / ".bun" / "install" / "cache" / "@t@"


def max_size() -> int:
    return parse_size(os.environ.get(MAX_SIZE_ENV) or DEFAULT_MAX)


def prune_transpiler_cache(home: Path, limit: int | None = None) -> int:
    """Delete the least recently used entries until the cache holds at most `limit` bytes; the bytes freed."""
    limit = max_size() if limit is None else limit
    entries = []
    for path in transpiler_cache(home).glob("*"):
        try:
            stat = path.stat()
        except OSError:
            continue
        entries.append((max(stat.st_atime, stat.st_mtime), stat.st_size, path))
    total = sum(size for _, size, _ in entries)
    freed = 0
    for _, size, path in sorted(entries, key=lambda entry: (entry[0], entry[2].name)):
        if total - freed <= limit:
            break
        try:
            path.unlink()
        except OSError:  # another run's bun is writing or has removed it: leave it
            continue
        freed += size
    return freed
