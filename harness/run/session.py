"""Session: one run of scenarios: every implementation under test against every reference, each process
started once.

Owns the run's shape: slots of reference processes (one per worker thread), the implementations
under test (`--impl`, harness.runners.implementations) and their runners per slot and profile, the
order results come back in, which references a case runs against, and turning each case into
requests and replays. Verdicts are verdict.judge's; the repository is repo.build's; lifecycle
replays are harness.run.lifecycle's; known failures outside the corpus are harness.run.expectations'; which reference
outcomes are read from the result store is harness.runners.result_store's (every reference runner is wrapped
there, in `_new_slot`; a lifecycle probe's reference side in `run_lifecycle_case`).
Profiles are names: the session never imports the code under test.
"""

from __future__ import annotations

import subprocess
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from harness.acquire.releases import cache_root
from harness.acquire.transpiler_cache import prune_transpiler_cache
from harness.cases.rules import Rule
from harness.core.model import (
    GOLDEN,
    CaseResult,
    CompileRequest,
    Divergence,
    FieldDiff,
    Outcome,
    Replay,
    Scenario,
    Status,
)
from harness.core.reference import ReferenceSpec
from harness.repo.build import MaterializedRepo, materialize_repo
from harness.repo.gitenv import isolated_env
from harness.run import lifecycle, op_case
from harness.run.capabilities import undeclared
from harness.run.schedule import not_run, run_in_slots
from harness.runners import result_store
from harness.runners.base import Runner
from harness.runners.implementations import DEFAULT, ImplContext, ImplSpec, make_runner
from harness.runners.references import (
    ReferenceUnderTest,
    applies,
    default_runner,
    profile_for_reference,
    view_for,
    with_baselines,
)
from harness.verdict.diff import presence, structured_diff
from harness.verdict.judge import golden_record, judge, judge_golden, judge_lifecycle, judge_variant
from letta_profiles import DEFAULT_PROFILE, resolve_profile_name

ImplFactory = Callable[[ImplSpec, str, ImplContext], Runner]
ExpectationSource = Any  # what the session asks of an expectations file (harness.run.expectations.Expectations)


def build_request(scenario: Scenario, repo: MaterializedRepo) -> CompileRequest:
    inputs = scenario.inputs
    return CompileRequest(
        memory_dir=repo.memory_dir,
        system=inputs["system"],
        agent_id=inputs["agent_id"],
        conversation_id=inputs["conversation_id"],
        now=inputs["now"],
        include_memfs=inputs["include_memfs"],
        previous_message_count=inputs["previous_message_count"],
        client_skills=scenario.client_skills,
    )


class Session:
    """One run: the cache, the isolated environment, the references (each started once) and the
    implementations under test.

    With `jobs` > 1, `run` works on that many cases at a time, each worker with its own slot:
    a set of reference processes started once (slot 0 is `references`) and its own implementation
    runners. Results come back in the order of the scenarios whatever `jobs` is, implementations in
    the order given within each reference.
    """

    def __init__(
        self,
        references: list[ReferenceSpec],
        *,
        implementations: Sequence[ImplSpec] = (DEFAULT,),
        expectations: Sequence[ExpectationSource] = (),
        profile_override: str | None = None,
        cache: Path | None = None,
        timeout: float = 60.0,
        runner_factory: Callable[[ReferenceSpec, Path], Runner] | None = None,
        impl_factory: ImplFactory | None = None,
        jobs: int = 1,
        memoize: bool | None = None,
        rules: Mapping[str, Rule] | None = None,
        impl_env: Mapping[str, str] | None = None,
    ) -> None:
        if jobs < 1:
            raise ValueError(f"jobs must be 1 or more, not {jobs}")
        if not implementations:
            raise ValueError("a run needs at least one implementation under test")
        self.cache = cache or cache_root()
        self.home = self.cache / "home"
        self.ceiling = self.cache / "repos"
        self.git_env = isolated_env(self.home, self.ceiling)
        self.jobs = jobs
        self.profile_override = profile_override  # `--profile`: every reference compared under this one
        self.implementations = list(dict.fromkeys(implementations))
        self.expectations = {e.implementation: e for e in expectations}
        self.rules: Mapping[str, Rule] = rules or {}  # the corpus's rules: which features a case needs
        self._context = ImplContext(self.git_env, self.home / "impl", self.ceiling, timeout, dict(impl_env or {}))
        self._factory = runner_factory or (lambda spec, cache: default_runner(spec, self.home, self.ceiling, timeout))
        # references' outcomes by content (harness.runners.result_store); None: every reference request runs
        remember = result_store.memoizing() if memoize is None else memoize
        self.store = result_store.open_store(self.cache) if remember else None
        self._specs = [(spec, profile_for_reference(spec, profile_override)) for spec in with_baselines(references)]
        self.references = self._new_slot()
        self._slots: list[list[ReferenceUnderTest]] = [self.references]
        self._started: set[int] = set()
        self._impl_factory = impl_factory or make_runner
        self._impls: dict[tuple[int, ImplSpec, str], Runner] = {}
        self._lock = threading.Lock()
        self.not_run: dict[str, list[str]] = {}  # a stopped run (harness.core.stopping): case id -> labels not run

    def _new_slot(self) -> list[ReferenceUnderTest]:
        return [
            ReferenceUnderTest(
                result_store.memoized(self._factory(spec, self.cache), self.store, self.ceiling), profile, spec
            )
            for spec, profile in self._specs
        ]

    def _slot(self, index: int) -> list[ReferenceUnderTest]:
        with self._lock:
            while len(self._slots) <= index:
                self._slots.append(self._new_slot())
            return self._slots[index]

    def slot_references(self, slot: int) -> list[ReferenceUnderTest]:
        """The references of worker slot `slot`, in the session's order: each slot has its own processes."""
        return self._slot(slot)

    def start(self, slot: int = 0) -> None:
        references = self._slot(slot)
        if slot not in self._started:
            for ref in references:
                ref.runner.start()
            self._started.add(slot)

    def impl(self, spec: ImplSpec, profile: str, slot: int = 0) -> Runner:
        """The runner of implementation `spec` under `profile` in slot `slot` (a lifecycle replay keeps state
        in it, so one per slot), started on first use; one for every profile when the implementation takes
        the profile from each request (`ImplSpec.per_profile`)."""
        key = (slot, spec, profile if spec.per_profile else "")
        with self._lock:
            runner = self._impls.get(key)
            if runner is None:
                runner = self._impls[key] = self._impl_factory(spec, profile, self._context)
                runner.start()
            return runner

    def compiles_in_process(self, impl: ImplSpec) -> bool:
        """Whether `impl` is the port run in this process (so worker processes can compile for it: port_pool)."""
        return impl.in_process and self._impl_factory is make_runner

    def port(self, profile: str, slot: int = 0) -> Runner:
        """The first implementation under test under `profile` (`diff-repo`, `show` and the tools use one)."""
        return self.impl(self.implementations[0], profile, slot)

    def describe_references(self) -> list[dict[str, Any]]:
        """One entry per reference, from the slot that started it most; `starts` counts every slot's processes."""
        return [self._described([slot[i].runner for slot in self._slots]) for i in range(len(self._specs))]

    def describe_implementations(self) -> list[dict[str, Any]]:
        """One entry per implementation under test (and profile it ran under), as its runners describe it."""
        described = []
        by_slot = sorted(self._impls.items(), key=lambda item: item[0][0])
        for spec in self.implementations:
            for profile in sorted({p for (_, s, p) in self._impls if s == spec}):
                runners = [r for (_, s, p), r in by_slot if (s, p) == (spec, profile)]
                entry = {"implementation": spec.label, **self._described(runners)}
                described.append({**entry, "profile": profile} if profile else entry)
        return described

    @staticmethod
    def _described(runners: list[Runner]) -> dict[str, Any]:
        infos = [runner.describe() for runner in runners]
        best = max(infos, key=lambda info: info.get("starts", 0))  # first of the most started
        return {**best, "starts": sum(info.get("starts", 0) for info in infos)} if "starts" in best else best

    def close(self) -> None:
        for runner in [ref.runner for slot in self._slots for ref in slot] + list(self._impls.values()):
            runner.close()
        if self.store is not None:
            self.store.close()
        prune_transpiler_cache(self.home)

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def expected(self, scenario: Scenario, impl: ImplSpec, label: str, profile: str) -> tuple[Divergence, ...]:
        """The implementation's known failures for this result, from its expectations file (`--expectations`)."""
        found = self.expectations.get(impl.label)
        return tuple(found.divergences_for(scenario, label, profile)) if found is not None else ()

    def undeclared(self, scenario: Scenario, impl: ImplSpec, profile: str, slot: int = 0) -> Outcome | None:
        """Not applicable without asking `impl`: a feature the case needs that it does not declare (capabilities)."""
        why = undeclared(scenario, profile, self.rules, lambda: self.impl(impl, profile, slot).features())
        return Outcome("unsupported", error=why) if why else None

    def run_case(self, scenario: Scenario, slot: int = 0, repo: MaterializedRepo | None = None) -> list[CaseResult]:
        """One scenario: every implementation against every reference it applies to (or its golden output),
        with slot `slot`'s processes.

        `repo`: the scenario's repository, already built (`conformance fuzz` builds its own); else materialized."""
        if scenario.kind == "lifecycle":
            return self.run_lifecycle_case(scenario, slot)
        if scenario.kind == "op":
            return self.run_op_case(scenario, slot, repo)
        if not scenario.expect and not any(applies(scenario, ref) for ref in self._slot(slot)):
            return self.not_applicable(scenario, self._slot(slot))
        started = time.perf_counter()
        try:
            repo = repo or materialize_repo(scenario, self.cache)
        except Exception as error:  # the case is an error; the run goes on
            return self._unbuilt(scenario, error)
        request = build_request(scenario, repo)
        if scenario.expect:
            return [self._golden(scenario, impl, request, slot, started) for impl in self.implementations]
        self.start(slot)
        baselines: dict[ReferenceSpec, Outcome] = {}
        outcomes: dict[tuple[ImplSpec, str], Outcome] = {}  # one compile per implementation and profile

        def outcome_of(impl: ImplSpec, profile: str) -> Outcome:
            if (impl, profile) not in outcomes:
                outcomes[impl, profile] = self.impl_compile(impl, profile, request, slot)
            return outcomes[impl, profile]

        results: list[CaseResult] = []
        for ref in self._slot(slot):
            if applies(scenario, ref):
                results += self.compile_against(scenario, ref, request, baselines, outcome_of, started, slot)
        return results

    def impl_compile(self, impl: ImplSpec, profile: str, request: CompileRequest, slot: int) -> Outcome:
        """Implementation `impl`'s outcome for `request` under `profile`, with slot `slot`'s runner."""
        return self.impl(impl, profile, slot).compile(replace(request, profile=profile))

    def compile_against(
        self,
        scenario: Scenario,
        ref: ReferenceUnderTest,
        request: CompileRequest,
        baselines: dict[ReferenceSpec, Outcome],
        outcome_of: Callable[[ImplSpec, str], Outcome],
        started: float,
        slot: int = 0,
    ) -> list[CaseResult]:
        """One compile case against one reference: every implementation's outcome compared with its answer.

        `baselines` collects the bun baselines' answers (a runtime variant is judged beside its baseline's);
        `outcome_of(impl, profile)` is the implementation's outcome, computed once per case and profile (never
        asked when it does not declare a feature the case needs: `undeclared`)."""
        reference = ref.runner.compile(request)
        if ref.spec is not None and not ref.spec.is_variant:
            baselines[ref.spec] = reference
        return [
            self._compared(
                scenario,
                impl,
                ref,
                reference,
                self.undeclared(scenario, impl, ref.profile, slot) or outcome_of(impl, ref.profile),
                baselines,
                request,
                started,
            )
            for impl in self.implementations
        ]

    def _compared(
        self,
        scenario: Scenario,
        impl: ImplSpec,
        ref: ReferenceUnderTest,
        reference: Outcome,
        outcome: Outcome,
        baselines: dict[ReferenceSpec, Outcome],
        request: CompileRequest,
        started: float,
    ) -> CaseResult:
        """One implementation's outcome against one reference's, as this pair is compared (core.fields)."""
        view = view_for(impl)
        seen = view.apply(reference, outcome)
        expected = self.expected(scenario, impl, ref.label, ref.profile)
        runtime_diffs: list[FieldDiff] = []
        if ref.spec is not None and ref.spec.is_variant:
            status, diffs, runtime_diffs, reasons = judge_variant(
                scenario,
                ref.spec,
                reference,
                baselines.get(ref.spec.baseline),
                outcome,
                view,
                impl_label=impl.label,
                expected=expected,
            )
        else:
            status, diffs, reasons = judge(
                scenario, ref.label, *seen, view.fields, impl_label=impl.label, expected=expected
            )
        reasons += reference.notes
        result = self._result(
            scenario, impl, ref.label, ref.profile, status, diffs, reasons, reference, outcome, request, started, seen
        )
        if reference.status in ("ok", "thrown") and outcome.status in ("ok", "thrown"):
            result.compared = presence(*seen, view.fields)
        if ref.spec is not None and ref.spec.is_variant:
            result.baseline, result.runtime_diffs = ref.spec.baseline.label, runtime_diffs
        return result

    def _golden(
        self, scenario: Scenario, impl: ImplSpec, request: CompileRequest, slot: int, started: float
    ) -> CaseResult:
        """A spec-only case: the implementation against the expected bytes the case quotes."""
        profile = resolve_profile_name((scenario.expect or {}).get("profile", DEFAULT_PROFILE))
        outcome = self.undeclared(scenario, impl, profile, slot) or self.impl_compile(impl, profile, request, slot)
        expected = self.expected(scenario, impl, GOLDEN, profile)
        view = view_for(impl)
        status, diffs, reasons = judge_golden(scenario, outcome, view, impl_label=impl.label, expected=expected)
        return self._result(scenario, impl, GOLDEN, profile, status, diffs, reasons, None, outcome, request, started)

    def _unbuilt(self, scenario: Scenario, error: Exception) -> list[CaseResult]:
        targets = [GOLDEN] if scenario.expect else [r.label for r in self.references]
        reason = f"could not build the repository: {type(error).__name__}: {error}"
        if isinstance(error, subprocess.CalledProcessError) and error.stderr:
            stderr = error.stderr.decode("utf-8", "replace") if isinstance(error.stderr, bytes) else error.stderr
            reason += f": {stderr.strip()[-500:]}"
        return [
            CaseResult.of_case(scenario, label, "", Status.ERROR, impl.label, reasons=[reason])
            for label in targets
            for impl in self.implementations
        ]

    def not_applicable(
        self,
        scenario: Scenario,
        refs: list[ReferenceUnderTest],
        why: Callable[[ReferenceUnderTest], str] | None = None,
        **rest: Any,
    ) -> list[CaseResult]:
        """The case not applicable against each of `refs` (variants left out), one result per implementation,
        saying why: `why(ref)`, by default that the case's `profiles` name none of the run's references (and
        which --profile to give). `rest`: more fields of each result (`reference_outcome`)."""
        named = ", ".join(scenario.profiles)

        def unnamed(ref: ReferenceUnderTest) -> str:
            return (
                f"its profiles ({named}) name neither the reference {ref.label} nor the profile it is "
                f"compared under ({ref.profile}): run it with --profile {scenario.profiles[0]}, or with "
                "a --reference of one of its profiles"
            )

        return [
            CaseResult.of_case(
                scenario,
                ref.label,
                ref.profile,
                Status.NOT_APPLICABLE,
                impl.label,
                reasons=[(why or unnamed)(ref)],
                **rest,
            )
            for ref in refs
            if not ref.is_variant
            for impl in self.implementations
        ]

    def _lifecycle_targets(
        self, scenario: Scenario, slot: int, refs: list[ReferenceUnderTest] | None
    ) -> list[tuple[str, str, Runner | None]]:
        """(label, profile, reference runner) of each side a lifecycle probe is replayed against: the golden
        record alone, or each reference the case applies to (started when they are slot `slot`'s)."""
        if scenario.golden:
            return [(GOLDEN, resolve_profile_name(scenario.golden), None)]
        if refs is None:
            self.start(slot)
        return [
            (ref.label, ref.profile, ref.runner)
            for ref in (self._slot(slot) if refs is None else refs)
            if not ref.is_variant  # lifecycle probes run under the baseline runtime only (docs/matrix.md)
            and applies(scenario, ref)
        ]

    def run_lifecycle_case(
        self, scenario: Scenario, slot: int = 0, refs: list[ReferenceUnderTest] | None = None, shared: Any = None
    ) -> list[CaseResult]:
        """A lifecycle probe replayed on each reference and each implementation (or on the implementations
        alone, golden). `refs`: only against these (started by the caller), not slot `slot`'s references.
        `shared` (harness.run.by_reference.ImplLifecycleSides): the implementations' sides, run once per profile and
        handoff."""
        work = self.cache / "repos" / ".lifecycle"
        targets = self._lifecycle_targets(scenario, slot, refs)
        if not targets:
            return self.not_applicable(scenario, self._slot(slot))
        results = []
        steps = lifecycle.wire_steps(scenario)
        for label, profile, reference in targets:
            for impl in self.implementations:
                started = time.perf_counter()
                runner = self.impl(impl, profile, slot)
                probe = None if reference is None else result_store.for_probe(reference, scenario, self.cache, steps)
                try:
                    share = None if shared is None else shared.sides_of(impl, profile)
                    unserved = self.undeclared(scenario, impl, profile, slot)
                    replay = (
                        Replay([], [], unsupported=unserved.error)
                        if unserved
                        else lifecycle.replay(scenario, probe, runner, impl.label, work, self.cache, profile, share)
                    )
                except Exception as error:  # the case is an error; the run goes on
                    replay = Replay([], [], error=f"could not replay: {type(error).__name__}: {error}")
                expected = self.expected(scenario, impl, label, profile)
                status, reasons = judge_lifecycle(
                    scenario, label, profile, replay, impl_label=impl.label, expected=expected
                )
                failed = Outcome("error", error=replay.error, stderr=replay.stderr) if replay.error else None
                results.append(
                    CaseResult.of_case(
                        scenario,
                        label,
                        profile,
                        status,
                        impl.label,
                        diffs=replay.text_diffs,
                        reasons=reasons,
                        reference_outcome=failed,
                        seconds=time.perf_counter() - started,
                        turns=[row.to_json() for row in replay.rows],
                        cached=result_store.served_key(probe),
                    )
                )
        return results

    def run_op_case(self, scenario: Scenario, slot: int = 0, repo: MaterializedRepo | None = None) -> list[CaseResult]:
        """An op case (cases/ops/) against each baseline reference of slot `slot` it applies to (run.op_case)."""
        refs = [ref for ref in self._slot(slot) if not ref.is_variant and applies(scenario, ref)]
        if not refs:
            return self.not_applicable(scenario, self._slot(slot))
        try:
            repo = repo or materialize_repo(scenario, self.cache)
        except Exception as error:  # the case is an error; the run goes on
            return self._unbuilt(scenario, error)
        self.start(slot)
        return [result for ref in refs for result in op_case.op_against(self, scenario, ref, repo, slot)]

    def _result(
        self,
        scenario: Scenario,
        impl: ImplSpec,
        label: str,
        profile: str,
        status: Status,
        diffs: list[FieldDiff],
        reasons: list[str],
        reference: Outcome | None,
        outcome: Outcome,
        request: CompileRequest,
        started: float,
        seen: tuple[Outcome, Outcome] | None = None,
    ) -> CaseResult:
        """A compile result; the structured diff is of the records as compared (`seen`: the view's)."""
        compared_ref, compared_impl = seen or (reference, outcome)
        expected = compared_ref.record if compared_ref is not None else golden_record(scenario)
        return CaseResult.of_case(
            scenario,
            label,
            profile,
            status,
            impl.label,
            diffs=diffs,
            reasons=reasons,
            reference_outcome=reference,
            impl_outcome=outcome,
            structured=structured_diff(expected, compared_impl.record) if diffs else "",
            memory_dir=str(request.memory_dir),
            request={k: v for k, v in request.to_wire().items() if k != "op"},
            seconds=time.perf_counter() - started,
            cached=reference.cache_key if reference is not None else "",
        )

    def run(
        self,
        scenarios: Iterable[Scenario],
        progress: Callable[[CaseResult], None] | None = None,
        stop: Callable[[], bool] | None = None,
    ) -> list[CaseResult]:
        """Every scenario, `jobs` at a time; results in scenario order (progress sees them as they finish).

        `stop` is asked after each finished case: once it says yes, no further case starts (-x, --maxfail);
        a run told to stop (harness.core.stopping) records the cases that did not run in `not_run`."""
        results = run_in_slots(listed := list(scenarios), self.jobs, self.run_case, progress, stop)
        self.not_run.update(not_run(listed, results, self.references))
        return results
