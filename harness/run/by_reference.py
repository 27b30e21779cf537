"""Running a matrix reference by reference: each worker takes one reference (a column of the matrix), starts
its process once, sends it every case in batches, closes it, and takes the next. A worker that finds every
column started helps with the one that has the most batches left, in a process of its own (so the last
column of a cold matrix, or the one newly pinned release of a warm one, runs on every core).

Why not case by case (harness.run.schedule): there every worker holds a process of every reference, so a matrix
of 35 releases at -j 2 keeps 70 bun processes alive and starts each release twice. Here `jobs` processes
are alive at a time and each release starts once (a column that is helped, once more per helper). Every
case's repository is built once per run, before the first column, and each implementation's outcome is
computed once per case and profile, whichever column asks first (the others wait for it); so is its side
of a lifecycle probe, once per profile and what the reference handed it (the ids upstream chose: the same
on every release that chooses alike). Results come back in the order `Session.run_case` gives them (cases
in order, references in the session's order within a case), so the report is the same either way.

A run told to stop (harness.core.stopping) starts no further batch, case or column; a result computed after the stop
is dropped (its reference may have been killed under it), and what did not run is recorded in
`session.not_run` (case id -> the reference labels it did not run against).
"""

from __future__ import annotations

import collections
import contextlib
import threading
import time
from collections.abc import Callable, Hashable
from concurrent.futures import Future, ThreadPoolExecutor
from functools import partial
from typing import Any, TypeVar

from harness.acquire.transpiler_cache import prune_transpiler_cache
from harness.core import stopping
from harness.core.model import CaseResult, CompileRequest, Outcome, Scenario
from harness.core.reference import ReferenceSpec
from harness.repo.build import MaterializedRepo, materialize_repo
from harness.run import op_case
from harness.run.lifecycle import ImplSide, ShareSides, SideRun
from harness.run.port_pool import PortPool
from harness.run.session import Session, build_request
from harness.runners.implementations import ImplSpec
from harness.runners.references import ReferenceUnderTest, applies, judged_against

T = TypeVar("T")
BATCH = 25  # requests sent ahead to a reference; a polluting answer ends the driver and costs the rest of its batch
AHEAD = 100  # port compiles below which worker processes (a spawn and an import each) are not worth starting


class ComputedOnce:
    """Results computed once per key, shared by the columns: the first column to ask computes it; a column
    asking meanwhile waits for that result instead of computing it again."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._futures: dict[Hashable, Future[Any]] = {}

    def get(self, key: Hashable, compute: Callable[[], T]) -> T:
        with self._lock:
            future = self._futures.get(key)
            mine = future is None
            if future is None:
                future = self._futures[key] = Future()
        if mine:
            try:
                future.set_result(compute())
            except BaseException as error:  # waiting columns see it too, never a hang
                future.set_exception(error)
        return future.result()


class ImplOutcomes(ComputedOnce):
    """One compile case's implementation outcomes, each computed once per (implementation, profile)."""

    def __init__(self, compute: Callable[..., Outcome]) -> None:  # compute(impl, profile, slot=slot)
        super().__init__()
        self._compute = compute

    def outcome_of(self, impl: ImplSpec, profile: str, slot: int) -> Outcome:
        return self.get((impl, profile), partial(self._compute, impl, profile, slot=slot))


class ImplLifecycleSides:
    """One lifecycle case's implementation sides, each run once per (implementation, profile, handoff), in `kept`
    (keyed by case too: a run's own, or one a caller keeps across runs, as a history does for one probe against
    many commits' modules); the in-process port's run in the port's worker processes when the run has them."""

    def __init__(self, session: Session, ahead: PortPool, case: str, kept: ComputedOnce) -> None:
        self._session, self._ahead, self._case, self._kept = session, ahead, case, kept

    def sides_of(self, impl: ImplSpec, profile: str) -> ShareSides:
        """What harness.run.lifecycle.replay shares `impl`'s sides under `profile` with."""
        elsewhere = self._session.compiles_in_process(impl)

        def share(side: ImplSide, run: Callable[[], SideRun]) -> SideRun:
            def compute() -> SideRun:
                found = self._ahead.side(side, profile) if elsewhere else None
                return run() if found is None else found

            return self._kept.get((impl, profile, self._case, *side.handoff), compute)

        return share


class Column:
    """One reference's work in a matrix: its cases in batches, taken by the workers that run it (the one that
    started it, and any that have nothing else left and so help with the rest in a process of their own)."""

    def __init__(self, position: int, ref: ReferenceUnderTest, batches: list[list[Scenario]]) -> None:
        self.position, self.ref = position, ref
        self._batches = collections.deque(batches)
        self._pending = len(batches)
        self._lock = threading.Lock()
        self.started = False
        self.done = threading.Event()
        if not batches:
            self.done.set()

    def take(self) -> list[Scenario] | None:
        with self._lock:
            return self._batches.popleft() if self._batches else None

    def finished(self) -> None:
        """One batch taken earlier is done (its results are in)."""
        with self._lock:
            self._pending -= 1
            if self._pending == 0:
                self.done.set()

    @property
    def remaining(self) -> int:
        with self._lock:
            return len(self._batches)


def run_by_reference(
    session: Session, scenarios: list[Scenario], sides: ComputedOnce | None = None
) -> list[CaseResult]:
    """Every scenario against every reference of the session, column by column, `session.jobs` at a time.
    `sides`: where the implementations' lifecycle sides are kept (ImplLifecycleSides), for a caller that runs the
    same probes again in another session; else this run's own."""
    return ByReferenceRun(session, scenarios, sides).run()


class ByReferenceRun:
    """One run by reference: the cases' repositories and requests, the columns and the results per cell."""

    def __init__(self, session: Session, scenarios: list[Scenario], sides: ComputedOnce | None) -> None:
        self.session, self.scenarios = session, scenarios
        self.columns = columns = session.references
        self.index = index = {id(scenario): i for i, scenario in enumerate(scenarios)}
        # cells[i][c]: case i's results against column c; whole[i]: a case judged without columns
        self.cells: list[dict[int, list[CaseResult]]] = [{} for _ in scenarios]
        self.whole: dict[int, list[CaseResult]] = {}
        self.repos: dict[int, MaterializedRepo] = {}
        self.compiled = [s for s in scenarios if s.kind == "compile"]
        self.nowhere = {  # judged not applicable against every reference, as run_case would
            index[id(s)] for s in scenarios if not (s.expect or s.golden or any(applies(s, ref) for ref in columns))
        }
        for i, scenario in enumerate(scenarios):
            if scenario.expect or scenario.golden or i in self.nowhere:
                self.whole[i] = []  # golden, or applies to no reference: judged without columns (no reference runs)
        self.requests: dict[int, CompileRequest] = {}  # one request per compile case, sent to every column
        self.outcomes: dict[int, ImplOutcomes] = {}
        self.ahead = PortPool(session.jobs, session.git_env)  # the in-process port's work, in processes of its own
        kept = ComputedOnce() if sides is None else sides
        self.probes = {
            index[id(s)]: ImplLifecycleSides(session, self.ahead, s.id, kept)
            for s in scenarios
            if s.kind == "lifecycle"
        }
        self.baselines: dict[int, dict[ReferenceSpec, Outcome]] = {index[id(s)]: {} for s in self.compiled}
        self.work: list[Column] = []
        self.by_spec: dict[ReferenceSpec, Column] = {}
        self._lock = threading.Lock()

    def run(self) -> list[CaseResult]:
        session = self.session
        with ThreadPoolExecutor(max_workers=session.jobs, thread_name_prefix="conformance") as pool, self.ahead:
            built = [s for s in self.scenarios if s.kind in ("compile", "op") and self.index[id(s)] not in self.whole]
            list(pool.map(self.build, built))
            self.prepare()
            for future in [pool.submit(self.worker, slot) for slot in range(session.jobs)]:
                future.result()
        self.judge_without_columns()
        results: list[CaseResult] = []
        for i in range(len(self.scenarios)):
            if i in self.whole:
                results += self.whole[i]
            else:
                results += [result for c in range(len(self.columns)) for result in self.cells[i].get(c, [])]
        return results

    def build(self, scenario: Scenario) -> None:
        if stopping.requested():
            return
        try:
            self.repos[self.index[id(scenario)]] = materialize_repo(scenario, self.session.cache)
        except Exception:  # run_case builds it again and reports why it cannot
            self.whole.setdefault(self.index[id(scenario)], [])

    def prepare(self) -> None:
        """The compile cases' requests, the port's work started ahead when worth it, and the columns' batches."""
        columns, index = self.columns, self.index
        for scenario in self.compiled:
            i = index[id(scenario)]
            if i in self.repos:
                self.requests[i] = build_request(scenario, self.repos[i])
                self.outcomes[i] = ImplOutcomes(partial(self.impl_outcome, i))
        compiles = port_compiles(self.session, columns, self.scenarios, self.requests, index)
        if sum(len(p) for _, p, _ in compiles) + len(self.probes) * len(columns) >= AHEAD:  # a probe: a side per column
            self.ahead.start(compiles)
        positions = {id(ref): c for c, ref in enumerate(columns)}
        for ref in profiles_spread(columns):
            cases = [s for s in self.scenarios if index[id(s)] not in self.whole and applies(s, ref)]
            batches = [cases[b : b + BATCH] for b in range(0, len(cases), BATCH)]
            self.work.append(Column(positions[id(ref)], ref, batches))
        self.by_spec = {column.ref.spec: column for column in self.work if column.ref.spec is not None}

    def next_column(self) -> Column | None:
        """A column no worker has started (in `profiles_spread` order), else the one with the most left to help."""
        with self._lock:
            for column in self.work:
                if not column.started:
                    column.started = True
                    return column
            helped = max(self.work, key=lambda c: c.remaining, default=None)
            return helped if helped is not None and helped.remaining > 1 else None

    def run_batch(self, ref: ReferenceUnderTest, position: int, batch: list[Scenario], slot: int) -> None:
        index, requests = self.index, self.requests
        ref.runner.prefetch([requests[index[id(s)]] for s in batch if index[id(s)] in requests])
        for scenario in batch:
            stopping.check()
            i = index[id(scenario)]
            if scenario.kind == "lifecycle":
                if not ref.is_variant:  # lifecycle probes run under the baseline runtime only
                    found = self.session.run_lifecycle_case(scenario, slot, refs=[ref], shared=self.probes[i])
                    stopping.check()  # a result finished after the stop is dropped, never reported
                    self.cells[i][position] = found
                continue
            if scenario.kind == "op":
                if not ref.is_variant and i in self.repos:  # op cases too run under the baseline runtime only
                    found = op_case.op_against(self.session, scenario, ref, self.repos[i], slot)
                    stopping.check()
                    self.cells[i][position] = found
                continue
            outcome_of = partial(self.outcomes[i].outcome_of, slot=slot)
            found = self.session.compile_against(
                scenario, ref, requests[i], self.baselines[i], outcome_of, time.perf_counter(), slot
            )
            stopping.check()
            self.cells[i][position] = found

    def worker(self, slot: int) -> None:
        with contextlib.suppress(stopping.Stopped):  # told to stop: this worker takes nothing more
            self.work_on_columns(slot)

    def work_on_columns(self, slot: int) -> None:
        while not stopping.requested() and (column := self.next_column()) is not None:
            ref = self.session.slot_references(slot)[column.position]  # this worker's own process of that reference
            baseline = self.by_spec.get(ref.spec.baseline) if ref.is_variant and ref.spec is not None else None
            if baseline is not None:
                baseline.done.wait()  # judged beside its baseline's answers
            ref.runner.start()
            try:
                while (batch := column.take()) is not None:
                    try:
                        self.run_batch(ref, column.position, batch, slot)
                    finally:
                        column.finished()
            finally:
                ref.runner.close()  # the next column's process takes its memory
                prune_transpiler_cache(self.session.home)  # and bun's cache stays under its bound as the matrix goes

    def impl_outcome(self, i: int, impl: ImplSpec, profile: str, slot: int) -> Outcome:
        stopping.check()  # (a pool killed by the stop must not turn into compiles in process)
        found = self.ahead.outcome((i, impl), profile)
        if found is None:
            return self.session.impl_compile(impl, profile, self.requests[i], slot)
        self.session.impl(impl, profile, slot)  # the report describes the implementation as when it compiles here
        return found

    def judge_without_columns(self) -> None:
        """The cases no column ran: not applicable anywhere, golden or unbuilt; and what a stop left undone."""
        session, columns, whole = self.session, self.columns, self.whole
        for i, scenario in enumerate(self.scenarios):
            if i in self.nowhere:  # not applicable anywhere: judged without running anything, stopped or not
                whole[i] = session.not_applicable(scenario, columns)
            elif i in whole and not stopping.requested():  # golden or unbuilt: no reference process starts for these
                whole[i] = session.run_case(scenario)
            elif i in whole:
                del whole[i]
                session.not_run[scenario.id] = judged_against(scenario, columns)
            elif stopping.requested():
                done = {columns[c].label for c in self.cells[i]}
                if missing := [label for label in judged_against(scenario, columns) if label not in done]:
                    session.not_run[scenario.id] = missing


def port_compiles(
    session: Session,
    columns: list[ReferenceUnderTest],
    scenarios: list[Scenario],
    requests: dict[int, CompileRequest],
    index: dict[int, int],
) -> list[tuple[Hashable, list[str], CompileRequest]]:
    """The in-process port's compiles a matrix needs, as PortPool work: each compile case, keyed (case, port),
    under the profiles of the columns it applies to, in the order the columns ask (cases in order, profiles as
    they start)."""
    ports = [impl for impl in session.implementations if session.compiles_in_process(impl)]
    profiles = list(dict.fromkeys(ref.profile for ref in profiles_spread(columns)))
    work: list[tuple[Hashable, list[str], CompileRequest]] = []
    for scenario in scenarios:
        i = index[id(scenario)]
        if i in requests:
            applicable = [p for p in profiles if any(r.profile == p and applies(scenario, r) for r in columns)]
            work += [((i, impl), applicable, requests[i]) for impl in ports if applicable]
    return work


def profiles_spread(columns: list[ReferenceUnderTest]) -> list[ReferenceUnderTest]:
    """The order columns start in: the first column of each profile before any second one, so that workers
    compute the implementations' outcomes for different profiles side by side (a column whose profile another
    column is computing would wait for it); runtime variants last, after the baselines they wait for."""
    seen: dict[str, int] = {}
    rank = []
    for ref in columns:
        rank.append(seen.get(ref.profile, 0))
        seen[ref.profile] = rank[-1] + (not ref.is_variant)
    order = sorted(range(len(columns)), key=lambda c: (columns[c].is_variant, rank[c], c))
    return [columns[c] for c in order]
