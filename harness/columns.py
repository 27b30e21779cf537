"""Running a matrix reference by reference: each worker takes one reference (a column of the matrix), starts
its process once, sends it every case in batches, closes it, and takes the next.

Why not case by case (harness.schedule): there every worker holds a process of every reference, so a matrix
of 35 releases at -j 2 keeps 70 bun processes alive and starts each release twice. Here `jobs` processes
are alive at a time and each release starts once. Every case's repository is built once per run, before
the first column, and each implementation's outcome is computed once per case and profile, whichever column
asks first (the others wait for it); so is its side of a lifecycle probe, once per profile and what the
reference handed it (the ids upstream chose: the same on every release that chooses alike). Results come
back in the order `Session.run_case` gives them (cases in order, references in the session's order within a
case), so the report is the same either way.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Hashable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from functools import partial
from typing import Any, TypeVar

from harness.engine import Session, build_request
from harness.model import CaseResult, CompileRequest, Outcome, Scenario
from harness.repo.build import MaterializedRepo, materialize_repo
from harness.runners.implementations import ImplSpec
from harness.runners.manifest import ReferenceSpec
from harness.runners.references import ReferenceUnderTest, applies
from harness.runners.transpiler_cache import prune_transpiler_cache

T = TypeVar("T")
BATCH = 25  # requests sent ahead to a reference; a polluting answer ends the driver and costs the rest of its batch


class Shared:
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

    def under(self, prefix: tuple[Any, ...]) -> Callable[[tuple[Any, ...], Callable[[], T]], T]:
        """`get` for keys that begin with `prefix` (an implementation and a profile)."""
        return lambda key, compute: self.get((*prefix, *key), compute)


class SharedOutcomes(Shared):
    """One case's implementation outcomes per (implementation, profile)."""

    def __init__(self, compute: Callable[..., Outcome]) -> None:  # compute(impl, profile, slot=slot)
        super().__init__()
        self._compute = compute

    def outcome_of(self, impl: ImplSpec, profile: str, slot: int) -> Outcome:
        return self.get((impl, profile), partial(self._compute, impl, profile, slot=slot))


def run_by_reference(session: Session, scenarios: list[Scenario]) -> list[CaseResult]:
    """Every scenario against every reference of the session, column by column, `session.jobs` at a time."""
    columns = session.references
    index = {id(scenario): i for i, scenario in enumerate(scenarios)}
    # cells[i][c]: case i's results against column c; whole[i]: a case judged without columns
    cells: list[dict[int, list[CaseResult]]] = [{} for _ in scenarios]
    whole: dict[int, list[CaseResult]] = {}
    repos: dict[int, MaterializedRepo] = {}
    compiled = [s for s in scenarios if s.kind != "lifecycle"]
    nowhere = {  # judged not applicable against every reference, as run_case would
        index[id(s)] for s in scenarios if not (s.expect or s.golden or any(applies(s, ref) for ref in columns))
    }
    for i, scenario in enumerate(scenarios):
        if scenario.expect or scenario.golden or i in nowhere:
            whole[i] = []  # golden, or applies to no reference: judged without columns (no reference runs)
    slots: queue.SimpleQueue[int] = queue.SimpleQueue()
    for slot in range(session.jobs):
        slots.put(slot)

    @contextmanager
    def slot_held() -> Iterator[int]:
        slot = slots.get()
        try:
            yield slot
        finally:
            slots.put(slot)

    def build(scenario: Scenario) -> None:
        try:
            repos[index[id(scenario)]] = materialize_repo(scenario, session.cache)
        except Exception:  # run_case builds it again and reports why it cannot
            whole.setdefault(index[id(scenario)], [])

    requests: dict[int, CompileRequest] = {}  # one request per compile case, sent to every column
    outcomes: dict[int, SharedOutcomes] = {}
    sides = {index[id(s)]: Shared() for s in scenarios if s.kind == "lifecycle"}  # the implementations' sides
    baselines: dict[int, dict[ReferenceSpec, Outcome]] = {index[id(s)]: {} for s in compiled}
    done = {id(ref): threading.Event() for ref in columns}
    by_spec = {ref.spec: ref for ref in columns if ref.spec is not None}

    def run_column(ref: ReferenceUnderTest) -> None:
        if ref.is_variant and ref.spec is not None and ref.spec.baseline in by_spec:
            done[id(by_spec[ref.spec.baseline])].wait()  # judged beside its baseline's answers
        try:
            with slot_held() as slot:
                ref.runner.start()
                work = [s for s in scenarios if index[id(s)] not in whole and applies(s, ref)]
                for start in range(0, len(work), BATCH):
                    batch = work[start : start + BATCH]
                    ref.runner.prefetch([requests[index[id(s)]] for s in batch if s.kind != "lifecycle"])
                    for scenario in batch:
                        i = index[id(scenario)]
                        if scenario.kind == "lifecycle":
                            if not ref.is_variant:  # lifecycle probes run under the baseline runtime only
                                cells[i][id(ref)] = session.run_lifecycle_case(
                                    scenario, slot, refs=[ref], shared=sides[i]
                                )
                            continue
                        cells[i][id(ref)] = session.compile_against(
                            scenario,
                            ref,
                            requests[i],
                            baselines[i],
                            partial(outcomes[i].outcome_of, slot=slot),
                            time.perf_counter(),
                        )
                ref.runner.close()  # the next column's process takes its memory
                prune_transpiler_cache(session.home)  # and bun's cache stays under its bound as the matrix goes
        finally:
            done[id(ref)].set()

    with ThreadPoolExecutor(max_workers=session.jobs, thread_name_prefix="conformance") as pool:
        list(pool.map(build, [s for s in compiled if index[id(s)] not in whole]))
        for scenario in compiled:
            i = index[id(scenario)]
            if i in repos:
                requests[i] = build_request(scenario, repos[i])
                outcomes[i] = SharedOutcomes(partial(session.impl_compile, request=requests[i]))
        futures = [pool.submit(run_column, ref) for ref in columns]
        for future in futures:
            future.result()
    for i, scenario in enumerate(scenarios):
        if i in whole:  # golden, unbuilt or not applicable: no reference process starts for these
            whole[i] = session.not_applicable(scenario, columns) if i in nowhere else session.run_case(scenario)
    results: list[CaseResult] = []
    for i in range(len(scenarios)):
        if i in whole:
            results += whole[i]
        else:
            results += [result for ref in columns for result in cells[i].get(id(ref), [])]
    return results
