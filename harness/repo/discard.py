"""Directories removed off the critical path: `discard(path)` hands a directory the run is done with (a
lifecycle probe's working copy) to one background thread that removes it, while the run goes on.

Removing a tree is system calls (unlink per file), and on some disks (ext4 mounted with `discard`) each
costs tens of milliseconds per copy: in a warm run that was two of the corpus's seconds, all of it waiting.
The thread releases the GIL in those calls, so the run does not wait for them. `drain()` waits until every
handed directory is gone; it runs at interpreter exit too, so nothing is left behind by a finished run.
"""

from __future__ import annotations

import atexit
import queue
import shutil
import threading
from pathlib import Path

_QUEUE: queue.Queue[Path] = queue.Queue()
_LOCK = threading.Lock()
_WORKER: list[threading.Thread] = []


def _work() -> None:
    while True:
        path = _QUEUE.get()
        try:
            shutil.rmtree(path, ignore_errors=True)
        finally:
            _QUEUE.task_done()


def discard(path: Path) -> None:
    """Remove `path` (a directory, or nothing) in the background."""
    with _LOCK:
        if not _WORKER:
            worker = threading.Thread(target=_work, name="discard", daemon=True)
            worker.start()
            _WORKER.append(worker)
            atexit.register(drain)
    _QUEUE.put(path)


def drain() -> None:
    """Wait until every discarded directory is removed."""
    _QUEUE.join()
