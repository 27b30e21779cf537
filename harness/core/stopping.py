"""How a run stops when told to: SIGINT, SIGTERM or `--run-timeout` (standard library only).

One flag for the whole process, set once by whichever comes first (`request`): from then on no case and no
child process starts (`requested`, `check`), every child process group the harness started and registered
(`track`: references, implementations, port workers) is killed at once, in a thread of its own so a signal
handler never waits on a lock, and the commands that run cases write what finished as a partial report marked
interrupted (harness.run.meta.interrupted) and exit with `exit_code()`: 130 after SIGINT, 143 after SIGTERM
or `--run-timeout` (a deadline ends a run as `timeout SECONDS conformance ...` would: with SIGTERM).

Signals: `install()` (the `conformance` command) makes SIGINT and SIGTERM request the stop. Inside
`cooperative()` (a command that stops its own run and reports what it has) that is all a signal does; outside
it, the signal also raises KeyboardInterrupt in the main thread, as Ctrl-C always did. A second signal raises
KeyboardInterrupt wherever the run is. When the process is the command itself (`watchdog=True`), a stop that has
not ended the process after GRACE seconds ends it with `os._exit(exit_code())`, so nothing a thread is stuck in
(a compile, a pipe) can keep a stopped run alive.
"""

from __future__ import annotations

import contextlib
import faulthandler
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

GRACE = 8.0  # seconds a stopped command has to end by itself before the watchdog ends it


@dataclass(frozen=True)
class Stop:
    """Why the run stops, and the exit code that says so."""

    why: str  # "SIGINT", "SIGTERM", "--run-timeout 30"
    code: int


class Stopped(OSError):
    """A child process was not started, or a case not begun: the run is stopping."""


_event = threading.Event()
_reason: Stop | None = None
_lock = threading.Lock()
_killers: dict[int, Callable[[], None]] = {}  # id -> how to end one registered child (or pool of them)
_cooperative = 0
_watchdog = False
_deadline: threading.Timer | None = None


def requested() -> bool:
    """Whether the run has been told to stop."""
    return _event.is_set()


def reason() -> Stop | None:
    return _reason


def exit_code() -> int:
    """The exit code of a run that was told to stop (130: SIGINT; 143: SIGTERM or --run-timeout)."""
    return _reason.code if _reason is not None else 130


def check() -> None:
    """Raise Stopped when the run is stopping (before starting a case or a child process)."""
    if _event.is_set():
        raise Stopped(f"the run is stopping ({_reason.why if _reason else 'interrupted'})")


def request(stop: Stop) -> None:
    """Stop the run: the first reason is kept; every registered child is killed (in a thread of its own)."""
    global _reason
    with _lock:
        if _reason is None:
            _reason = stop
        _event.set()
        killers = list(_killers.values())
    threading.Thread(target=_kill, args=(killers,), name="conformance-stop", daemon=True).start()
    if _watchdog:
        timer = threading.Timer(GRACE, _give_up, args=(exit_code(),))
        timer.daemon = True
        timer.start()


def _kill(killers: list[Callable[[], None]]) -> None:
    for kill in killers:
        with contextlib.suppress(Exception):
            kill()


def _give_up(code: int) -> None:
    with contextlib.suppress(Exception):
        _kill(list(_killers.values()))
        print(
            f"error: the run did not end within {GRACE:g} s of being stopped (a harness bug: where each thread "
            "was follows); exiting",
            file=sys.stderr,
        )
        sys.stderr.flush()
        faulthandler.dump_traceback(sys.stderr, all_threads=True)
    os._exit(code)


def track(thing: object, kill: Callable[[], None]) -> None:
    """Register a child process (or pool) the run started, and how to end it; a stopping run refuses (Stopped)
    and ends it right away."""
    with _lock:
        stopping = _event.is_set()
        if not stopping:
            _killers[id(thing)] = kill
    if stopping:
        kill()
        check()


def untrack(thing: object) -> None:
    with _lock:
        _killers.pop(id(thing), None)


@contextlib.contextmanager
def cooperative() -> Iterator[None]:
    """Within: a signal only requests the stop; the caller's run stops itself and reports what it has."""
    global _cooperative
    _cooperative += 1
    try:
        yield
    finally:
        _cooperative -= 1


def _handle(signum: int, _frame: Any) -> None:
    again = _event.is_set()
    request(Stop(signal.Signals(signum).name, 128 + signum))
    if again or not _cooperative:
        raise KeyboardInterrupt


def install(*, watchdog: bool) -> Callable[[], None]:
    """SIGINT and SIGTERM request the stop (main thread only); returns what puts the previous handlers back.
    `watchdog`: this process is the command, and may end itself GRACE seconds after a stop."""
    global _watchdog
    if threading.current_thread() is not threading.main_thread():
        return lambda: None  # (signals reach the main thread only: a command run from another thread)
    _watchdog = watchdog
    previous = {s: signal.signal(s, _handle) for s in (signal.SIGINT, signal.SIGTERM)}

    def restore() -> None:
        global _watchdog
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        _watchdog = False

    return restore


def deadline(seconds: float | None) -> None:
    """Stop the run `seconds` from now (`--run-timeout`); None: no deadline."""
    global _deadline
    if seconds is None:
        return
    _deadline = threading.Timer(seconds, request, args=(Stop(f"--run-timeout {seconds:g}", 143),))
    _deadline.daemon = True
    _deadline.start()


def reset() -> None:
    """Forget a stop and any deadline (the start of each command run in this process; tests)."""
    global _reason, _deadline
    if _deadline is not None:
        _deadline.cancel()
        _deadline = None
    with _lock:
        _reason = None
        _event.clear()
