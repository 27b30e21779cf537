"""A child process of a JSON-lines runner (harness.runners.jsonl_process): what was started, starting it as a
process group the run's stop can end (harness.core.stopping), and ending it."""

from __future__ import annotations

import collections
import contextlib
import os
import queue
import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.core import stopping


@dataclass
class Child:
    """A started child process, the queue its stdout lines go to, and the tail of its stderr."""

    proc: subprocess.Popen[bytes]
    lines: queue.Queue[bytes | None]
    stderr: collections.deque[str]
    launch: tuple[list[str], dict[str, str] | None, Path | None]  # the argv, env and cwd it was started with


def start_group(argv: list[str], **popen: Any) -> subprocess.Popen[bytes]:
    """Start `argv` in a process group of its own (so a hung child and its git processes end together),
    registered with the run's stop; refused (harness.core.stopping.Stopped) once the run is stopping."""
    stopping.check()
    proc: subprocess.Popen[bytes] = subprocess.Popen(argv, start_new_session=True, **popen)
    stopping.track(proc, lambda: _kill_group(proc))
    return proc


def run_group(argv: list[str], timeout: float, **popen: Any) -> subprocess.CompletedProcess[str]:
    """`subprocess.run(argv, capture_output=True, text=True, timeout=timeout)` for a long command (a download, a
    build), as a process group of its own that the run's stop ends: past `timeout` the whole group is killed
    and subprocess.TimeoutExpired raised; once the run is stopping, harness.core.stopping.Stopped."""
    proc: subprocess.Popen[Any] = start_group(
        argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **popen
    )
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        proc.communicate()
        raise
    finally:
        stopping.untrack(proc)
    stopping.check()  # killed by the stop: no answer to judge
    return subprocess.CompletedProcess(argv, proc.returncode, stdout, stderr)


def _kill_group(proc: subprocess.Popen[Any]) -> None:
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            proc.kill()


def kill_child(proc: subprocess.Popen[bytes]) -> None:
    """Kill a child's process group (it and the git processes it started) and reap it."""
    stopping.untrack(proc)
    _kill_group(proc)
    for stream in (proc.stdin, proc.stdout, proc.stderr):
        with contextlib.suppress(OSError):
            if stream:
                stream.close()
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=10)
