"""Running cases `jobs` at a time: each worker thread holds one slot (its own reference processes) while a
case runs, results come back in scenario order, and `stop` (-x, --maxfail) keeps further cases from starting.
A run told to stop (harness.core.stopping: a signal, --run-timeout) starts no further case and drops the results of
the cases that finish after the stop (their processes were killed under them): they did not run."""

from __future__ import annotations

import contextlib
import queue
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed

from harness.core import stopping
from harness.core.model import CaseResult, Scenario
from harness.runners.references import ReferenceUnderTest, judged_against

RunCase = Callable[[Scenario, int], list[CaseResult]]


def run_in_slots(
    scenarios: list[Scenario],
    jobs: int,
    run_case: RunCase,
    progress: Callable[[CaseResult], None] | None = None,
    stop: Callable[[], bool] | None = None,
) -> list[CaseResult]:
    """Every scenario through `run_case(scenario, slot)`, `jobs` at a time, results in scenario order."""
    if jobs == 1 or len(scenarios) < 2:
        results: list[CaseResult] = []
        for scenario in scenarios:
            if stopping.requested():
                break
            with contextlib.suppress(stopping.Stopped):
                found = run_case(scenario, 0)
            if stopping.requested():
                break
            for result in found:
                results.append(result)
                if progress:
                    progress(result)
            if stop and stop():
                break
        return results
    free: queue.SimpleQueue[int] = queue.SimpleQueue()
    for slot in range(jobs):
        free.put(slot)

    def work(scenario: Scenario) -> list[CaseResult] | None:
        """The case's results; None when the run stopped before or while it ran."""
        if stopping.requested():
            return None
        slot = free.get()
        try:
            found = run_case(scenario, slot)
        except stopping.Stopped:
            return None
        finally:
            free.put(slot)
        return None if stopping.requested() else found

    with ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="conformance") as pool:
        futures = [pool.submit(work, scenario) for scenario in scenarios]
        for future in as_completed(futures):
            for result in future.result() or []:
                if progress:
                    progress(result)
            if (stop and stop()) or stopping.requested():
                for pending in futures:
                    pending.cancel()
                break
        return [result for future in futures if not future.cancelled() for result in future.result() or []]


def not_run(
    scenarios: list[Scenario], results: list[CaseResult], refs: list[ReferenceUnderTest]
) -> dict[str, list[str]]:
    """After a run told to stop: each case without a result, and the reference labels it was not run against."""
    if not stopping.requested():
        return {}
    ran = {result.case_id for result in results}
    return {s.id: judged_against(s, refs) for s in scenarios if s.id not in ran}
