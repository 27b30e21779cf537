"""Scale-out: `--shard K/N` partitions the corpus, merged shard reports equal one run's, `-j N` changes nothing.

The reference here is a fabricated runner (the port's own record, altered for some cases) so the
reports hold passes, failures with byte diffs and errors; the real references are exercised by
`pytest cases` and the integration tests. Reports are compared without timing (`timing=False`).
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.cases.load import load_scenarios
from harness.cli import main as cli
from harness.core.model import CaseResult, CompileRequest, Outcome, RunReport, Scenario, ScenarioError, Status
from harness.core.reference import ReferenceSpec
from harness.report.merge import MergeError, merge_reports
from harness.report.write import report_json, result_from_json, result_json
from harness.report.writers import write_reports
from harness.run.session import Session
from harness.runners.base import Runner
from harness.runners.python_port import PythonPortRunner
from harness.tools.releases.shard import Shard, partition, shard_of
from harness.verdict.diff import outcome_diff
from memfs_prompt import profile_for_release

CASES = Path(__file__).resolve().parent.parent / "cases"


class AlteringReference(Runner):
    """Answers the port's record; for some memory contents it differs or fails, as a buggy reference would."""

    name = "letta-code@0.32.18"

    def __init__(self) -> None:
        self.port = PythonPortRunner(profile_for_release("0.32.18"))
        self.starts = 0
        self.threads: set[str] = set()

    def start(self) -> None:
        self.starts += 1

    def compile(self, request: CompileRequest) -> Outcome:
        self.threads.add(threading.current_thread().name)
        outcome = self.port.compile(request)
        if outcome.record and "persona" in outcome.record.get("coreMemory", ""):
            outcome.record = {**outcome.record, "coreMemory": outcome.record["coreMemory"] + "\r"}
        if outcome.record and "note 7" in outcome.record.get("coreMemory", ""):
            return Outcome("error", error="the reference crashed")
        return outcome

    def describe(self) -> dict:
        return {"name": self.name, "starts": self.starts}


def write_case(directory: Path, case_id: str, files: dict[str, str], extra: str = "") -> None:
    body = "".join(f"        {json.dumps(name)}: {json.dumps(text)}\n" for name, text in files.items())
    text = f"id: {case_id}\ndescription: case {case_id}\n{extra}repo:\n  commits:\n    - files:\n{body}"
    (directory / f"{case_id}.yaml").write_text(text, encoding="utf-8")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> list[Scenario]:
    """A dozen small cases: passes, byte failures (a CR only the reference has), errors, a failing golden one."""
    directory = tmp_path_factory.mktemp("cases") / "compile"
    directory.mkdir()
    for index in range(12):
        files = {f"system/note{index}.md": f"note {index}\n"}
        if index % 4 == 1:
            files["system/persona.md"] = "---\ndescription: me\n---\nI am.\n"
        write_case(directory, f"case-{index:02d}", files)
    write_case(
        directory,
        "golden-one",
        {"MEMORY.md": "root\n"},
        extra='expect:\n  source: made up, unlike the output\n  profile: spec-v2\n  coreMemory: "<memory>\\nrooted"\n',
    )
    loaded = load_scenarios([directory])
    assert not loaded.errors
    return loaded.scenarios


def run_report(scenarios: list[Scenario], cache: Path, jobs: int = 1) -> RunReport:
    with Session(
        [ReferenceSpec("npm", "0.32.18")],
        cache=cache,
        jobs=jobs,
        runner_factory=lambda spec, cache: AlteringReference(),
    ) as session:
        results = session.run(scenarios)
        references = session.describe_references()
    return RunReport(results, references, [], ["conformance", "run"], timing=False)


def as_json(report: RunReport) -> str:
    return json.dumps(report_json(report), indent=1)


# --- shards ----------------------------------------------------------------------------------------


@given(st.lists(st.text(min_size=1, max_size=12), unique=True, max_size=40), st.integers(1, 9))
def test_shards_partition_any_selection_exactly(ids: list[str], count: int) -> None:
    items = [Scenario(i, "", Path("cases/compile/x.yaml"), (), {}, {}) for i in ids]
    shards = partition(items, count)
    chosen = [item.id for shard in shards for item in shard]
    assert sorted(chosen) == sorted(ids)  # union is everything, and nothing twice
    assert len(chosen) == len(set(chosen))


def test_a_case_stays_in_its_shard_whatever_else_is_selected() -> None:
    loaded = load_scenarios([CASES])
    ids = [s.id for s in loaded.scenarios]
    whole = {i: shard_of(i, 4) for i in ids}
    half = ids[::2]
    assert {i: shard_of(i, 4) for i in half} == {i: whole[i] for i in half}
    assert set(whole.values()) == {1, 2, 3, 4}  # every shard of the real corpus has cases


@pytest.mark.parametrize("text", ["0/3", "4/3", "3", "a/b", "1/0", ""])
def test_a_bad_shard_is_refused_with_the_form_to_use(text: str) -> None:
    with pytest.raises(ValueError, match="--shard"):
        Shard.parse(text)


# --- merge -----------------------------------------------------------------------------------------


def test_merged_shard_reports_equal_the_unsharded_report(corpus, tmp_path: Path) -> None:
    whole = run_report(corpus, tmp_path / "cache")
    assert {r.status for r in whole.results} == {"pass", "fail", "error"}
    assert any(r.reference == "golden" and r.diffs for r in whole.results)
    shard_dirs = []
    for index, shard in enumerate(partition(corpus, 3), start=1):
        directory = tmp_path / f"shard{index}"
        write_reports(run_report(shard, tmp_path / "cache"), directory)
        shard_dirs.append(directory)
    merged = merge_reports(shard_dirs, ["conformance", "merge-reports"])
    assert as_json(merged) == as_json(whole)
    # and the files written from the merge are those one run writes (junit included)
    write_reports(merged, tmp_path / "merged")
    write_reports(whole, tmp_path / "whole")
    for name in ("report.json", "junit.xml"):
        assert (tmp_path / "merged" / name).read_bytes() == (tmp_path / "whole" / name).read_bytes(), name


def test_a_result_read_back_from_report_json_writes_the_same_entry(corpus, tmp_path: Path) -> None:
    report = run_report(corpus, tmp_path / "cache")
    for timing in (True, False):
        for result in report.results:
            entry = json.loads(json.dumps(result_json(result, timing)))
            assert result_json(result_from_json(entry), timing) == entry


def test_a_field_one_side_lacks_stays_absent_through_a_merge(tmp_path: Path) -> None:
    """The port lacks memfsRevision, the reference has it as null: read back from report.json (as a merge
    does), the diff still says which side lacks the field, not 8 bytes of `<absent>` on both."""
    reference = Outcome("ok", record={"content": "c", "memfsRevision": None, "extra": "only here"})
    port = Outcome("ok", record={"content": "c", "extra2": "only here"})
    diffs = outcome_diff(reference, port, None)
    assert [(d.field, d.reference_present, d.impl_present) for d in diffs] == [
        ("extra", True, False),
        ("extra2", False, True),
        ("memfsRevision", True, False),
    ]
    result = CaseResult(
        "c",
        "0.32.18",
        "letta-code@0.32.14",
        Status.FAIL,
        (),
        "c.yaml",
        diffs=diffs,
        reference_outcome=reference,
        impl_outcome=port,
        baseline="0.32.18",
        runtime_diffs=diffs,
    )
    entry = json.loads(json.dumps(result_json(result, False)))
    back = result_from_json(entry)
    for read in (back.diffs, back.runtime_diffs):
        assert [(d.field, d.reference_present, d.impl_present) for d in read] == [
            (d.field, d.reference_present, d.impl_present) for d in diffs
        ]
    assert result_json(back, False) == entry
    write_reports(RunReport([result], [], [], ["conformance", "run"], timing=False), tmp_path / "one")
    merged = report_json(merge_reports([tmp_path / "one"], ["conformance", "merge-reports"]))
    sizes = [(d["field"], d["reference_bytes"], d["impl_bytes"]) for d in merged["results"][0]["diffs"]]
    assert sizes == [("extra", 9, None), ("extra2", None, 9), ("memfsRevision", 4, None)]


def test_merge_reports_into_a_file_is_a_usage_error(corpus, tmp_path: Path, capsys) -> None:
    write_reports(run_report(corpus[:2], tmp_path / "cache"), tmp_path / "one")
    (tmp_path / "out").write_text("a file where the merged report should go")
    assert cli.main(["merge-reports", str(tmp_path / "one"), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert f"--out {tmp_path / 'out'}: cannot write there" in err and "Traceback" not in err


def test_overlapping_shards_are_an_error_naming_both_files(corpus, tmp_path: Path) -> None:
    report = run_report(corpus[:3], tmp_path / "cache")
    write_reports(report, tmp_path / "a")
    write_reports(report, tmp_path / "b")
    with pytest.raises(MergeError, match="overlap") as caught:
        merge_reports([tmp_path / "a", tmp_path / "b"], [])
    assert str(tmp_path / "a") in str(caught.value) and str(tmp_path / "b") in str(caught.value)


def test_merge_refuses_an_incomplete_shard_set_unless_told(corpus, tmp_path: Path) -> None:
    dirs = []
    for index, shard in enumerate(partition(corpus, 3), start=1):
        report = run_report(shard, tmp_path / "cache")
        report.extra["run"] = {"command": ["conformance", "run"], "port": {}, "references": [], "shard": f"{index}/3"}
        write_reports(report, tmp_path / f"s{index}")
        dirs.append(tmp_path / f"s{index}")
    with pytest.raises(MergeError, match=r"shard\(s\) 2/3 missing.*--allow-partial"):
        merge_reports([dirs[0], dirs[2]], [])
    partial = merge_reports([dirs[0], dirs[2]], ["conformance", "merge-reports"], allow_partial=True)
    assert partial.extra["run"]["missing_shards"] == ["2/3"]
    assert "missing_shards" not in merge_reports(dirs, []).extra["run"]
    code = cli.main(["merge-reports", str(dirs[0]), str(dirs[2]), "--out", str(tmp_path / "out")])
    assert code == 2 and not (tmp_path / "out").exists()


def test_merge_refuses_a_file_that_is_not_a_report(tmp_path: Path) -> None:
    (tmp_path / "report.json").write_text('{"schema": "something-else"}')
    with pytest.raises(MergeError, match="schema"):
        merge_reports([tmp_path], [])
    with pytest.raises(MergeError, match="cannot read"):
        merge_reports([tmp_path / "missing"], [])


def test_load_errors_reported_by_every_shard_appear_once(tmp_path: Path) -> None:
    error = ScenarioError(Path("cases/compile/bad.yaml"), 3, "invalid YAML: x")
    for name in ("a", "b"):
        write_reports(RunReport([], [{"name": "r"}], [error], [], timing=False), tmp_path / name)
    merged = merge_reports([tmp_path / "a", tmp_path / "b"], [])
    assert [str(e) for e in merged.load_errors] == [str(error)]


def test_merge_reports_command_writes_the_three_files(corpus, tmp_path: Path) -> None:
    write_reports(run_report(corpus[:4], tmp_path / "cache"), tmp_path / "one")
    assert cli.main(["merge-reports", str(tmp_path / "one"), "--out", str(tmp_path / "out")]) == 1  # holds a failure
    assert {p.name for p in (tmp_path / "out").iterdir()} == {"report.json", "junit.xml", "index.html"}
    assert cli.main(["merge-reports", str(tmp_path / "nothing"), "--out", str(tmp_path / "out2")]) == 2


# --- parallel cases --------------------------------------------------------------------------------


def test_two_jobs_give_the_same_report_as_one(corpus, tmp_path: Path) -> None:
    one = run_report(corpus, tmp_path / "cache", jobs=1)
    two = run_report(corpus, tmp_path / "cache", jobs=2)
    assert as_json(two) == as_json(one)


def test_each_worker_has_its_own_reference_started_once(corpus, tmp_path: Path) -> None:
    made: list[AlteringReference] = []

    def factory(spec: ReferenceSpec, cache: Path) -> Runner:
        made.append(AlteringReference())
        return made[-1]

    with Session([ReferenceSpec("npm", "0.32.18")], cache=tmp_path / "cache", jobs=2, runner_factory=factory) as s:
        results = s.run(corpus)
        described = s.describe_references()
    assert [r.case_id for r in results] == [c.id for c in corpus]  # scenario order, whatever finished first
    assert len(made) == 2 and all(m.starts <= 1 for m in made)
    assert all(len(m.threads) <= 1 for m in made)  # a reference process is never shared by two workers
    assert described[0]["starts"] == sum(m.starts for m in made)


def test_jobs_must_be_positive(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="jobs"):
        Session([], cache=tmp_path, jobs=0)


@pytest.mark.integration
def test_real_reference_two_jobs_equal_one_on_lifecycle_probes_and_compile_cases(reference_bun, release_bundle) -> None:
    """Lifecycle replays keep state in their runners: each worker must have its own (reference and port)."""
    release_bundle("0.32.18")
    loaded = load_scenarios([CASES / "lifecycle", CASES / "compile"])
    lifecycle = [s for s in loaded.scenarios if s.kind == "lifecycle"][:6]
    compile_cases = [s for s in loaded.scenarios if s.kind == "compile"][:6]
    scenarios = [x for pair in zip(lifecycle, compile_cases, strict=True) for x in pair]
    reports = []
    for jobs in (1, 2):
        with Session([ReferenceSpec("npm", "0.32.18")], jobs=jobs) as session:
            results = session.run(scenarios)
            references = session.describe_references()
        reports.append(as_json(RunReport(results, references, [], ["conformance", "run"], timing=False)))
        assert {r.status for r in results} <= {"pass", "known-divergence"}, [r.reasons for r in results]
    assert reports[0] == reports[1]
