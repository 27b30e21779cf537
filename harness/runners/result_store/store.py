"""The result store's file: one SQLite database of results by key (LRU-bounded), reference descriptions and
repository digests; `conformance cache` reads and prunes it (harness.cli.cache)."""

from __future__ import annotations

import contextlib
import functools
import json
import os
import sqlite3
import sys
import threading
import time
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from harness.core.sizes import parse_size

FORMAT = 2  # bump when what is stored, or how a key is made, changes: the store then starts empty
MAX_SIZE_ENV = "LETTA_CONFORMANCE_STORE_MAX"
DEFAULT_MAX_BYTES = 512 * 1024 * 1024
STORE_DIR, STORE_FILE = "results", "store.sqlite"
DECODED = 4096  # distinct values kept decoded (a matrix reads about 850; a value is a few kilobytes)


def default_max_bytes() -> int:
    """The bound the store is kept under: LETTA_CONFORMANCE_STORE_MAX, else 512M."""
    configured = os.environ.get(MAX_SIZE_ENV)
    return parse_size(configured) if configured else DEFAULT_MAX_BYTES


def store_path(cache: Path) -> Path:
    return cache / STORE_DIR / STORE_FILE


def canonical(value: Any) -> bytes:
    """JSON with sorted keys, ASCII, no NaN: the bytes a key is made of and a value is stored as."""
    return json.dumps(value, sort_keys=True, ensure_ascii=True, allow_nan=False, separators=(",", ":")).encode()


_T = TypeVar("_T")


def _tolerant(default: Any) -> Callable[[Callable[..., _T]], Callable[..., _T]]:
    """A store operation a run makes: an SQLite error (a file locked past the timeout, a full disk) warns once
    and reads as a miss or a write not done; the run goes on, as with --no-cache."""

    def wrap(method: Callable[..., _T]) -> Callable[..., _T]:
        @functools.wraps(method)
        def safe(self: ResultStore, *args: Any) -> _T:
            try:
                return method(self, *args)
            except sqlite3.Error as error:
                if not self.failed:
                    self.failed = True
                    print(f"warning: result store {self.path}: {error}; going on without it", file=sys.stderr)
                return default  # type: ignore[no-any-return]

        return safe

    return wrap


class ResultStore:
    """The SQLite file: results by key (LRU by last use), reference descriptions, repository digests.

    One connection, shared by the session's worker threads under a lock; WAL and a busy timeout make
    several processes safe. A hit's last use is written in batches (`_touched`), not on every read."""

    def __init__(self, path: Path, max_bytes: int | None = None) -> None:
        self.path = path
        self.max_bytes = default_max_bytes() if max_bytes is None else max_bytes
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(path, timeout=60.0, isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA busy_timeout = 60000")
        self._db.execute("PRAGMA auto_vacuum = INCREMENTAL")  # (takes effect on a new file only)
        self._db.execute("PRAGMA journal_mode = WAL")
        self._db.execute("PRAGMA synchronous = NORMAL")
        self._db.execute("PRAGMA journal_size_limit = 67108864")
        self._db.executescript(
            """
            CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
            CREATE TABLE IF NOT EXISTS results (
                key TEXT PRIMARY KEY, kind TEXT NOT NULL, reference TEXT NOT NULL, value BLOB NOT NULL,
                size INTEGER NOT NULL, stored REAL NOT NULL, used REAL NOT NULL);
            CREATE INDEX IF NOT EXISTS results_by_use ON results (used);
            CREATE TABLE IF NOT EXISTS descriptions (key TEXT PRIMARY KEY, value TEXT NOT NULL);
            CREATE TABLE IF NOT EXISTS repositories (root TEXT PRIMARY KEY, stamp TEXT NOT NULL, digest TEXT NOT NULL);
            """
        )
        found = self._db.execute("SELECT value FROM meta WHERE name = 'format'").fetchone()
        if found is None or found[0] != str(FORMAT):
            with self._lock:
                self._clear()
                self._db.execute("INSERT OR REPLACE INTO meta VALUES ('format', ?)", (str(FORMAT),))
        self._touched: dict[str, float] = {}
        self._decoded: dict[bytes, Any] = {}  # compressed value -> decoded, shared by the reads of equal values
        self._puts = 0
        self.failed = False  # an operation failed (and said so once)

    # results
    @_tolerant(None)
    def get(self, key: str) -> Any | None:
        """The value stored under `key` (JSON), or None; a value that no longer decodes is dropped (a miss).

        Values with the same bytes are decoded once and shared (many releases give a case the same answer:
        a matrix reads 14,000 values, 850 distinct): treat a value as read-only."""
        with self._lock:
            row = self._db.execute("SELECT value FROM results WHERE key = ?", (key,)).fetchone()
            if row is None:
                return None
            value = self._decoded.get(row[0])
            if value is None:
                try:
                    value = json.loads(zlib.decompress(row[0]))
                except (zlib.error, ValueError):
                    self._db.execute("DELETE FROM results WHERE key = ?", (key,))
                    return None
                if len(self._decoded) >= DECODED:
                    self._decoded.clear()
                self._decoded[row[0]] = value
            self._touched[key] = time.time()
            if len(self._touched) >= 512:
                self._flush_touched()
            return value

    @_tolerant(False)
    def contains(self, key: str) -> bool:
        with self._lock:
            return self._db.execute("SELECT 1 FROM results WHERE key = ?", (key,)).fetchone() is not None

    @_tolerant(None)
    def put(self, key: str, kind: str, reference: str, value: Any) -> None:
        blob = zlib.compress(canonical(value), 6)
        now = time.time()
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO results VALUES (?, ?, ?, ?, ?, ?, ?)",
                (key, kind, reference, blob, len(blob) + len(key), now, now),
            )
            self._puts += 1
            if self._puts % 2000 == 0:
                self._evict(self.max_bytes)

    @_tolerant(None)
    def forget(self, key: str) -> None:
        with self._lock:
            self._db.execute("DELETE FROM results WHERE key = ?", (key,))

    @_tolerant(0)
    def forget_reference(self, name: str) -> int:
        """Forget every outcome stored for the reference runner named `name`; how many."""
        with self._lock:
            return self._db.execute("DELETE FROM results WHERE reference = ?", (name,)).rowcount

    # reference descriptions (what `describe()` said when the reference last started), never evicted
    @_tolerant(None)
    def description(self, key: str) -> dict[str, Any] | None:
        with self._lock:
            row = self._db.execute("SELECT value FROM descriptions WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    @_tolerant(None)
    def describe_as(self, key: str, value: dict[str, Any]) -> None:
        text = json.dumps(value, sort_keys=True, default=repr)
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO descriptions VALUES (?, ?)", (key, text))

    # repository digests, by the stamp of the repository's `.complete` marker
    @_tolerant(None)
    def repository(self, root: str, stamp: str) -> str | None:
        with self._lock:
            row = self._db.execute("SELECT stamp, digest FROM repositories WHERE root = ?", (root,)).fetchone()
        return row[1] if row and row[0] == stamp else None

    @_tolerant(None)
    def remember_repository(self, root: str, stamp: str, digest: str) -> None:
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO repositories VALUES (?, ?, ?)", (root, stamp, digest))

    # upkeep
    def stats(self) -> dict[str, Any]:
        """Entries and bytes by kind and by reference, the oldest and newest use, the file's size on disk."""
        with self._lock:
            self._flush_touched()
            kinds = self._db.execute("SELECT kind, COUNT(*), SUM(size) FROM results GROUP BY kind").fetchall()
            refs = self._db.execute(
                "SELECT reference, COUNT(*), SUM(size) FROM results GROUP BY reference ORDER BY reference"
            ).fetchall()
            span = self._db.execute("SELECT MIN(used), MAX(used) FROM results").fetchone()
            repos = self._db.execute("SELECT COUNT(*) FROM repositories").fetchone()[0]
        return {
            "path": str(self.path),
            "entries": sum(n for _, n, _ in kinds),
            "bytes": sum(b for _, _, b in kinds),
            "max_bytes": self.max_bytes,
            "on_disk_bytes": self.on_disk_bytes(),
            "kinds": {kind: {"entries": n, "bytes": b} for kind, n, b in sorted(kinds)},
            "references": {ref: {"entries": n, "bytes": b} for ref, n, b in refs},
            "oldest_use": span[0],
            "newest_use": span[1],
            "repositories": repos,
        }

    def on_disk_bytes(self) -> int:
        """The database and its WAL and shared-memory files."""
        total = 0
        for suffix in ("", "-wal", "-shm"):
            with contextlib.suppress(OSError):
                total += os.stat(f"{self.path}{suffix}").st_size
        return total

    def prune(self, max_bytes: int | None = None) -> tuple[int, int]:
        """Evict the least recently used results until the rest fit in `max_bytes` (default: the bound);
        forget repositories that are gone. Returns (entries removed, bytes freed)."""
        with self._lock:
            self._flush_touched()
            removed = self._evict(self.max_bytes if max_bytes is None else max_bytes)
            rows = self._db.execute("SELECT root FROM repositories").fetchall()
            gone = [(root,) for (root,) in rows if not Path(root).exists()]
            self._db.executemany("DELETE FROM repositories WHERE root = ?", gone)
            self._db.execute("PRAGMA incremental_vacuum")
            self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return removed

    def clear(self) -> int:
        """Remove every result, description and repository digest; returns how many results there were."""
        with self._lock:
            count = self._db.execute("SELECT COUNT(*) FROM results").fetchone()[0]
            self._clear()
            self._db.execute("VACUUM")
            self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return int(count)

    def close(self) -> None:
        """Write the last uses, keep the store under its bound, and close the file."""
        with self._lock:
            try:
                self._flush_touched()
                if self._evict(self.max_bytes)[0]:
                    self._db.execute("PRAGMA incremental_vacuum")
            except sqlite3.Error as error:  # the results are stored; only the upkeep is left for next time
                print(f"warning: result store {self.path}: {error} while closing", file=sys.stderr)
            finally:
                self._db.close()

    def _clear(self) -> None:
        self._touched = {}
        for table in ("results", "descriptions", "repositories"):
            self._db.execute(f"DELETE FROM {table}")  # fixed table names

    def _flush_touched(self) -> None:
        if self._touched:
            touched, self._touched = self._touched, {}
            self._db.execute("BEGIN")
            self._db.executemany("UPDATE results SET used = ? WHERE key = ?", [(t, k) for k, t in touched.items()])
            self._db.execute("COMMIT")

    def _evict(self, max_bytes: int) -> tuple[int, int]:
        total = self._db.execute("SELECT COALESCE(SUM(size), 0) FROM results").fetchone()[0]
        if total <= max_bytes:
            return 0, 0
        doomed, freed = [], 0
        for key, size in self._db.execute("SELECT key, size FROM results ORDER BY used, key"):
            if total - freed <= max_bytes:
                break
            doomed.append((key,))
            freed += size
        self._db.execute("BEGIN")
        self._db.executemany("DELETE FROM results WHERE key = ?", doomed)
        self._db.execute("COMMIT")
        return len(doomed), freed


def open_store(cache: Path) -> ResultStore | None:
    """The store of this cache, or None (with one line on stderr) when it cannot be opened: the run then
    runs everything, as with --no-cache."""
    try:
        return ResultStore(store_path(cache))
    except (sqlite3.Error, OSError, ValueError) as error:
        print(f"warning: result store {store_path(cache)} unavailable ({error}); running without it", file=sys.stderr)
        return None
