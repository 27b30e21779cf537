"""harness.matrix's report sections on fabricated results: the matrix, compared fields, the HTML block."""

from __future__ import annotations

from harness.core.fields import COMPARED_FIELDS
from harness.core.model import CaseResult, FieldDiff, Outcome, RunReport, Status
from harness.core.reference import ReferenceSpec
from harness.report.html import render_html
from harness.report.write import report_json
from harness.tools.releases.drift import drift_report
from harness.tools.releases.gate import evaluate
from harness.tools.releases.matrix import field_comparison_summary, matrix_json, reference_outcomes
from harness.verdict.diff import ABSENT_BOTH, BOTH


def result(case: str, reference: str, status: str, absent: tuple[str, ...] = (), content: str = "c") -> CaseResult:
    compared = {f: (ABSENT_BOTH if f in absent else BOTH) for f in COMPARED_FIELDS}
    record = {"content": content, "compiledAt": "t", "rawSystemHash": "h"}
    out = CaseResult(
        case,
        reference,
        "p",
        status,
        (),
        f"cases/compile/{case}.yaml",
        compared=compared,
        reference_outcome=Outcome("ok", record=record),
    )
    if status == Status.RUNTIME:
        out.baseline, out.runtime_diffs = reference.split("@")[0], [FieldDiff("content", "a", "b", 0)]
    return out


RESULTS = [
    result("a", "0.25.9", Status.PASS, ("coreMemory", "memfsRevision")),
    result("b", "0.25.9", Status.PASS, ("coreMemory",)),
    result("a", "0.30.28", Status.PASS, content="d"),
    result("b", "0.30.28", Status.FAIL),
    result("a", "0.30.28@node", Status.RUNTIME, content="e"),
    result("b", "0.30.28@node", Status.PASS),
]
SPECS = [ReferenceSpec.parse(t) for t in ("npm:0.25.9", "npm:0.30.28", "npm:0.30.28@node")]


def test_compared_fields_say_which_fields_each_reference_was_compared_on() -> None:
    fields = field_comparison_summary(RESULTS)
    assert fields["0.25.9"]["coreMemory"] == {"summary": "compared-as-absent", "cases": {"compared-as-absent": 2}}
    assert fields["0.25.9"]["memfsRevision"]["summary"] == "mixed"
    assert fields["0.30.28"]["coreMemory"]["summary"] == "compared"


def test_matrix_json_has_the_cases_by_references_table_and_the_runtime_effects() -> None:
    data = matrix_json(RESULTS, SPECS, None)
    assert data["cases"] == {
        "a": {"0.25.9": Status.PASS, "0.30.28": Status.PASS, "0.30.28@node": Status.RUNTIME},
        "b": {"0.25.9": Status.PASS, "0.30.28": Status.FAIL, "0.30.28@node": Status.PASS},
    }
    assert data["references"][2]["baseline"] == "0.30.28" and data["references"][2]["runtime"] == "node"
    assert data["runtime_effects"] == [
        {"case": "a", "reference": "0.30.28@node", "baseline": "0.30.28", "fields": ["content"]}
    ]
    assert "timing" not in data


def test_the_html_report_shows_gate_compared_fields_runtime_effects_and_drift() -> None:
    drift = drift_report(reference_outcomes(RESULTS), [], SPECS, ["0.25.9", "0.30.28"])
    gate = evaluate(RESULTS, "0.25.9", "0.30.28")
    extra = {"matrix": matrix_json(RESULTS, SPECS, 1.0), "drift": drift.to_json(), "gate": gate.to_json()}
    report = RunReport(RESULTS, [], [], ["conformance", "matrix"], extra=extra)
    html = render_html(report)
    assert 'id="compared-fields"' in html and "compared-as-absent" in html
    assert 'id="runtime-effects"' in html and 'id="drift"' in html
    assert "Gate 0.25.9 → 0.30.28" in html and "pass → fail" in html
    assert report_json(report)["gate"]["regressions"][0]["case"] == "b"
    assert report.counts[Status.RUNTIME] == 1 and not report.ok  # runtime drift is not a failure; b's Status.FAIL is


def test_the_html_report_without_matrix_sections_has_none_of_them() -> None:
    html = render_html(RunReport(RESULTS[:1], [], [], ["conformance", "run"]))
    assert 'id="drift"' not in html and 'id="compared-fields"' not in html


def test_a_variant_result_survives_report_json_and_back() -> None:
    from harness.report.write import result_from_json, result_json

    variant = RESULTS[4]
    entry = result_json(variant, timing=False)
    again = result_from_json(entry)
    assert (again.compared, again.baseline, again.runtime_diffs) == (
        variant.compared,
        variant.baseline,
        variant.runtime_diffs,
    )
    assert result_json(again, timing=False) == entry
