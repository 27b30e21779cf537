"""harness.report.summary: the conformance summary per implementation, by tag family and by reference.

The results of three implementations are made by hand (tests/report_examples.py: three_implementations,
statuses chosen per case), and every expected count below is worked out from that list, not read from a
summary. The summary's three decisions are pinned: a tag's family (every tag in exactly one), a status's
column, the pass percentage; then report.json's `summary` (schema, determinism, read back, recomputed by a
merge), index.html's tables and the terminal lines.
"""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from pathlib import Path

import jsonschema
import pytest
from report_examples import PLANTED, PYTHON, SERVER, case, record, three_implementations

from harness.cases.tags import TAGS
from harness.cli.terminal import conformance_lines
from harness.core.model import Outcome, RunReport, Status
from harness.report.html import SUMMARY_REFERENCES
from harness.report.merge import merge_reports
from harness.report.summary import (
    FAMILIES,
    OTHER,
    Counts,
    column_of,
    families_of,
    family_of,
    report_summary,
    summarize,
    summary_from_json,
    summary_json,
)
from harness.report.write import report_json
from harness.report.writers import write_reports

SCHEMA = json.loads((Path(__file__).parents[1] / "harness" / "report" / "schema.json").read_text(encoding="utf-8"))


def row(passed: int = 0, known: int = 0, failing: int = 0, not_applicable: int = 0) -> dict[str, int]:
    return {"passed": passed, "known": known, "failing": failing, "not_applicable": not_applicable}


#: three_implementations() counted by hand (its docstring says which result has which status).
EXPECTED = {
    PYTHON: {
        # 5 cases x 2 references pass, v2-root passes on pypi:0.34.12, spec-example golden: 12; known: v2-root on
        # 0.32.18 and the runtime divergence of bom-crlf on 0.32.18@node
        "total": row(passed=12, known=2),
        "families": {
            "memfs-v2": row(passed=1, known=1),
            "skills": None,
            "collation": row(passed=4),  # labels-locale and labels-punct on two references
            "quoting/names": row(passed=4),  # labels-punct (names) and quoted-name (quoting + names: once)
            "whitespace/trim": row(passed=1, known=1),  # v2-root's trim
            "bom/crlf": row(passed=2, known=1),  # bom + newlines, counted once per result
            "lifecycle": row(passed=2),
            "provenance": row(passed=1),  # spec + golden, once
        },
        "references": {
            "0.32.18": row(passed=5, known=1),
            "0.32.18@node": row(known=1),
            "pypi:0.34.12": row(passed=6),
            "golden": row(passed=1),
        },
    },
    PLANTED: {
        "total": row(passed=4, failing=3),
        "families": {
            "memfs-v2": row(passed=1),
            "collation": row(failing=2),
            "quoting/names": row(passed=1, failing=1),
            "whitespace/trim": row(passed=1),
            "bom/crlf": row(passed=1),
            "lifecycle": row(failing=1),  # an error is failing
            "provenance": row(passed=1),
        },
        "references": {"pypi:0.34.12": row(passed=3, failing=3), "golden": row(passed=1)},
    },
    SERVER: {
        "total": row(passed=2, known=2, failing=1, not_applicable=2),
        "families": {
            "memfs-v2": row(not_applicable=1),
            "collation": row(known=2),
            "quoting/names": row(known=1, failing=1),
            "whitespace/trim": row(not_applicable=1),
            "bom/crlf": row(passed=1),
            "lifecycle": row(not_applicable=1),
            "provenance": row(passed=1),
        },
        "references": {"pypi:0.34.12": row(passed=1, known=2, failing=1, not_applicable=2), "golden": row(passed=1)},
    },
}


def expected_json() -> dict[str, object]:
    return {
        impl: {**entry, "families": {k: v for k, v in entry["families"].items() if v is not None}}
        for impl, entry in EXPECTED.items()
    }


def test_every_tag_of_the_vocabulary_is_in_exactly_one_family() -> None:
    placed = Counter(tag for tags in FAMILIES.values() for tag in tags)
    assert sorted(tag for tag in TAGS if placed[tag] != 1) == []  # a new tag needs its family in FAMILIES
    assert sorted(tag for tag in placed if tag not in TAGS) == []  # no family names a tag that does not exist
    assert all(family_of(tag) in FAMILIES for tag in TAGS)


def test_a_tag_the_table_does_not_know_counts_under_other_and_families_come_in_table_order() -> None:
    assert family_of("line-endings") == OTHER
    assert families_of(["zzz", "names", "collation", "quoting", "golden"]) == [
        "collation",
        "quoting/names",
        "provenance",
        OTHER,
    ]


@pytest.mark.parametrize(
    ("status", "column"),
    [
        (Status.PASS, "passed"),
        (Status.KNOWN, "known"),
        (Status.RUNTIME, "known"),
        (Status.FAIL, "failing"),
        (Status.STALE, "failing"),
        (Status.ERROR, "failing"),
        (Status.NOT_APPLICABLE, "not_applicable"),
    ],
)
def test_each_status_counts_in_one_column(status: Status, column: str) -> None:
    assert column_of(status) == column


def test_every_status_has_a_column() -> None:
    assert {column_of(status) for status in Status} == {"passed", "known", "failing", "not_applicable"}


@pytest.mark.parametrize(
    ("counts", "percent", "text"),
    [
        (Counts(passed=2, failing=1), 66.6, "66.6%"),  # rounded down
        (Counts(passed=1999, known=1), 99.9, "99.9%"),  # never 100% while one did not pass
        (Counts(passed=3, not_applicable=5), 100.0, "100.0%"),  # not-applicable results are not counted
        (Counts(not_applicable=2), None, "-"),
        (Counts(), None, "-"),
    ],
)
def test_the_pass_percentage_is_of_applicable_results_rounded_down(
    counts: Counts, percent: float | None, text: str
) -> None:
    assert (counts.pass_percent, counts.percent_text) == (percent, text)


def test_three_implementations_are_counted_by_family_and_by_reference() -> None:
    summaries = summarize(three_implementations())
    assert [s.implementation for s in summaries] == [PYTHON, PLANTED, SERVER]  # the default first, then by label
    assert summary_json(summaries) == expected_json()
    assert list(summary_json(summaries)[PYTHON]["references"]) == [
        "0.32.18",
        "0.32.18@node",
        "pypi:0.34.12",
        "golden",
    ]  # release order, golden last
    assert list(summary_json(summaries)[PYTHON]["families"]) == [
        "memfs-v2",
        "collation",
        "quoting/names",
        "whitespace/trim",
        "bom/crlf",
        "lifecycle",
        "provenance",
    ]  # the table's order
    server = summaries[2]
    assert (server.total.applicable, server.total.pass_percent) == (5, 40.0)
    assert server.families["lifecycle"].percent_text == "-"  # nothing applicable
    assert list(summaries[1].failing_families) == ["collation", "quoting/names", "lifecycle"]


def test_the_summary_does_not_depend_on_the_order_of_the_results() -> None:
    results = three_implementations()
    shuffled = results[:]
    random.Random(7).shuffle(shuffled)
    assert summarize(shuffled) == summarize(results)
    first, second = (report_json(RunReport(r, [], [], ["conformance"], timing=False)) for r in (results, shuffled))
    assert json.dumps(first) == json.dumps(second)


def test_report_json_has_the_summary_valid_against_its_schema_and_read_back(tmp_path: Path) -> None:
    paths = write_reports(RunReport(three_implementations(), [], [], ["conformance"], timing=False), tmp_path)
    text = paths["json"].read_text(encoding="utf-8")
    data = json.loads(text)
    jsonschema.validate(data, SCHEMA)
    assert list(data)[:4] == ["schema", "ok", "counts", "summary"]
    assert '\n   "total": {"passed":12,"known":2,"failing":0,"not_applicable":0},\n' in text  # a row a line
    assert data["summary"] == expected_json()
    assert summary_json(summary_from_json(data["summary"])) == data["summary"]
    without = {k: v for k, v in data.items() if k != "summary"}  # a report from before the summary: counted again
    assert summary_json(report_summary(without)) == data["summary"]
    assert {r["implementation"] for r in data["results"]} == {PYTHON, SERVER, PLANTED}


def test_a_summary_section_that_breaks_its_schema_is_refused() -> None:
    data = report_json(RunReport(three_implementations(), [], [], ["conformance"], timing=False))
    data["summary"][PYTHON]["total"]["skipped"] = 1
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(data, SCHEMA)


def test_merged_shards_recompute_the_summary_from_their_results(tmp_path: Path) -> None:
    results = three_implementations()
    halves = [results[0::2], results[1::2]]
    for number, half in enumerate(halves):
        path = write_reports(RunReport(half, [], [], ["conformance"], timing=False), tmp_path / f"s{number}")["json"]
        data = json.loads(path.read_text(encoding="utf-8"))
        data["summary"] = {PYTHON: {"total": row(passed=999), "families": {}, "references": {}}}  # never summed
        path.write_text(json.dumps(data), encoding="ascii")
    merged = merge_reports([tmp_path / "s0", tmp_path / "s1"], ["conformance", "merge-reports"])
    assert summary_json(summarize(merged.results)) == expected_json()
    assert report_json(merged)["summary"] == expected_json()


def test_one_case_against_one_reference_of_two_implementations_merges_as_two_results(tmp_path: Path) -> None:
    ok = Outcome("ok", record=record("m"))
    one = case("c", Status.PASS, ("collation",), ok, ok, implementation=PYTHON)
    other = case("c", Status.FAIL, ("collation",), ok, ok, implementation=PLANTED)
    for name, result in (("a", one), ("b", other)):
        write_reports(RunReport([result], [], [], ["conformance"], timing=False), tmp_path / name)
    merged = merge_reports([tmp_path / "a", tmp_path / "b"], ["conformance", "merge-reports"])
    assert sorted((r.implementation, r.status) for r in merged.results) == [
        (PLANTED, Status.FAIL),
        (PYTHON, Status.PASS),
    ]


def test_the_terminal_prints_one_line_per_implementation_then_its_failing_families() -> None:
    assert conformance_lines(three_implementations()) == [
        "=== conformance by implementation (3) ===",
        "python: 12 passed, 2 known, 0 failing, 0 n/a: 85.7% pass",
        f"{PLANTED}: 4 passed, 0 known, 3 failing, 0 n/a: 57.1% pass",
        "  collation: 0 passed, 0 known, 2 failing, 0 n/a: 0.0% pass",
        "  quoting/names: 1 passed, 0 known, 1 failing, 0 n/a: 50.0% pass",
        "  lifecycle: 0 passed, 0 known, 1 failing, 0 n/a: 0.0% pass",
        f"{SERVER}: 2 passed, 2 known, 1 failing, 2 n/a: 40.0% of 5 applicable pass; 2 of 7 not applicable",
        "  quoting/names: 0 passed, 1 known, 1 failing, 0 n/a: 0.0% pass",
    ]
    assert conformance_lines([]) == []


def cells(html: str, implementation: str, name: str) -> list[str]:
    """The passed/known/failing/n-a/pass cells of one row of one implementation's table in index.html."""
    table = re.search(
        rf'<table class="conformance" data-implementation="{re.escape(implementation)}">(.*?)</table>', html, re.S
    )
    assert table, implementation
    found = re.search(rf'<tr class="[^"]*" data-row="{re.escape(name)}"[^>]*>(.*?)</tr>', table.group(1), re.S)
    assert found, name
    return [re.sub(r"<[^>]+>", "", cell) for cell in re.findall(r"<td[^>]*>(.*?)</td>", found.group(1), re.S)]


def test_index_html_shows_a_table_per_implementation_right_after_the_verdict(tmp_path: Path) -> None:
    html = write_reports(RunReport(three_implementations(), [], [], ["conformance"], timing=False), tmp_path)["html"]
    text = html.read_text(encoding="utf-8")
    order = re.findall(r'<table class="conformance" data-implementation="([^"]+)">', text)
    assert order == [PYTHON, PLANTED, SERVER]
    assert text.index('id="verdict"') < text.index('id="conformance"') < text.index('id="run"')
    assert cells(text, PYTHON, "all results") == ["12", "2", "0", "0", "85.7%"]
    assert cells(text, PLANTED, "collation") == ["0", "0", "2", "0", "0.0%"]
    assert cells(text, SERVER, "pypi:0.34.12") == ["1", "2", "1", "2", "25.0%"]
    assert cells(text, SERVER, "lifecycle") == ["0", "0", "0", "1", "-"]
    assert 'data-row="skills"' not in text  # a family with no results has no row


def test_many_all_passing_references_fold_behind_a_button(tmp_path: Path) -> None:
    ok = Outcome("ok", record=record("m"))
    labels = [f"pypi:0.34.{n}" for n in range(SUMMARY_REFERENCES + 2)]
    results = [case("c", Status.PASS, ("collation",), ok, ok, label=label) for label in labels]
    results[3] = case("c", Status.FAIL, ("collation",), ok, ok, label=labels[3])
    text = write_reports(RunReport(results, [], [], ["conformance"], timing=False), tmp_path)["html"].read_text()
    assert re.findall(r'<tr class="reference" data-row="([^"]+)"', text) == [labels[3]]  # not all passed: shown
    assert len(re.findall(r'<tr class="reference folded"', text)) == len(labels) - 1
    assert f"show the {len(labels) - 1} other references (all passed)" in text
