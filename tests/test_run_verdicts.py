"""harness.run.judge, harness.compare and harness.report on fabricated outcomes.

The verdict rules are the ones harness/run.py's module docstring states: a case passes only when
every implementation ran and agreed; a reference that could not run is an error; a recorded
divergence that still diverges is known-divergence; one that no longer diverges is stale-divergence.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.cases.load import load_scenario
from harness.core.model import (
    CaseResult,
    CompileRequest,
    Divergence,
    Outcome,
    RunReport,
    Scenario,
    ScenarioError,
    Status,
)
from harness.report.write import report_json
from harness.report.writers import write_reports
from harness.run.session import Session
from harness.runners.base import Runner
from harness.verdict.diff import outcome_diff
from harness.verdict.judge import judge, judge_golden
from harness.verdict.text import first_diff_offset, visible

RECORD = {
    "content": "S\n\nmemory",
    "coreMemory": "memory",
    "compiledAt": "2026-01-02T03:04:05.678Z",
    "rawSystemHash": "ab" * 32,
    "memfsRevision": "0" * 40,
}


def scenario(*divergences: Divergence, expect: dict | None = None) -> Scenario:
    return Scenario(
        "case-1", "d", Path("cases/compile/case-1.yaml"), ("tag-a",), {}, {}, divergences=divergences, expect=expect
    )


def ok(**changes: str | None) -> Outcome:
    record = {**RECORD, **changes}
    return Outcome("ok", record={k: v for k, v in record.items() if v is not None})


def upstream_bug(*fields: str, references: tuple[str, ...] = ("0.32.18",)) -> Divergence:
    return Divergence(references, fields, "upstream-bug", "upstream trims oddly", "https://example.invalid/1")


# --- judge -------------------------------------------------------------------------------------------


def test_identical_records_pass() -> None:
    assert judge(scenario(), "0.32.18", ok(), ok()) == (Status.PASS, [], [])


def test_a_differing_field_fails_with_its_name_and_byte_offset() -> None:
    status, diffs, _ = judge(scenario(), "0.32.18", ok(coreMemory="memory!"), ok())
    assert status == Status.FAIL
    assert [(d.field, d.offset) for d in diffs] == [("coreMemory", 6)]


def test_a_field_present_on_one_side_only_fails() -> None:
    status, diffs, _ = judge(scenario(), "0.32.18", ok(), ok(memfsRevision=None))
    assert status == Status.FAIL and [d.field for d in diffs] == ["memfsRevision"]


@pytest.mark.parametrize("port", [ok(), Outcome("error", error="port crashed")])
def test_a_reference_that_could_not_run_is_an_error_never_a_pass(port: Outcome) -> None:
    status, diffs, reasons = judge(scenario(), "0.32.18", Outcome("error", error="bun crashed"), port)
    assert status == Status.ERROR and diffs == []
    assert "bun crashed" in reasons[0]


def test_a_port_that_could_not_run_is_an_error() -> None:
    status, _, reasons = judge(scenario(), "0.32.18", ok(), Outcome("error", error="ValueError: x"))
    assert status == Status.ERROR and "ValueError: x" in reasons[0]


def test_a_reference_error_is_an_error_even_with_a_listed_divergence() -> None:
    status, _, _ = judge(scenario(upstream_bug("coreMemory")), "0.32.18", Outcome("error", error="x"), ok())
    assert status == Status.ERROR


def test_a_listed_divergence_that_still_differs_is_known() -> None:
    status, diffs, reasons = judge(
        scenario(upstream_bug("coreMemory", "content")), "0.32.18", ok(coreMemory="m", content="c"), ok()
    )
    assert status == Status.KNOWN
    assert {d.field for d in diffs} == {"coreMemory", "content"}
    assert reasons == ["upstream-bug: upstream trims oddly (https://example.invalid/1)"]


def test_a_listed_divergence_that_no_longer_differs_is_stale() -> None:
    status, _, reasons = judge(scenario(upstream_bug("coreMemory")), "0.32.18", ok(), ok())
    assert status == Status.STALE
    assert "no longer diverges" in reasons[0] and "coreMemory" in reasons[0]


@pytest.mark.parametrize(
    ("references", "fix"),
    [
        (("pypi:0.34.12",), "remove it from the case, or take pypi:0.34.12 out of its references"),
        (("*",), "remove it from the case, or narrow its references (*) to the releases it still diverges against"),
    ],
)
def test_a_stale_divergence_names_the_release_and_what_to_change(references: tuple[str, ...], fix: str) -> None:
    status, _, reasons = judge(scenario(upstream_bug("coreMemory", references=references)), "pypi:0.34.12", ok(), ok())
    assert status == Status.STALE
    assert reasons == [
        f"recorded divergence in coreMemory no longer diverges against letta-code 0.34.12 (pypi:0.34.12): {fix}"
    ]


def test_a_listed_divergence_with_one_field_gone_is_stale() -> None:
    status, _, _ = judge(scenario(upstream_bug("coreMemory", "content")), "0.32.18", ok(coreMemory="m"), ok())
    assert status == Status.STALE


def test_an_unlisted_extra_field_fails_even_with_a_listed_divergence() -> None:
    status, _, reasons = judge(
        scenario(upstream_bug("coreMemory")), "0.32.18", ok(coreMemory="m", compiledAt="2026-01-02T03:04:05.000Z"), ok()
    )
    assert status == Status.FAIL
    assert "compiledAt" in reasons[0] and "coreMemory" not in reasons[0]


def test_a_divergence_for_another_reference_does_not_apply() -> None:
    status, _, _ = judge(
        scenario(upstream_bug("coreMemory", references=("0.25.3",))), "0.32.18", ok(coreMemory="m"), ok()
    )
    assert status == Status.FAIL


def test_a_wildcard_divergence_applies_to_every_reference() -> None:
    status, _, _ = judge(scenario(upstream_bug("coreMemory", references=("*",))), "0.30.28", ok(coreMemory="m"), ok())
    assert status == Status.KNOWN


def test_both_throwing_passes_and_one_throwing_fails() -> None:
    thrown = Outcome("thrown", thrown="TypeError: a")
    assert judge(scenario(), "0.32.18", thrown, Outcome("thrown", thrown="TypeError: other"))[0] == Status.PASS
    status, diffs, _ = judge(scenario(), "0.32.18", thrown, ok())
    assert status == Status.FAIL and [d.field for d in diffs] == ["thrown"]
    assert judge(scenario(upstream_bug("thrown")), "0.32.18", thrown, ok())[0] == Status.KNOWN


def test_golden_case_checks_bytes_and_size() -> None:
    expect = {"source": "spec 8.6", "coreMemory": "é", "coreMemory_bytes": 2}
    assert judge_golden(scenario(expect=expect), ok(coreMemory="é"))[0] == Status.PASS
    assert judge_golden(scenario(expect=expect), ok(coreMemory="e"))[0] == Status.FAIL
    wrong_size = {**expect, "coreMemory_bytes": 1}
    status, _, reasons = judge_golden(scenario(expect=wrong_size), ok(coreMemory="é"))
    assert status == Status.FAIL and "2 bytes" in reasons[-1]
    assert judge_golden(scenario(expect=expect), Outcome("error", error="x"))[0] == Status.ERROR


# --- compare ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("left", "right", "offset"),
    [
        (b"abc", b"abc", None),
        (b"abc", b"abd", 2),
        (b"ab", b"abc", 2),
        (b"abc", b"ab", 2),
        (b"", b"x", 0),
        ("aé".encode(), "aè".encode(), 2),  # bytes, not characters: C3 A9 vs C3 A8
    ],
)
def test_first_diff_offset(left: bytes, right: bytes, offset: int | None) -> None:
    assert first_diff_offset(left, right) == offset


def test_compare_outcomes_offsets_are_utf8_byte_offsets() -> None:
    diffs = outcome_diff(ok(coreMemory="日本x"), ok(coreMemory="日本y"))
    assert [(d.field, d.offset) for d in diffs] == [("coreMemory", 6)]


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("a\rb", "a␍b"),
        ("a\nb", "a␊\nb"),
        ("a\tb", "a␉b"),
        ("\ufeffx", "⟨BOM⟩x"),
        ("x ", "x·"),
        ("x \ny", "x·␊\ny"),
        ("a b", "a b"),
        ("a\u00a0b", "a⟨NBSP⟩b"),
        ("\u2028\u2029\u0085", "⟨LS⟩⟨PS⟩⟨NEL⟩"),
        ("\u200b", "⟨ZWSP⟩"),
        ("\ufffd", "⟨U+FFFD⟩"),
        ("\x00\x01\x1f\x7f", "␀␁␟␡"),
        ("\u00ad", "⟨U+00AD⟩"),
        ("é🦉", "é🦉"),
    ],
)
def test_visible_shows_invisible_characters_as_glyphs(text: str, shown: str) -> None:
    assert visible(text) == shown


# --- reports ----------------------------------------------------------------------------------------


def result(case_id: str, status: str, reference: str = "0.32.18") -> CaseResult:
    diffs = outcome_diff(ok(coreMemory="m\r"), ok()) if status in (Status.FAIL, Status.KNOWN) else []
    return CaseResult(
        case_id,
        reference,
        "letta-code@0.32.17",
        status,
        ("tag-a",),
        f"cases/compile/{case_id}.yaml",
        description="d",
        diffs=diffs,
        reasons=[f"because {status}"],
        reference_outcome=ok(),
        impl_outcome=ok(),
        request={
            "memoryDir": "/m",
            "system": "S",
            "agentId": "a",
            "conversationId": "c",
            "now": "2026-01-02T03:04:05.678Z",
            "previousMessageCount": 0,
            "includeMemfs": True,
        },
        seconds=0.5,
    )


RESULTS = [
    result("a-pass", Status.PASS),
    result("b-fail", Status.FAIL),
    result("c-error", Status.ERROR),
    result("d-known", Status.KNOWN),
]


def test_write_reports_writes_json_junit_and_html(tmp_path: Path) -> None:
    load_error = ScenarioError(Path("cases/compile/bad.yaml"), 3, "invalid YAML: x")
    report = RunReport(RESULTS, [{"name": "letta-code@0.32.18"}], [load_error], ["conformance", "run"])
    paths = write_reports(report, tmp_path / "out")
    assert {p.name for p in paths.values()} == {"report.json", "junit.xml", "index.html"}

    data = json.loads(paths["json"].read_text(encoding="utf-8"))
    assert data["ok"] is False
    assert data["counts"] == {
        "pass": 1,
        "fail": 1,
        "known-divergence": 1,
        "stale-divergence": 0,
        "error": 1,
        "runtime-divergence": 0,
        "not-applicable": 0,
        "load-error": 1,
    }
    assert [r["case"] for r in data["results"]] == ["a-pass", "b-fail", "c-error", "d-known"]
    assert data["load_errors"][0]["line"] == 3

    root = ET.parse(paths["junit"]).getroot()
    suites = {s.get("name"): s for s in root.iter("testsuite")}
    suite = suites["conformance[0.32.18]"]
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors"), suite.get("skipped")) == (
        "4",
        "1",
        "1",
        "1",
    )
    cases = {c.get("name"): c for c in suite.iter("testcase")}
    assert cases["a-pass"].find("*") is None
    assert cases["b-fail"].find("failure") is not None
    assert cases["c-error"].find("error") is not None
    assert cases["d-known"].find("skipped") is not None
    assert suites["scenario-files"].get("errors") == "1"

    html = paths["html"].read_text(encoding="utf-8")
    for case_id in ("a-pass", "b-fail", "c-error", "d-known"):
        assert case_id in html
    marked_cr = (
        '<mark class="first-diff" id="case-1-b-fail--0.32.18-d0-reference"><span class="glyph" title="U+000D CR">CR'
    )
    assert marked_cr in html  # the differing CR is shown and marked, not swallowed


def test_a_run_with_only_passes_is_ok_and_an_empty_run_is_not() -> None:
    assert RunReport([result("a", Status.PASS), result("b", Status.KNOWN)], [], [], []).ok
    assert not RunReport([], [], [], []).ok
    assert not RunReport([result("a", Status.STALE)], [], [], []).ok


def test_report_without_timing_is_byte_identical_across_runs() -> None:
    slow = [result("a-pass", Status.PASS)]
    slow[0].seconds = 99.0
    fast = [result("a-pass", Status.PASS)]
    fast[0].seconds = 0.01
    one = json.dumps(report_json(RunReport(slow, [{"name": "x", "starts": 3}], [], ["c"], timing=False)))
    two = json.dumps(report_json(RunReport(fast, [{"name": "x", "starts": 1}], [], ["c"], timing=False)))
    assert one == two
    assert "timing" not in one


# --- a session with a fabricated reference ---------------------------------------------------------


class CannedRunner(Runner):
    """A reference that answers the Python port's own record, optionally altered."""

    def __init__(self, alter: dict[str, str] | None = None) -> None:
        self.name = "letta-code@0.32.18"
        self.alter = alter or {}
        self.requests: list[CompileRequest] = []

    def compile(self, request: CompileRequest) -> Outcome:
        from harness.runners.python_port import PythonPortRunner
        from memfs_prompt import profile_for_release

        self.requests.append(request)
        outcome = PythonPortRunner(profile_for_release("0.32.18")).compile(request)
        outcome.record = {**(outcome.record or {}), **self.alter}
        return outcome


@pytest.mark.parametrize(("alter", "status"), [(None, Status.PASS), ({"coreMemory": "different"}, Status.FAIL)])
def test_session_runs_a_case_against_a_reference(tmp_path: Path, alter, status) -> None:
    from harness.core.reference import ReferenceSpec

    path = tmp_path / "compile" / "s.yaml"
    path.parent.mkdir()
    path.write_text('id: s\ndescription: d\nrepo:\n  commits:\n    - files:\n        system/a.md: "a\\n"\n')
    runner = CannedRunner(alter)
    with Session(
        [ReferenceSpec("npm", "0.32.18")], cache=tmp_path / "cache", runner_factory=lambda spec, cache: runner
    ) as session:
        results = session.run([load_scenario(path)])
    assert [(r.case_id, r.reference, r.profile, r.status) for r in results] == [
        ("s", "0.32.18", "letta-code@0.32.14", status)
    ]
    assert runner.requests[0].memory_dir.is_dir()


@given(st.binary(max_size=20), st.binary(max_size=20))
def test_first_diff_offset_is_the_length_of_the_common_prefix(left: bytes, right: bytes) -> None:
    offset = first_diff_offset(left, right)
    if left == right:
        assert offset is None
        return
    assert offset is not None and left[:offset] == right[:offset]
    assert offset == min(len(left), len(right)) or left[offset] != right[offset]


def test_a_null_field_is_not_the_same_as_an_absent_one() -> None:
    # Upstream's JSON.stringify drops undefined: a port emitting `memfsRevision: null` where upstream
    # has no key must fail (found by the mutant revision-null-in-record).
    with_null = Outcome("ok", record={**RECORD, "memfsRevision": None})
    status, diffs, _ = judge(scenario(), "0.32.18", ok(memfsRevision=None), with_null)
    assert status == Status.FAIL and [d.field for d in diffs] == ["memfsRevision"]
