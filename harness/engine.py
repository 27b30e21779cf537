"""Session: one run of scenarios against the references and the Python port, each process started once.

Owns the run's shape: slots of reference processes (one per worker thread), the order results
come back in, which references a case runs against, and turning each case into requests and
replays. Verdicts are verdict.judge's; the repository is repo.build's; lifecycle replays are
harness.lifecycle's.
"""

from __future__ import annotations

import queue
import subprocess
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import Any

from harness import lifecycle
from harness.model import CaseResult, CompileRequest, FieldDiff, Outcome, Replay, Scenario, Status
from harness.repo.build import MaterializedRepo, materialize_repo
from harness.repo.gitenv import isolated_env
from harness.runners.base import Runner
from harness.runners.manifest import ReferenceSpec
from harness.runners.python_port import PythonPortRunner
from harness.runners.references import (
    ReferenceUnderTest,
    applies,
    default_runner,
    profile_for_reference,
    with_baselines,
)
from harness.runners.releases import cache_root
from harness.verdict.diff import presence, structured_diff
from harness.verdict.judge import judge, judge_golden, judge_lifecycle, judge_variant
from memfs_prompt.profiles import DEFAULT, Profile, resolve_profile


def build_request(scenario: Scenario, repo: MaterializedRepo) -> CompileRequest:
    inputs = scenario.inputs
    return CompileRequest(
        memory_dir=repo.memory_dir,
        system=inputs["system"],
        agent_id=inputs["agent_id"],
        conversation_id=inputs["conversation_id"],
        now=inputs["now"],
        previous_message_count=inputs["previous_message_count"],
        include_memfs=inputs["include_memfs"],
        client_skills=scenario.client_skills,
    )


class Session:
    """One run: the cache, the isolated environment, and the references (each started once).

    With `jobs` > 1, `run` works on that many cases at a time, each worker with its own slot:
    a set of reference processes started once (slot 0 is `references`). Results come back in
    the order of the scenarios whatever `jobs` is.
    """

    def __init__(
        self,
        references: list[ReferenceSpec],
        *,
        profile_override: str | None = None,
        cache: Path | None = None,
        timeout: float = 60.0,
        runner_factory: Callable[[ReferenceSpec, Path], Runner] | None = None,
        port_factory: Callable[[Profile, dict[str, str]], Runner] | None = None,
        jobs: int = 1,
    ) -> None:
        if jobs < 1:
            raise ValueError(f"jobs must be 1 or more, not {jobs}")
        self.cache = cache or cache_root()
        self.home = self.cache / "home"
        self.ceiling = self.cache / "repos"
        self.git_env = isolated_env(self.home, self.ceiling)
        self.jobs = jobs
        self._factory = runner_factory or (lambda spec, cache: default_runner(spec, self.home, self.ceiling, timeout))
        self._specs = [(spec, profile_for_reference(spec, profile_override)) for spec in with_baselines(references)]
        self.references = self._new_slot()
        self._slots: list[list[ReferenceUnderTest]] = [self.references]
        self._started: set[int] = set()
        self._port_factory = port_factory or PythonPortRunner
        self._ports: dict[tuple[int, str], Runner] = {}
        self._lock = threading.Lock()

    def _new_slot(self) -> list[ReferenceUnderTest]:
        return [ReferenceUnderTest(self._factory(spec, self.cache), profile, spec) for spec, profile in self._specs]

    def _slot(self, index: int) -> list[ReferenceUnderTest]:
        with self._lock:
            while len(self._slots) <= index:
                self._slots.append(self._new_slot())
            return self._slots[index]

    def start(self, slot: int = 0) -> None:
        references = self._slot(slot)
        if slot not in self._started:
            for ref in references:
                ref.runner.start()
            self._started.add(slot)

    def port(self, profile: Profile, slot: int = 0) -> Runner:
        """The Python port for `profile` in slot `slot` (a lifecycle replay keeps state in it, so one per slot)."""
        with self._lock:
            key = (slot, profile.name)
            if key not in self._ports:
                self._ports[key] = self._port_factory(profile, self.git_env)
            return self._ports[key]

    def describe_references(self) -> list[dict[str, Any]]:
        """One entry per reference, from the slot that started it most; `starts` counts every slot's processes."""
        described = []
        for index in range(len(self._specs)):
            infos = [slot[index].runner.describe() for slot in self._slots]
            best = max(infos, key=lambda info: info.get("starts", 0))  # first of the most started
            if "starts" in best:
                best = {**best, "starts": sum(info.get("starts", 0) for info in infos)}
            described.append(best)
        return described

    def close(self) -> None:
        for slot in self._slots:
            for ref in slot:
                ref.runner.close()

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def run_case(self, scenario: Scenario, slot: int = 0, repo: MaterializedRepo | None = None) -> list[CaseResult]:
        """One scenario against every reference it applies to (or its golden output), with slot `slot`'s processes.

        `repo`: the scenario's repository, already built (`conformance fuzz` builds its own); else materialized."""
        if scenario.kind == "lifecycle":
            return self.run_lifecycle_case(scenario, slot)
        results: list[CaseResult] = []
        started = time.perf_counter()
        try:
            repo = repo or materialize_repo(scenario, self.cache)
        except Exception as error:  # the case is an error; the run goes on
            targets = ["golden"] if scenario.expect else [r.label for r in self.references]
            reason = f"could not build the repository: {type(error).__name__}: {error}"
            if isinstance(error, subprocess.CalledProcessError) and error.stderr:
                stderr = error.stderr.decode("utf-8", "replace") if isinstance(error.stderr, bytes) else error.stderr
                reason += f": {stderr.strip()[-500:]}"
            return [
                CaseResult(scenario.id, label, "", Status.ERROR, scenario.tags, str(scenario.path),
                           scenario.description, scenario.pins, reasons=[reason])
                for label in targets
            ]  # fmt: skip
        request = build_request(scenario, repo)
        if scenario.expect:
            profile = resolve_profile(scenario.expect.get("profile", DEFAULT.name))
            port = self.port(profile, slot).compile(request)
            status, diffs, reasons = judge_golden(scenario, port)
            results.append(
                self._result(scenario, "golden", profile, status, diffs, reasons, None, port, request, started)
            )
            return results
        self.start(slot)
        baselines: dict[ReferenceSpec, Outcome] = {}
        ports: dict[str, Outcome] = {}  # one port compile per profile: variants share their baseline's
        for ref in self._slot(slot):
            if not applies(scenario, ref):
                continue
            reference = ref.runner.compile(request)
            if ref.profile.name not in ports:
                ports[ref.profile.name] = self.port(ref.profile, slot).compile(request)
            port = ports[ref.profile.name]
            seen = ref.view.apply(reference, port)  # both records as this reference is compared (verdict.view)
            runtime_diffs: list[FieldDiff] = []
            if ref.spec is not None and ref.spec.is_variant:
                status, diffs, runtime_diffs, reasons = judge_variant(
                    scenario, ref.spec, reference, baselines.get(ref.spec.baseline), port
                )
            else:
                if ref.spec is not None:
                    baselines[ref.spec] = reference
                status, diffs, reasons = judge(scenario, ref.label, *seen, ref.view.fields)
            reasons += reference.notes
            result = self._result(
                scenario, ref.label, ref.profile, status, diffs, reasons, reference, port, request, started, seen
            )
            if reference.status != "error" and port.status != "error":
                result.compared = presence(*seen, ref.view.fields)
            if ref.spec is not None and ref.spec.is_variant:
                result.baseline, result.runtime_diffs = ref.spec.baseline.label, runtime_diffs
            results.append(result)
        return results

    def run_lifecycle_case(self, scenario: Scenario, slot: int = 0) -> list[CaseResult]:
        """A lifecycle probe replayed on each reference and the Python port (or on the port alone, golden)."""
        golden = resolve_profile(scenario.golden) if scenario.golden else None
        work = self.cache / "repos" / ".lifecycle"
        results = []
        targets: list[tuple[str, Profile, dict[str, Runner]]] = []
        if golden is not None:
            targets.append(("golden", golden, {"python": self.port(golden, slot)}))
        else:
            self.start(slot)
            for ref in self._slot(slot):
                if ref.spec is not None and ref.spec.is_variant:
                    continue  # lifecycle probes run under the baseline runtime only (docs/matrix.md)
                if not applies(scenario, ref):
                    continue
                targets.append(
                    (ref.label, ref.profile, {"reference": ref.runner, "python": self.port(ref.profile, slot)})
                )
        for label, profile, sides in targets:
            started = time.perf_counter()
            try:
                replay = lifecycle.replay(scenario, sides, work, self.cache)
            except Exception as error:  # the case is an error; the run goes on
                replay = Replay([], [], error=f"could not replay: {type(error).__name__}: {error}")
            status, reasons = judge_lifecycle(scenario, label, profile, replay)
            reference = Outcome("error", error=replay.error, stderr=replay.stderr) if replay.error else None
            results.append(
                CaseResult(
                    case_id=scenario.id, reference=label, profile=profile.name, status=status, tags=scenario.tags,
                    path=str(scenario.path), description=scenario.description, pins=scenario.pins,
                    diffs=replay.text_diffs, reasons=reasons, reference_outcome=reference,
                    seconds=time.perf_counter() - started, turns=[row.to_json() for row in replay.rows],
                )
            )  # fmt: skip
        return results

    def _result(self, scenario: Scenario, label: str, profile: Profile, status: Status, diffs: list[FieldDiff],
                reasons: list[str], reference: Outcome | None, port: Outcome, request: CompileRequest,
                started: float, seen: tuple[Outcome, Outcome] | None = None) -> CaseResult:  # fmt: skip
        """A compile result; the structured diff is of the records as compared (`seen`: the view's)."""
        compared_ref, compared_port = seen or (reference, port)
        return CaseResult(
            case_id=scenario.id, reference=label, profile=profile.name, status=status, tags=scenario.tags,
            path=str(scenario.path), description=scenario.description, pins=scenario.pins, diffs=diffs,
            reasons=reasons, reference_outcome=reference, port_outcome=port,
            structured=structured_diff(_expected_record(scenario, compared_ref), compared_port.record) if diffs else "",
            memory_dir=str(request.memory_dir), request={k: v for k, v in request.to_wire().items() if k != "op"},
            seconds=time.perf_counter() - started,
        )  # fmt: skip

    def run(
        self,
        scenarios: Iterable[Scenario],
        progress: Callable[[CaseResult], None] | None = None,
        stop: Callable[[], bool] | None = None,
    ) -> list[CaseResult]:
        """Every scenario, `jobs` at a time; results in scenario order (progress sees them as they finish).

        `stop` is asked after each finished case: once it says yes, no further case starts (-x, --maxfail).
        """
        scenarios = list(scenarios)
        if self.jobs == 1 or len(scenarios) < 2:
            results: list[CaseResult] = []
            for scenario in scenarios:
                for result in self.run_case(scenario):
                    results.append(result)
                    if progress:
                        progress(result)
                if stop and stop():
                    break
            return results
        free: queue.SimpleQueue[int] = queue.SimpleQueue()
        for slot in range(self.jobs):
            free.put(slot)

        def work(scenario: Scenario) -> list[CaseResult]:
            slot = free.get()
            try:
                return self.run_case(scenario, slot)
            finally:
                free.put(slot)

        with ThreadPoolExecutor(max_workers=self.jobs, thread_name_prefix="conformance") as pool:
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


def _expected_record(scenario: Scenario, reference: Outcome | None) -> dict[str, Any] | None:
    if reference is not None:
        return reference.record
    return {"coreMemory": (scenario.expect or {}).get("coreMemory")}
