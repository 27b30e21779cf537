"""A matrix run reference by reference (harness.run.by_reference) gives the results a case-by-case run gives, in the
same order, while only `jobs` reference processes are alive at a time, each reference started once, and each
implementation compiling once per case and profile."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from harness.cases.load import load_scenario
from harness.core.model import CompileRequest, Outcome, Scenario
from harness.core.reference import ReferenceSpec
from harness.run.by_reference import ComputedOnce, run_by_reference
from harness.run.corpus import RunOptions, run_corpus
from harness.run.session import Session
from harness.runners.base import Runner
from harness.runners.implementations import DEFAULT, ImplContext, ImplSpec, make_runner
from memfs_prompt import profile_for_release

ALIVE: set[str] = set()
PEAK = [0]
LOCK = threading.Lock()


class CountingEcho(Runner):
    """A fabricated reference answering with the port's record, counting its starts
    and how many such references are alive at once."""

    def __init__(self, name: str, version: str) -> None:
        self.name, self.version = name, version
        self.alive_key = name  # what ALIVE holds while it is started (two processes of one release: two keys)
        self.starts = 0

    def start(self) -> None:
        self.starts += 1
        with LOCK:
            ALIVE.add(self.alive_key)
            PEAK[0] = max(PEAK[0], len(ALIVE))

    def compile(self, request: CompileRequest) -> Outcome:
        from harness.runners.python_port import PythonPortRunner

        assert self.alive_key in ALIVE, "compile on a reference that is not started"
        return PythonPortRunner(profile_for_release(self.version)).compile(request)

    def close(self) -> None:
        with LOCK:
            ALIVE.discard(self.alive_key)


def write_case(root: Path, name: str, body: str) -> Scenario:
    path = root / "compile" / f"{name}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"id: {name}\ndescription: d\n{body}", encoding="utf-8")
    return load_scenario(path)


@pytest.fixture
def scenarios(tmp_path: Path) -> list[Scenario]:
    files = 'repo:\n  commits:\n    - files:\n        system/a.md: "{text}\\n"\n'
    return [
        write_case(tmp_path, "plain", files.format(text="a")),
        write_case(tmp_path, "other", files.format(text="b")),
        write_case(tmp_path, "only-old", "profiles: [letta-code@0.25.3]\n" + files.format(text="c")),
        write_case(tmp_path, "nowhere", "profiles: [letta-code@0.1.0]\n" + files.format(text="d")),
    ]


VERSIONS = ("0.25.3", "0.30.28", "0.32.18", "0.34.12")


def run_both(tmp_path: Path, scenarios: list[Scenario], jobs: int) -> tuple[list, list, dict[str, CountingEcho]]:
    specs = [ReferenceSpec.parse(f"npm:{v}") for v in VERSIONS]
    results = []
    runners: dict[str, CountingEcho] = {}
    for by_reference in (False, True):
        PEAK[0] = 0
        made = {v: CountingEcho(f"letta-code@{v}", v) for v in VERSIONS}
        options = RunOptions(
            specs,
            cache=tmp_path / "cache",
            jobs=jobs,
            memoize=False,
            by_reference=by_reference,
            runner_factory=lambda spec, cache, made=made: made[spec.value],
        )
        results.append(run_corpus(scenarios, options).results)  # the library entry every command runs through
        runners = made
    return results[0], results[1], runners


def shape(results: list) -> list[tuple[str, str, str, str]]:
    return [(r.case_id, r.reference, r.profile, r.status) for r in results]


@pytest.mark.parametrize("jobs", [1, 2])
def test_reference_by_reference_gives_the_case_by_case_results_in_the_same_order(tmp_path, scenarios, jobs) -> None:
    by_case, by_reference, _ = run_both(tmp_path, scenarios, jobs)
    assert shape(by_reference) == shape(by_case)
    assert [r.reasons for r in by_reference] == [r.reasons for r in by_case]
    assert {r.status for r in by_reference if r.case_id == "nowhere"} == {"not-applicable"}
    assert [r.reference for r in by_reference if r.case_id == "only-old"] == ["0.25.3"]


def test_only_jobs_references_are_alive_at_once_and_each_starts_once(tmp_path, scenarios) -> None:
    _, _, runners = run_both(tmp_path, scenarios, jobs=2)
    assert [runner.starts for runner in runners.values()] == [1, 1, 1, 1]
    assert PEAK[0] == 2 and not ALIVE  # the last run's (by reference); case by case starts all four at once


def test_each_implementation_compiles_once_per_case_and_profile(tmp_path, scenarios) -> None:
    compiled: list[tuple[str, str]] = []

    class Counted(Runner):
        def __init__(self, inner: Runner) -> None:
            self.inner, self.name = inner, inner.name

        def compile(self, request: CompileRequest) -> Outcome:
            with LOCK:
                compiled.append((str(request.memory_dir), request.profile or ""))
            return self.inner.compile(request)

    specs = [ReferenceSpec.parse(f"npm:{v}") for v in VERSIONS]
    made = {v: CountingEcho(f"letta-code@{v}", v) for v in VERSIONS}

    def counted(spec: ImplSpec, profile: str, context: ImplContext) -> Runner:
        return Counted(make_runner(spec, profile, context))

    with Session(
        specs,
        cache=tmp_path / "cache",
        jobs=2,
        memoize=False,
        implementations=[DEFAULT],
        runner_factory=lambda spec, cache: made[spec.value],
        impl_factory=counted,
    ) as session:
        run_by_reference(session, scenarios)
    assert len(compiled) == len(set(compiled))  # never twice for one repository and profile
    assert len(compiled) == 2 * 4 + 1  # plain and other under four profiles, only-old under one


class PortAsReference(CountingEcho):
    """A fabricated reference that also replays lifecycle probes: the port under the release's profile."""

    def __init__(self, name: str, version: str) -> None:
        from harness.runners.python_port import PythonPortRunner

        super().__init__(name, version)
        self.port = PythonPortRunner(profile_for_release(version))

    def lifecycle_open(self, request):  # type: ignore[no-untyped-def]
        return self.port.lifecycle_open(request)

    def lifecycle_step(self, step):  # type: ignore[no-untyped-def]
        return self.port.lifecycle_step(step)

    def lifecycle_close(self) -> None:
        self.port.lifecycle_close()


class OpensCounted(Runner):
    """The implementation's runner, noting the profile of each probe it opens in `opened`."""

    def __init__(self, inner: Runner, opened: list[str]) -> None:
        self.inner, self.name, self.opened = inner, inner.name, opened

    def compile(self, request: CompileRequest) -> Outcome:
        return self.inner.compile(request)

    def lifecycle_open(self, request):  # type: ignore[no-untyped-def]
        with LOCK:
            self.opened.append(request.profile or "")
        return self.inner.lifecycle_open(request)

    def lifecycle_step(self, step):  # type: ignore[no-untyped-def]
        return self.inner.lifecycle_step(step)

    def lifecycle_close(self) -> None:
        self.inner.lifecycle_close()


def counting_opens(opened: list[str]) -> Callable[[ImplSpec, str, ImplContext], Runner]:
    """An impl factory whose runners note each probe they open in `opened`."""
    return lambda spec, profile, context: OpensCounted(make_runner(spec, profile, context), opened)


def test_an_implementation_replays_a_probe_once_per_profile_and_handoff(tmp_path) -> None:
    """Three releases under one profile hand the port the same ids: its side of the probe runs once for them."""
    opened: list[str] = []
    versions = ("0.32.18", "0.33.6", "0.33.8", "0.34.0")  # profiles: letta-code@0.32.14, then 0.33.6 three times
    probe = load_scenario(Path(__file__).parents[1] / "cases" / "lifecycle" / "probe-spec-chapter9.yaml")
    specs = [ReferenceSpec.parse(f"npm:{v}") for v in versions]
    runs = []
    for by_reference in (False, True):
        opened.clear()
        made = {v: PortAsReference(f"letta-code@{v}", v) for v in versions}
        with Session(
            specs,
            cache=tmp_path / "cache",
            jobs=2,
            memoize=False,
            implementations=[DEFAULT],
            runner_factory=lambda spec, cache, made=made: made[spec.value],
            impl_factory=counting_opens(opened),
        ) as s:
            runs.append(run_by_reference(s, [probe]) if by_reference else s.run([probe]))
    case_by_case, by_reference = runs
    assert sorted(opened) == ["letta-code@0.32.14", "letta-code@0.33.6"]  # not once per release
    assert [(r.reference, r.status, r.turns, r.reasons) for r in by_reference] == [
        (r.reference, r.status, r.turns, r.reasons) for r in case_by_case
    ]
    assert {r.status for r in by_reference} == {"pass"}


def test_columns_start_with_one_of_each_profile_and_variants_last() -> None:
    """Workers then compute different profiles' port outcomes side by side, and no variant waits on an unstarted
    baseline while holding a worker."""
    from types import SimpleNamespace

    from harness.run.by_reference import profiles_spread

    profiles = ["A", "A", "B", "A", "C", "B"]
    columns = [SimpleNamespace(name=f"c{i}", profile=p, is_variant=False) for i, p in enumerate(profiles)]
    columns.insert(1, SimpleNamespace(name="variant", profile="A", is_variant=True))
    order = [c.name for c in profiles_spread(columns)]  # type: ignore[arg-type]
    assert order == ["c0", "c2", "c4", "c1", "c5", "c3", "variant"]


def test_a_worker_with_nothing_left_helps_with_the_longest_column_in_a_process_of_its_own(
    tmp_path, monkeypatch
) -> None:
    """One newly pinned release is the whole of a warm matrix's work: both workers take its batches, each
    with its own process, and the results are a case-by-case run's."""
    monkeypatch.setattr("harness.run.by_reference.BATCH", 2)
    files = 'repo:\n  commits:\n    - files:\n        system/a.md: "{text}\\n"\n'
    scenarios = [write_case(tmp_path, f"case-{n}", files.format(text=n)) for n in range(8)]
    spec = ReferenceSpec.parse("npm:0.34.12")
    made: list[CountingEcho] = []
    compiled_by: list[str] = []  # which runner object answered

    helper_started = threading.Event()

    class Recording(CountingEcho):
        def start(self) -> None:
            super().start()
            if self is not made[0]:
                helper_started.set()

        def compile(self, request: CompileRequest) -> Outcome:
            with LOCK:
                compiled_by.append(str(id(self)))
            if self is made[0]:  # the first worker holds its first batch until the helper has joined
                helper_started.wait(timeout=10)
            return super().compile(request)

    def factory(spec: ReferenceSpec, cache: Path) -> Runner:
        made.append(Recording("letta-code@0.34.12", "0.34.12"))
        made[-1].alive_key = f"process {len(made)}"
        return made[-1]

    runs = []
    for by_reference in (False, True):
        made.clear()
        compiled_by.clear()
        helper_started.clear()
        with Session([spec], cache=tmp_path / "cache", jobs=2, memoize=False, runner_factory=factory) as session:
            runs.append(run_by_reference(session, scenarios) if by_reference else session.run(scenarios))
    case_by_case, by_reference = runs
    assert shape(by_reference) == shape(case_by_case)
    assert len(made) == 2 and [runner.starts for runner in made] == [1, 1]  # one process per worker
    assert len(set(compiled_by)) == 2 and len(compiled_by) == 8  # both answered, each case once


def test_the_ports_compiles_made_ahead_in_worker_processes_are_the_ones_made_in_process(
    tmp_path, scenarios, monkeypatch
) -> None:
    from harness.run import by_reference
    from harness.run.port_pool import PortPool

    served: list[object] = []
    outcome = PortPool.outcome

    def spied(self: PortPool, key: object, profile: str) -> Outcome | None:
        found = outcome(self, key, profile)
        served.append(found is not None)
        return found

    monkeypatch.setattr(PortPool, "outcome", spied)
    runs = []
    for ahead in (10**9, 1):  # never worth worker processes; always
        monkeypatch.setattr(by_reference, "AHEAD", ahead)
        specs = [ReferenceSpec.parse(f"npm:{v}") for v in VERSIONS]
        made = {v: CountingEcho(f"letta-code@{v}", v) for v in VERSIONS}
        with Session(
            specs,
            cache=tmp_path / "cache",
            jobs=2,
            memoize=False,
            runner_factory=lambda spec, cache, made=made: made[spec.value],
        ) as session:
            runs.append(run_by_reference(session, scenarios))
            described = session.describe_implementations()
        runs[-1].append(described)  # type: ignore[arg-type]
    in_process, ahead_made = runs
    assert served.count(True) == 2 * 4 + 1 and served.count(False) == 2 * 4 + 1  # the second run's, the first's
    assert in_process[-1] == ahead_made[-1]  # the report describes the port alike
    for one, other in zip(in_process[:-1], ahead_made[:-1], strict=True):
        assert (one.case_id, one.reference, one.status, one.reasons) == (
            other.case_id,
            other.reference,
            other.status,
            other.reasons,
        )
        if one.case_id != "nowhere":
            assert one.impl_outcome is not None and other.impl_outcome is not None
            assert (one.impl_outcome.status, one.impl_outcome.record) == (
                other.impl_outcome.status,
                other.impl_outcome.record,
            )


def test_a_probes_side_run_in_the_ports_worker_processes_is_the_one_run_in_process(tmp_path, monkeypatch) -> None:
    from harness.run import by_reference
    from harness.run.port_pool import PortPool

    ran_there: list[bool] = []
    side = PortPool.side

    def spied(self: PortPool, *args: object) -> object:
        found = side(self, *args)  # type: ignore[arg-type]
        ran_there.append(found is not None)
        return found

    monkeypatch.setattr(PortPool, "side", spied)
    versions = ("0.32.18", "0.34.12")
    probe = load_scenario(Path(__file__).parents[1] / "cases" / "lifecycle" / "probe-spec-chapter9.yaml")
    runs = []
    for ahead in (10**9, 1):
        monkeypatch.setattr(by_reference, "AHEAD", ahead)
        made = {v: PortAsReference(f"letta-code@{v}", v) for v in versions}
        specs = [ReferenceSpec.parse(f"npm:{v}") for v in versions]
        with Session(
            specs,
            cache=tmp_path / "cache",
            jobs=2,
            memoize=False,
            runner_factory=lambda spec, cache, made=made: made[spec.value],
        ) as session:
            runs.append([(r.reference, r.status, r.turns, r.reasons) for r in run_by_reference(session, [probe])])
    assert ran_there == [False, False, True, True]  # one side per profile: in process, then in the workers
    assert runs[0] == runs[1] and {status for _, status, _, _ in runs[1]} == {"pass"}


def test_sides_kept_across_runs_replay_a_probe_once_for_every_session(tmp_path) -> None:
    """A history runs one probe against many commits' modules, a session each: the port's side runs once."""
    opened: list[str] = []
    probe = load_scenario(Path(__file__).parents[1] / "cases" / "lifecycle" / "probe-spec-chapter9.yaml")
    across = ComputedOnce()
    statuses = []
    for version in ("0.33.8", "0.34.0"):  # one profile (letta-code@0.33.6), a session each
        made = {version: PortAsReference(f"letta-code@{version}", version)}
        with Session(
            [ReferenceSpec.parse(f"npm:{version}")],
            cache=tmp_path / "cache",
            memoize=False,
            runner_factory=lambda spec, cache, made=made: made[spec.value],
            impl_factory=counting_opens(opened),
        ) as s:
            statuses += [r.status for r in run_by_reference(s, [probe], across)]
    assert opened == ["letta-code@0.33.6"] and statuses == ["pass", "pass"]
