"""Running scenarios against implementations and deciding each case's verdict.

A case passes only when every implementation ran and agreed. A reference that could not
run is an error. A recorded divergence that still diverges is `known-divergence`; one that
no longer diverges is `stale-divergence`, a failure, so the list stays true.

The port is bun-faithful. A reference run under another runtime or locale (a *variant*,
`0.32.18@node/da_DK.UTF-8`) is judged against the same release under bun (its *baseline*,
always run alongside): where the variant's output equals the baseline's, the port is judged as
usual; where it differs, the runtime changed upstream's bytes, and the case is
`runtime-divergence` (not a failure), with the fields the runtime changed.
"""

from __future__ import annotations

import queue
import subprocess
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memfs_prompt.profiles import DEFAULT, Profile, profile_for_release, resolve_profile

from . import lifecycle
from .compare import FieldDiff, compare_outcomes, field_presence, structured_diff
from .gitenv import isolated_env
from .releases import ReferenceSpec, bundle_version, cache_root
from .repo import MaterializedRepo, materialize_repo
from .runners.base import CompileRequest, Outcome, Runner
from .runners.bun_reference import BunReferenceRunner
from .runners.node_reference import NodeReferenceRunner
from .runners.python_port import PythonPortRunner
from .scenario import Scenario

PASS, FAIL, KNOWN, STALE, ERROR = "pass", "fail", "known-divergence", "stale-divergence", "error"
RUNTIME = "runtime-divergence"  # a variant's output differs from bun's for the same release: not the port's doing
FAILING = (FAIL, STALE, ERROR)


@dataclass
class CaseResult:
    case_id: str
    reference: str  # reference label, or `golden` for spec-only cases
    profile: str
    status: str
    tags: tuple[str, ...]
    path: str
    description: str = ""
    pins: str = ""
    diffs: list[FieldDiff] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)
    reference_outcome: Outcome | None = None
    port_outcome: Outcome | None = None
    structured: str = ""
    memory_dir: str = ""
    request: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0
    turns: list[dict[str, Any]] = field(default_factory=list)  # lifecycle cases: one row per step
    compared: dict[str, str] = field(default_factory=dict)  # field -> how it was compared (compare.field_presence)
    baseline: str = ""  # for a runtime/locale variant: the bun reference it was checked against
    runtime_diffs: list[FieldDiff] = field(default_factory=list)  # variant vs baseline (upstream vs upstream)

    @property
    def failed(self) -> bool:
        return self.status in FAILING


@dataclass
class ReferenceUnderTest:
    """A reference and the Python profile it is compared with."""

    runner: Runner
    profile: Profile
    spec: ReferenceSpec | None = None

    @property
    def label(self) -> str:
        """From the runner's name (`letta-code@0.32.18@node` -> `0.32.18@node`), so a stand-in runner keeps its own."""
        return (
            self.runner.name.removeprefix("letta-code@")
            if self.runner.name.startswith("letta-code@")
            else self.runner.name
        )


def default_runner(spec: ReferenceSpec, home: Path, ceiling: Path | None, timeout: float) -> Runner:
    runner = NodeReferenceRunner if spec.runtime == "node" else BunReferenceRunner
    return runner(spec, home, ceiling, timeout)


def with_baselines(specs: list[ReferenceSpec]) -> list[ReferenceSpec]:
    """The specs in order, each variant preceded by its bun baseline when that is not given."""
    ordered: list[ReferenceSpec] = []
    for spec in specs:
        if spec.is_variant and spec.baseline not in ordered:
            ordered.append(spec.baseline)  # before its variant, even when it is named later
        if spec not in ordered:
            ordered.append(spec)
    return ordered


def judge_variant(
    scenario: Scenario, spec: ReferenceSpec, variant: Outcome, baseline: Outcome | None, port: Outcome
) -> tuple[str, list[FieldDiff], list[FieldDiff], list[str]]:
    """Verdict for a runtime/locale variant: (status, port diffs, variant-vs-baseline diffs, reasons)."""
    if variant.status == "error":
        return ERROR, [], [], [f"reference could not run: {variant.error}"]
    if baseline is None or baseline.status == "error":
        why = baseline.error if baseline else "it did not run"
        return (
            ERROR,
            [],
            [],
            [f"baseline {spec.baseline.label} (bun) could not run, so runtime drift is unknown: {why}"],
        )
    drift = compare_outcomes(baseline, variant)
    if not drift:
        status, diffs, reasons = judge(scenario, spec.base_label, variant, port)
        return status, diffs, [], reasons
    fields = ", ".join(d.field for d in drift)
    where = f"{spec.runtime}" + (f" with LANG={spec.locale}" if spec.locale else "")
    reasons = [
        f"under {where}, letta-code {spec.base_label} itself outputs different {fields} than under bun: "
        "runtime drift, not a port failure (the port follows bun; see the bun column for the port's verdict)"
    ]
    return RUNTIME, compare_outcomes(variant, port), drift, reasons


def profile_for_reference(spec: ReferenceSpec, override: str | None) -> Profile:
    if override:
        return resolve_profile(override)
    version = spec.value.removeprefix("letta-code@") if spec.kind == "npm" else None
    if spec.kind == "bundle":
        version = bundle_version(Path(spec.value).expanduser())
    if version is None:
        return DEFAULT
    try:
        return profile_for_release(version)
    except KeyError:
        return DEFAULT  # an unreleased build: compared with the newest behaviour


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
    )


def judge(
    scenario: Scenario, reference_label: str, reference: Outcome, port: Outcome
) -> tuple[str, list[FieldDiff], list[str]]:
    """Verdict for one case against one reference."""
    if reference.status == "error":
        return ERROR, [], [f"reference could not run: {reference.error}"]
    if port.status == "error":
        return ERROR, [], [f"Python port could not run: {port.error}"]
    diffs = compare_outcomes(reference, port)
    status, reasons = divergence_verdict(scenario, reference_label, {d.field for d in diffs})
    return status, diffs, reasons


def divergence_verdict(scenario: Scenario, label: str, differing: set[str]) -> tuple[str, list[str]]:
    """Pass, fail, known or stale, from what differs (fields or observations) and the case's recorded divergences."""
    listed = scenario.divergences_for(label)
    if not listed:
        return (FAIL if differing else PASS), []
    listed_fields = {f for d in listed for f in d.fields}
    unexplained = differing - listed_fields
    if unexplained:
        return FAIL, [f"differs in {', '.join(sorted(unexplained))}, which no recorded divergence covers"]
    stale = listed_fields - differing
    if stale:
        return STALE, [
            f"recorded divergence in {', '.join(sorted(stale))} no longer diverges against {label}: "
            "remove it from the case (or narrow its references)"
        ]
    return KNOWN, [f"{d.kind}: {d.reason}" + (f" ({d.link})" if d.link else "") for d in listed]


def judge_golden(scenario: Scenario, port: Outcome) -> tuple[str, list[FieldDiff], list[str]]:
    """Spec-only cases: the port against expected bytes quoted from the spec."""
    expect = scenario.expect or {}
    if port.status != "ok":
        return ERROR, [], [f"Python port did not produce a record: {port.error or port.thrown}"]
    golden = Outcome("ok", record={"coreMemory": expect.get("coreMemory")})
    diffs = compare_outcomes(golden, port, ("coreMemory",))
    reasons = [f"expected bytes from {expect.get('source')} (no runnable reference)"]
    size = expect.get("coreMemory_bytes")
    actual = len(((port.record or {}).get("coreMemory") or "").encode("utf-8"))
    if size is not None and size != actual:
        reasons.append(f"coreMemory is {actual} bytes, the spec says {size}")
        return FAIL, diffs, reasons
    return (FAIL if diffs else PASS), diffs, reasons


def judge_lifecycle(
    scenario: Scenario, label: str, profile: Profile, replay: lifecycle.Replay
) -> tuple[str, list[str]]:
    """Verdict for a replay: every step's observations agree, and match what the case records for `label`."""
    if replay.error:
        return ERROR, [replay.error]
    reasons = list(replay.thrown)
    if label == "golden":
        if profile.name not in lifecycle.recorded_targets(scenario):
            return ERROR, [f"golden case records nothing for {profile.name}: add a `recorded` entry for it"]
        problems = lifecycle.recorded_mismatches(scenario, replay.rows, profile.name, "python")
        return (FAIL if problems else PASS), reasons + problems
    differing = [(row.label, d["observation"]) for row in replay.rows for d in row.diffs]
    if differing:
        reasons.append("the Python port differs at " + "; ".join(f"{step}: {name}" for step, name in differing))
    status, verdict_reasons = divergence_verdict(scenario, label, {name for _, name in differing})
    reasons += verdict_reasons
    problems = lifecycle.recorded_mismatches(scenario, replay.rows, label, "reference")
    if problems:
        reasons.append(f"letta-code {label} no longer does what the case records; update `recorded` or the case:")
        reasons += problems
        status = FAIL
    if label not in lifecycle.recorded_targets(scenario) and scenario.raw.get("recorded"):
        reasons.append(f"the case records no observations for {label}")
    return status, reasons


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

    def run_case(self, scenario: Scenario, slot: int = 0) -> list[CaseResult]:
        """One scenario against every reference it applies to (or its golden output), with slot `slot`'s processes."""
        if scenario.kind == "lifecycle":
            return self.run_lifecycle_case(scenario, slot)
        results: list[CaseResult] = []
        started = time.perf_counter()
        try:
            repo = materialize_repo(scenario, self.cache)
        except Exception as error:  # the case is an error; the run goes on
            targets = ["golden"] if scenario.expect else [r.label for r in self.references]
            reason = f"could not build the repository: {type(error).__name__}: {error}"
            if isinstance(error, subprocess.CalledProcessError) and error.stderr:
                stderr = error.stderr.decode("utf-8", "replace") if isinstance(error.stderr, bytes) else error.stderr
                reason += f": {stderr.strip()[-500:]}"
            return [
                CaseResult(scenario.id, label, "", ERROR, scenario.tags, str(scenario.path), scenario.description,
                           scenario.pins, reasons=[reason])
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
            if not _applies(scenario, ref):
                continue
            reference = ref.runner.compile(request)
            if ref.profile.name not in ports:
                ports[ref.profile.name] = self.port(ref.profile, slot).compile(request)
            port = ports[ref.profile.name]
            runtime_diffs: list[FieldDiff] = []
            if ref.spec is not None and ref.spec.is_variant:
                status, diffs, runtime_diffs, reasons = judge_variant(
                    scenario, ref.spec, reference, baselines.get(ref.spec.baseline), port
                )
            else:
                if ref.spec is not None:
                    baselines[ref.spec] = reference
                status, diffs, reasons = judge(scenario, ref.label, reference, port)
            reasons += reference.notes
            result = self._result(
                scenario, ref.label, ref.profile, status, diffs, reasons, reference, port, request, started
            )
            if reference.status != "error" and port.status != "error":
                result.compared = field_presence(reference, port)
            if ref.spec is not None and ref.spec.is_variant:
                result.baseline, result.runtime_diffs = ref.spec.baseline.label, runtime_diffs
            results.append(result)
        return results

    def run_lifecycle_case(self, scenario: Scenario, slot: int = 0) -> list[CaseResult]:
        """A lifecycle probe replayed on each reference and the Python port (or on the port alone, golden)."""
        golden = lifecycle.golden_profile(scenario)
        delivery = scenario.raw.get("delivery", "mid-conversation")
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
                if not _applies(scenario, ref):
                    continue
                targets.append(
                    (ref.label, ref.profile, {"reference": ref.runner, "python": self.port(ref.profile, slot)})
                )
        for label, profile, sides in targets:
            started = time.perf_counter()
            try:
                replay = lifecycle.replay(scenario, sides, work, self.cache, delivery)
            except Exception as error:  # the case is an error; the run goes on
                replay = lifecycle.Replay([], [], error=f"could not replay: {type(error).__name__}: {error}")
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

    def _result(self, scenario: Scenario, label: str, profile: Profile, status: str, diffs: list[FieldDiff],
                reasons: list[str], reference: Outcome | None, port: Outcome, request: CompileRequest,
                started: float) -> CaseResult:  # fmt: skip
        return CaseResult(
            case_id=scenario.id, reference=label, profile=profile.name, status=status, tags=scenario.tags,
            path=str(scenario.path), description=scenario.description, pins=scenario.pins, diffs=diffs,
            reasons=reasons, reference_outcome=reference, port_outcome=port,
            structured=structured_diff(_expected_record(scenario, reference), port.record) if diffs else "",
            memory_dir=str(request.memory_dir), request={k: v for k, v in request.to_wire().items() if k != "op"},
            seconds=time.perf_counter() - started,
        )  # fmt: skip

    def run(
        self, scenarios: Iterable[Scenario], progress: Callable[[CaseResult], None] | None = None
    ) -> list[CaseResult]:
        """Every scenario, `jobs` at a time; results in scenario order (progress sees them as they finish)."""
        scenarios = list(scenarios)
        if self.jobs == 1 or len(scenarios) < 2:
            results: list[CaseResult] = []
            for scenario in scenarios:
                for result in self.run_case(scenario):
                    results.append(result)
                    if progress:
                        progress(result)
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
            if progress:
                for future in as_completed(futures):
                    for result in future.result():
                        progress(result)
            return [result for future in futures for result in future.result()]


def _applies(scenario: Scenario, ref: ReferenceUnderTest) -> bool:
    """A case limited by `profiles` runs against references whose profile, label or base label it names."""
    base = ref.spec.base_label if ref.spec is not None else ref.label
    return not scenario.profiles or bool({ref.profile.name, ref.label, base} & set(scenario.profiles))


def _expected_record(scenario: Scenario, reference: Outcome | None) -> dict[str, Any] | None:
    if reference is not None:
        return reference.record
    return {"coreMemory": (scenario.expect or {}).get("coreMemory")}
