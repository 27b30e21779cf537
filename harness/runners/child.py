"""A child process of a JSON-lines runner (harness.runners.jsonl_process): what was started, and ending it."""

from __future__ import annotations

import collections
import contextlib
import os
import queue
import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path


@dataclass
class Child:
    """A started child process, the queue its stdout lines go to, and the tail of its stderr."""

    proc: subprocess.Popen[bytes]
    lines: queue.Queue[bytes | None]
    stderr: collections.deque[str]
    launch: tuple[list[str], dict[str, str] | None, Path | None]  # the argv, env and cwd it was started with


def kill_child(proc: subprocess.Popen[bytes]) -> None:
    """Kill a child's process group (it and the git processes it started) and reap it."""
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            proc.kill()
    for stream in (proc.stdin, proc.stdout, proc.stderr):
        with contextlib.suppress(OSError):
            if stream:
                stream.close()
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=10)
