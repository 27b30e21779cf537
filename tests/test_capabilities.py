"""An implementation says what it implements (hello `capabilities.features`, docs/protocol.md): a case needing a
feature it does not declare is not applicable with that reason, decided before the program is asked, counted
apart in every summary (terminal, report.json, junit.xml) and never a pass."""

from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from fake_reference import fake_bundle, scenario_yaml

from harness.cases.rules import load_rules
from harness.cli import main as cli

TESTS = Path(__file__).resolve().parent
FAKE = f"cmd:{sys.executable} {TESTS / 'fake_impl.py'}"

RULES = """\
rules:
  - id: memfs-v1
    statement: the memfs-v1 layout is rendered
    upstream: src/agent/memory.ts
    port: memfs_prompt.render_v1
    feature: true
  - id: memfs-v2
    statement: the memfs-v2 layout is rendered
    upstream: src/agent/memory.ts
    port: memfs_prompt.render_v2
    feature: true
"""


def corpus(tmp_path: Path, cases: dict[str, tuple[str, str]]) -> Path:
    """cases: id -> (the rule it names, a fault mode for the implementation or ""); with cases/rules.yaml."""
    root = tmp_path / "cases"
    (root / "compile").mkdir(parents=True)
    (root / "rules.yaml").write_text(RULES)
    for case_id, (rule, mode) in cases.items():  # the fault is in the agent id: the fake reference never sees it
        text = scenario_yaml(case_id) + f"rules: [{rule}]\n"
        if mode:
            text = text.replace("inputs:\n", f"inputs:\n  agent_id: agent-FAULT:{mode} \n")
        (root / "compile" / f"{case_id}.yaml").write_text(text)
    return root / "compile"  # its rules are found above it


def run(tmp_path: Path, cases: Path, impl: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, Path]:
    report = tmp_path / "report"
    argv = [
        "run",
        str(cases),
        "--reference",
        f"bundle:{fake_bundle(tmp_path / 'bundle')}",
        "--impl",
        impl,
        "--report",
        str(report),
        "--no-timing",
    ]
    code = cli.main(argv)
    out = capsys.readouterr()
    return code, out.out + out.err, report


def test_a_case_needing_an_undeclared_feature_is_not_applicable_and_the_program_is_never_asked(
    tmp_path: Path, bin_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the memfs-v1 case would crash the program if it were asked: it is not applicable instead
    cases = corpus(tmp_path, {"v1-case": ("memfs-v1", "crash"), "v2-case": ("memfs-v2", "")})
    code, printed, report = run(tmp_path, cases, f"{FAKE} --features memfs-v2", capsys)
    results = {r["case"]: r for r in json.loads((report / "report.json").read_text())["results"]}
    assert results["v1-case"]["status"] == "not-applicable"
    assert "does not declare feature memfs-v1" in " ".join(results["v1-case"]["reasons"])
    assert results["v2-case"]["status"] == "pass"
    assert code == 0  # not applicable is no failure...
    assert "1 pass" in printed and "1 not-applicable" in printed  # ...and no pass: counted apart
    assert "does not declare feature memfs-v1" in printed  # the terminal says why
    junit = ET.parse(report / "junit.xml").getroot()
    skipped = [case.get("name") for case in junit.iter("testcase") if case.find("skipped") is not None]
    assert any("v1-case" in (name or "") for name in skipped) and not any("v2-case" in (n or "") for n in skipped)


def test_a_program_that_declares_no_features_is_asked_every_case(
    tmp_path: Path, bin_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cases = corpus(tmp_path, {"v1-case": ("memfs-v1", ""), "v2-case": ("memfs-v2", "")})
    port = f"cmd:{sys.executable} -m memfs_prompt serve"
    undeclared = f"{FAKE} --features-json absent"
    for impl in (port, undeclared):
        _, printed, report = run(tmp_path, cases, impl, capsys)
        statuses = {r["case"]: r["status"] for r in json.loads((report / "report.json").read_text())["results"]}
        assert statuses == {"v1-case": "pass", "v2-case": "pass"}, (impl, printed)


def test_a_features_value_that_is_not_a_list_of_ids_is_an_error_of_every_case(
    tmp_path: Path, bin_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cases = corpus(tmp_path, {"v2-case": ("memfs-v2", "")})
    impl = f"{FAKE} --features-json '\"memfs-v2\"'"
    code, _, report = run(tmp_path, cases, impl, capsys)
    (result,) = json.loads((report / "report.json").read_text())["results"]
    assert result["status"] == "error" and code == 1
    assert "capabilities.features is 'memfs-v2', not a list of feature ids" in " ".join(result["reasons"])


def test_the_port_declares_every_feature_rule_of_the_corpus() -> None:
    from memfs_prompt.protocol import FEATURES, Server

    hello = Server().handle({"id": 1, "op": "hello"})
    assert hello["capabilities"]["features"] == list(FEATURES)
    rules = load_rules(TESTS.parent / "cases" / "rules.yaml")
    assert set(FEATURES) == {rule.id for rule in rules.values() if rule.feature}


# --- the environment: isolated, and --impl-env to pass a variable ------------------------------------------


def test_every_command_that_takes_impl_takes_impl_env() -> None:
    """A program that needs a variable runs under every command that can start it (docs/protocol.md)."""
    import argparse

    from harness.cli.main import build_parser

    (commands,) = [a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)]
    options = {
        name: {o for action in sub._actions for o in action.option_strings} for name, sub in commands.choices.items()
    }
    taking = sorted(name for name, known in options.items() if "--impl" in known)
    assert {"run", "matrix", "diff-repo", "show", "fuzz", "reduce", "bisect", "upstream-tests"} <= set(taking)
    assert [name for name in taking if "--impl-env" not in options[name]] == []


def test_a_program_that_fails_for_want_of_a_variable_says_the_environment_is_isolated_and_how_to_pass_one(
    tmp_path: Path, bin_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cases = corpus(tmp_path, {"v2-case": ("memfs-v2", "")})
    code, printed, report = run(tmp_path, cases, f"{FAKE} --require-env MY_PORT_HOME", capsys)
    (result,) = json.loads((report / "report.json").read_text())["results"]
    assert result["status"] == "error" and code == 1
    reasons = " ".join(result["reasons"])
    assert "isolated environment" in reasons and "--impl-env NAME" in reasons
    assert "--impl-env" in printed


def test_a_crash_mid_run_mentions_the_isolated_environment_too(
    tmp_path: Path, bin_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cases = corpus(tmp_path, {"v2-case": ("memfs-v2", "crash")})
    _, _, report = run(tmp_path, cases, FAKE, capsys)
    (result,) = json.loads((report / "report.json").read_text())["results"]
    assert result["status"] == "error" and "--impl-env" in " ".join(result["reasons"])


@pytest.mark.parametrize("given", ["MY_PORT_HOME=/opt/port", "MY_PORT_HOME"])
def test_impl_env_passes_a_variable_by_value_or_from_the_caller_and_the_report_keeps_only_its_name(
    tmp_path: Path, bin_dir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, given: str
) -> None:
    monkeypatch.setenv("MY_PORT_HOME", "/opt/port")
    cases = corpus(tmp_path, {"v2-case": ("memfs-v2", "")})
    impl = f"{FAKE} --require-env MY_PORT_HOME"
    report = tmp_path / "report"
    argv = [
        "run",
        str(cases),
        "--reference",
        f"bundle:{fake_bundle(tmp_path / 'bundle')}",
        "--impl",
        impl,
        "--impl-env",
        given,
        "--report",
        str(report),
        "--no-timing",
    ]
    assert cli.main(argv) == 0, capsys.readouterr()
    data = json.loads((report / "report.json").read_text())
    assert [r["status"] for r in data["results"]] == ["pass"]
    (described,) = data["run"]["implementations"]
    assert described["passed_env"] == ["MY_PORT_HOME"]
    assert "/opt/port" not in (report / "report.json").read_text()  # a value may be a secret


@pytest.mark.parametrize(
    ("given", "says"),
    [
        ("HOME=/root", "pinned by the isolated environment"),
        ("GIT_DIR=/x", "pinned by the isolated environment"),
        ("NOT_SET_ANYWHERE_42", "not set here; give its value (--impl-env NOT_SET_ANYWHERE_42=VALUE)"),
        ("2BAD=1", "no variable name"),
    ],
)
def test_impl_env_refuses_a_pinned_name_an_unset_one_and_a_bad_one_before_running(
    tmp_path: Path, bin_dir: Path, capsys: pytest.CaptureFixture[str], given: str, says: str
) -> None:
    cases = corpus(tmp_path, {"v2-case": ("memfs-v2", "")})
    argv = [
        "run",
        str(cases),
        "--reference",
        f"bundle:{fake_bundle(tmp_path / 'bundle')}",
        "--impl",
        FAKE,
        "--impl-env",
        given,
    ]
    assert cli.main(argv) == 2
    assert says in capsys.readouterr().err
