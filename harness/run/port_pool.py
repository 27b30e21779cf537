"""The in-process port's compiles of a matrix, computed ahead in worker processes (`PortPool`).

Why: once the references answer from the result store, a matrix is mostly the port's own work (each compile
case under each profile), and the session's worker threads share one interpreter lock. `jobs` processes
compile on every core while the columns read the store and judge. Each process answers with the same runner
the session would use (harness.runners.python_port, one per profile), so an outcome is the one computed in
the session; only its elapsed time differs. A case's compiles under every profile go to one process together
and read the repository's HEAD once (harness.runners.python_port.compile_each): nothing changes a
materialized repository, and starting git for every profile was most of the port's cost. A pool that cannot
start or breaks leaves each compile to the session (`outcome` returns None), so a run never depends on it.
The processes are registered with the run's stop (harness.core.stopping): a stopped run kills them at once.
"""

from __future__ import annotations

import multiprocessing
import signal
import sys
import threading
from collections.abc import Hashable
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import replace
from typing import TYPE_CHECKING

from harness.core import stopping
from harness.core.model import CompileRequest, Outcome

if TYPE_CHECKING:  # the worker imports harness.run.lifecycle only when it runs a side, the port when it compiles
    from harness.run.lifecycle import ImplSide, SideRun
    from harness.runners.python_port import PythonPortRunner

_RUNNERS: dict[str, PythonPortRunner] = {}  # in each worker process: the port under each profile
_GIT_ENV: dict[str, str] = {}


def _start_worker(git_env: dict[str, str]) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the session's to handle (it shuts the pool down)
    _GIT_ENV.update(git_env)


def _port(profile: str) -> PythonPortRunner:
    from harness.runners.python_port import PythonPortRunner

    runner = _RUNNERS.get(profile)
    if runner is None:
        runner = _RUNNERS[profile] = PythonPortRunner(profile, _GIT_ENV)
    return runner


def _compile_each(profiles: list[str], request: CompileRequest) -> list[Outcome]:
    """`request` compiled under each profile, from one reading of the repository's HEAD (nothing changes it)."""
    from harness.runners.python_port import compile_each

    return compile_each([(_port(profile), replace(request, profile=profile)) for profile in profiles])


def _run_side(side: ImplSide, profile: str) -> SideRun:
    return side.run(_port(profile))


class PortPool:
    """`jobs` worker processes for the port, once started: compiles handed over in the order given, each read back
    by its key and profile, and lifecycle sides run one at a time. Before `start`, nothing runs here (the caller
    does it)."""

    def __init__(self, jobs: int, git_env: dict[str, str]) -> None:
        self.jobs, self.git_env = jobs, git_env
        self._wanted = False  # `start` was called
        self._futures: dict[tuple[Hashable, str], tuple[Future[list[Outcome]], int]] = {}  # its group's, its place
        self._pool: ProcessPoolExecutor | None = None
        self._lock = threading.Lock()
        self._warned = False

    def start(self, work: list[tuple[Hashable, list[str], CompileRequest]]) -> None:
        """Start the processes and hand them each (key, profiles, request): the port's compiles of `request`
        under each profile, in one process, each read back as `outcome(key, profile)`. Lifecycle sides run here
        from now on too."""
        self._wanted = True
        if (pool := self._started()) is None:
            return
        try:
            for key, profiles, request in work:
                future = pool.submit(_compile_each, profiles, request)
                self._futures.update(((key, profile), (future, place)) for place, profile in enumerate(profiles))
        except RuntimeError as error:  # the pool broke: what is not handed over is compiled in process
            self._warn(error)

    def side(self, side: ImplSide, profile: str) -> SideRun | None:
        """The implementation's lifecycle side `side` run in a worker process under `profile` (waiting for it), or
        None: sides do not run here, or the pool broke (the caller runs it)."""
        if not self._wanted or (pool := self._started()) is None:
            return None
        try:
            return pool.submit(_run_side, side, profile).result()
        except Exception as error:  # a broken pool, or a side that does not pickle back: run in process
            self._warn(error)
            return None

    def _started(self) -> ProcessPoolExecutor | None:
        with self._lock:
            if self._pool is None and not self._warned:
                try:
                    stopping.check()
                    self._pool = ProcessPoolExecutor(
                        max_workers=self.jobs,
                        mp_context=multiprocessing.get_context("spawn"),
                        initializer=_start_worker,
                        initargs=(self.git_env,),
                    )
                    stopping.track(self, self._kill)
                except (OSError, ValueError) as error:
                    self._warn(error)
            return self._pool

    def _kill(self) -> None:
        """End the worker processes now (the run is stopping): what they were computing is not wanted."""
        pool = self._pool
        if pool is not None:
            processes = dict(getattr(pool, "_processes", None) or {})  # (shutdown forgets them)
            pool.shutdown(wait=False, cancel_futures=True)
            for process in processes.values():
                process.kill()

    def _warn(self, error: BaseException) -> None:
        if stopping.requested():  # killed by the stop: no compile falls back to this process, no warning
            self._warned = True
            return
        if not self._warned:
            self._warned = True
            print(
                f"warning: the port's worker processes failed ({type(error).__name__}: {error}); compiling in process",
                file=sys.stderr,
            )

    def outcome(self, key: Hashable, profile: str) -> Outcome | None:
        """The outcome computed ahead under `key` and `profile` (waiting for it), or None: not submitted, or the
        pool broke."""
        found = self._futures.pop((key, profile), None)
        if found is None:
            return None
        try:
            return found[0].result()[found[1]]
        except Exception as error:  # a broken pool, or a port that raised: compiled in process, as without a pool
            self._warn(error)
            return None

    def close(self) -> None:
        stopping.untrack(self)
        if self._pool is not None:
            if stopping.requested():
                self._kill()
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None

    def __enter__(self) -> PortPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
