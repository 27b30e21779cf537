"""run_corpus (harness.run.corpus), the one library entry of a run: the Session is built there and nowhere else,
the report it returns carries the `run` section every command writes, and a run told to stop before its first
case returns no result. The matrix's orchestration (harness.tools.releases.matrix) and the history commands on
the one `conformance` parser are pinned here too."""

from __future__ import annotations

import dataclasses
import re
import subprocess
from pathlib import Path

from harness.cli import history
from harness.cli.main import build_parser
from harness.core.model import CaseResult, Explanation, RunReport, Scenario, ScenarioError, Status
from harness.core.reference import ReferenceSpec
from harness.run.corpus import BRIEF, RunOptions, not_run, run_corpus
from harness.runners.base import Runner
from harness.tools.releases.drift import DriftReport
from harness.tools.releases.gate import GateResult
from harness.tools.releases.matrix import MatrixRun, with_explainers

ROOT = Path(__file__).resolve().parents[1]


class Echo(Runner):
    """A fabricated reference answering with the port's own record (so every case passes)."""

    name = "echo"

    def compile(self, request):  # type: ignore[no-untyped-def]
        from harness.runners.python_port import PythonPortRunner
        from memfs_prompt import profile_for_release

        return PythonPortRunner(profile_for_release("0.34.12")).compile(request)


def a_case(root: Path, name: str) -> Scenario:
    from harness.cases.load import load_scenario

    path = root / "compile" / f"{name}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    files = 'repo:\n  commits:\n    - files:\n        system/a.md: "x\\n"\n'
    path.write_text(f"id: {name}\ndescription: d\n{files}", encoding="utf-8")
    return load_scenario(path)


def options(tmp_path: Path, **given: object) -> RunOptions:
    spec = ReferenceSpec.parse("npm:0.34.12")
    return RunOptions(
        [spec], cache=tmp_path / "cache", memoize=False, runner_factory=lambda spec, cache: Echo(), **given
    )  # type: ignore[arg-type]


def test_the_session_is_built_in_run_corpus_and_nowhere_else() -> None:
    found = subprocess.run(
        ["git", "grep", "-n", r"\bSession(", "--", "harness", "benchmarks"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    ).stdout.splitlines()
    assert [line.split(":")[0] for line in found] == ["harness/run/corpus.py"], found


def test_the_report_carries_the_run_section_every_command_writes(tmp_path: Path) -> None:
    report = run_corpus(
        [a_case(tmp_path, "one")], options(tmp_path, command=["conformance", "run"], timing=False, shard="1/2")
    )
    assert [(r.case_id, r.status) for r in report.results] == [("one", Status.PASS)]
    run = report.extra["run"]
    assert run["command"] == ["conformance", "run"] and report.command == ["conformance", "run"]
    assert [(r["reference"], r["runtime"]) for r in run["references"]] == [("echo", "bun")]  # the runner names it
    (described,) = run["implementations"]  # as the implementation's runner describes itself, briefly
    assert "implementation" in described and set(described) <= set(BRIEF)
    assert run["expectations"] == [] and run["shard"] == "1/2"
    assert "timing" not in run and "interrupted" not in run and not_run(report) == 0
    assert report.ok


def test_a_run_told_to_stop_before_its_first_case_runs_nothing(tmp_path: Path) -> None:
    report = run_corpus([a_case(tmp_path, "one")], options(tmp_path, stop=lambda: True))
    assert report.results == [] and not report.ok


def test_the_cases_that_explain_drift_run_beside_the_selected_ones(tmp_path: Path) -> None:
    chosen, other, explaining = (a_case(tmp_path, name) for name in ("chosen", "other", "explaining"))
    explaining = dataclasses.replace(explaining, explains=(Explanation("the trailing newline goes"),))
    scenarios, added = with_explainers([chosen, other, explaining], [chosen])
    assert [s.id for s in scenarios] == ["chosen", "explaining"] and added == 1
    assert with_explainers([chosen, explaining], [chosen, explaining]) == ([chosen, explaining], 0)


def test_with_the_gate_the_matrix_exit_follows_the_gate_else_the_results_and_drift() -> None:
    failing = CaseResult("c", "0.34.12", "p", Status.FAIL, (), "c.yaml")
    report = RunReport([failing], [], [], ["conformance", "matrix"])
    passing_gate = GateResult("0.33.0", "0.34.12", "letta-code@0.34.12", True, "0.34.12")
    no_drift = DriftReport([], [], [], [])
    assert MatrixRun(report, no_drift, passing_gate, 0.0).ok  # the gate judges, not the failing case
    assert not MatrixRun(report, no_drift, None, 0.0).ok
    with_error = RunReport([], [], [ScenarioError(Path("bad.yaml"), 1, "bad")], ["conformance", "matrix"])
    assert not MatrixRun(with_error, no_drift, passing_gate, 0.0).ok  # a file that did not load fails the gate


def test_the_history_commands_are_conformance_commands_with_its_shared_options() -> None:
    parser = build_parser()
    known = re.search(r"\{([^}]*)\}", parser.format_usage())
    assert known
    for command in ("history", "history-scan", "bisect", "revision-run", "revision-equal", "upstream-head"):
        assert command in known.group(1).split(","), command
    args = parser.parse_args(["revision-run", "--git", "/clone", "--rev", "v1", "-j", "2"])
    assert (args.func, args.rev, args.jobs, args.timeout) == (history.cmd_run, "v1", 2, 60.0)
    bisect = parser.parse_args(["bisect", "case", "--git", "/clone", "--from", "a", "--to", "HEAD"])
    assert (bisect.case, bisect.end, bisect.git) == ("case", "HEAD", "/clone")
