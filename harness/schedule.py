"""Running cases `jobs` at a time: each worker thread holds one slot (its own reference processes) while a
case runs, results come back in scenario order, and `stop` (-x, --maxfail) keeps further cases from starting."""

from __future__ import annotations

import queue
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed

from harness.model import CaseResult, Scenario

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
            for result in run_case(scenario, 0):
                results.append(result)
                if progress:
                    progress(result)
            if stop and stop():
                break
        return results
    free: queue.SimpleQueue[int] = queue.SimpleQueue()
    for slot in range(jobs):
        free.put(slot)

    def work(scenario: Scenario) -> list[CaseResult]:
        slot = free.get()
        try:
            return run_case(scenario, slot)
        finally:
            free.put(slot)

    with ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="conformance") as pool:
        futures = [pool.submit(work, scenario) for scenario in scenarios]
        for future in as_completed(futures):
            for result in future.result():
                if progress:
                    progress(result)
            if stop and stop():
                for pending in futures:
                    pending.cancel()
                break
        return [result for future in futures if not future.cancelled() for result in future.result()]
