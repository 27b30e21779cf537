"""junit.xml as a common JUnit reader (junitparser) reads it: no result that did not pass reads as a pass, the
suites' counts are the elements they hold, and both agree with report.json's statuses.

Not applicable, known and runtime divergences are `<skipped>` (a known divergence with pytest's xfail type);
fail and stale are failures, error is an error; only a pass has no element (harness.report.junit.SKIPPED).
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

from fake_reference import write_cases
from junitparser import Error, Failure, JUnitXml, Skipped
from report_examples import three_implementations
from test_implementations import PortReference

from harness.cases.load import load_scenarios
from harness.core.model import RunReport, Status
from harness.core.reference import ReferenceSpec
from harness.report.writers import write_reports
from harness.run.session import Session
from harness.runners.implementations import ImplSpec

TESTS = Path(__file__).resolve().parent
CASES = TESTS.parent / "cases"
COMPILE_ONLY = f"cmd:{sys.executable} {TESTS / 'fake_impl.py'} --ops hello,compile"

#: How each status must read in a JUnit reader: its result element (None: a pass) and its `type`.
READS_AS: dict[Status, tuple[str, str]] = {
    Status.PASS: ("passed", ""),
    Status.FAIL: ("Failure", Status.FAIL.value),
    Status.STALE: ("Failure", Status.STALE.value),
    Status.ERROR: ("Error", "error"),
    Status.KNOWN: ("Skipped", "pytest.xfail"),
    Status.RUNTIME: ("Skipped", Status.RUNTIME.value),
    Status.NOT_APPLICABLE: ("Skipped", Status.NOT_APPLICABLE.value),
}


def read(path: Path) -> list[tuple[str, str, str, str, str]]:
    """Each test case as junitparser reads it: (suite, name, its result's class name or "passed", type, message)."""
    cases = []
    for suite in JUnitXml.fromfile(str(path)):
        for case in suite:
            (element, *more) = case.result or [None]
            assert not more, f"{case.name}: more than one result element"
            assert case.is_passed == (element is None)
            kind = type(element).__name__ if element is not None else "passed"
            cases.append(
                (
                    suite.name,
                    case.name,
                    kind,
                    element.type or "" if element else "",
                    element.message or "" if element else "",
                )
            )
    return cases


def counts_agree(path: Path, statuses: Counter[str]) -> None:
    """The reader's totals, per suite and for the run, against report.json's counts of statuses."""
    xml = JUnitXml.fromfile(str(path))
    for suite in xml:
        kinds = Counter(type(case.result[0]) if case.result else None for case in suite)
        assert (suite.tests, suite.failures, suite.errors, suite.skipped) == (
            sum(kinds.values()),
            kinds[Failure],
            kinds[Error],
            kinds[Skipped],
        ), suite.name
    assert xml.tests == sum(statuses.values())
    assert xml.failures == statuses[Status.FAIL] + statuses[Status.STALE]
    assert xml.errors == statuses[Status.ERROR]
    assert xml.skipped == statuses[Status.KNOWN] + statuses[Status.RUNTIME] + statuses[Status.NOT_APPLICABLE]
    passed = sum(1 for suite in xml for case in suite if case.is_passed)
    assert passed == statuses[Status.PASS]


def test_every_status_reads_in_junitparser_as_pass_only_when_it_passed(tmp_path: Path) -> None:
    results = three_implementations()
    results[0].status = Status.STALE  # every status at least once (the examples have no stale divergence)
    assert {r.status for r in results} == set(Status)
    paths = write_reports(RunReport(results, [], [], ["conformance", "run"], timing=False), tmp_path)
    read_back = read(paths["junit"])
    assert sorted((name, kind, type_) for _, name, kind, type_, _ in read_back) == sorted(
        (r.case_id, *READS_AS[r.status]) for r in results
    )
    words = {
        Status.KNOWN: "known divergence",
        Status.RUNTIME: "runtime divergence",
        Status.NOT_APPLICABLE: "not applicable",
    }
    assert sorted((name, message) for _, name, kind, _, message in read_back if kind == "Skipped") == sorted(
        (r.case_id, f"{words[r.status]}: {'; '.join(r.reasons)}") for r in results if r.status in words
    )
    report = json.loads(paths["json"].read_text())
    counts_agree(paths["junit"], Counter(Status(r["status"]) for r in report["results"]))


def test_a_run_of_an_implementation_serving_only_compile_skips_what_it_cannot_serve(tmp_path: Path) -> None:
    """The issue's run: lifecycle probes against a program without lifecycle ops are not applicable, and junit.xml
    says so (`<skipped type="not-applicable">` with the reason) where it used to show them passing."""
    cases = write_cases(tmp_path / "cases", {"plain": ""})
    loaded = load_scenarios([cases, CASES / "lifecycle" / "raw-system-edit.yaml"])
    with Session(
        [ReferenceSpec("npm", "0.32.18")],
        implementations=[ImplSpec.parse(COMPILE_ONLY)],
        cache=tmp_path / "cache",
        runner_factory=lambda spec, cache: PortReference(),
    ) as session:
        results = session.run(loaded.scenarios)  # in the loader's order, which is by path: either may come first
    statuses = {r.case_id: r.status for r in results}
    assert statuses == {"plain": Status.PASS, "raw-system-edit": Status.NOT_APPLICABLE}
    (lifecycle,) = (r for r in results if r.case_id == "raw-system-edit")
    paths = write_reports(RunReport(results, [], [], ["conformance", "run"], timing=False), tmp_path / "report")
    read_back = {name: (kind, type_, message) for _, name, kind, type_, message in read(paths["junit"])}
    assert read_back["plain"] == ("passed", "", "")
    kind, type_, message = read_back["raw-system-edit"]
    assert (kind, type_) == ("Skipped", "not-applicable")
    assert message == f"not applicable: {lifecycle.reasons[0]}" and "lifecycle" in message
    report = json.loads(paths["json"].read_text())
    assert report["counts"][Status.NOT_APPLICABLE] == 1
    counts_agree(paths["junit"], Counter(Status(r["status"]) for r in report["results"]))
