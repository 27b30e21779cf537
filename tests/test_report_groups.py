"""What index.html says of failures and golden checks (issue 37): a golden check that did not apply is never
counted as passing, and a group of failures shows its cause's real text, digits and all, though numbers do not
split a group."""

from __future__ import annotations

from harness.core.model import GOLDEN, CaseResult, RunReport, Status
from harness.report.groups import failure_groups, verdict


def result(case: str, status: Status, reason: str = "", reference: str = "pypi:0.34.12") -> CaseResult:
    return CaseResult(
        case,
        reference,
        "letta-code@0.33.6",
        status,
        (),
        f"cases/compile/{case}.yaml",
        reasons=[reason] if reason else [],
    )


def golden_note(*statuses: Status) -> str:
    results = [result(f"g{n}", status, reference=GOLDEN) for n, status in enumerate(statuses)]
    return verdict(RunReport(results, [], [], ["conformance"]), results, 0)["golden"]


def test_golden_checks_that_did_not_apply_are_not_counted_as_passing() -> None:
    na = Status.NOT_APPLICABLE
    assert golden_note(na, na, na) == (
        "3 golden checks among the results, not a reference: 3 cases checked against the expected bytes stored in "
        "the case, 0 of 3 pass, 3 not-applicable"
    )
    assert golden_note(Status.PASS, Status.FAIL, na).endswith(", 1 of 3 pass, 1 fail, 1 not-applicable")
    assert golden_note(Status.PASS, Status.PASS).endswith(", 2 of 2 pass")


def test_a_failure_group_shows_the_real_text_of_its_cause_and_numbers_do_not_split_it() -> None:
    first = "cmd:python3 tests/port.py could not run: exit status 1: 'utf-8' codec can't decode byte 0xff"
    results = [
        result("a", Status.ERROR, first),
        result("b", Status.ERROR, first.replace("exit status 1", "exit status 2")),
        result("c", Status.ERROR, "cmd:python3 tests/port.py could not run: timed out after 60 s"),
    ]
    groups = failure_groups(results)
    assert [(g.cause, g.cases) for g in groups] == [
        (first, ["a", "b"]),
        ("cmd:python3 tests/port.py could not run: timed out after 60 s", ["c"]),
    ]
