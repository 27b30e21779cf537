"""harness.report_html and the report files: what the page holds, the cap on huge outputs, report.json's schema.

The browser-level checks (what a person sees) are in test_report_browser.py; these pin the
markup and the data behind it without a browser.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest
from report_examples import FAILURES, REFERENCES, case, mixed_report, record

import harness.core.model
from harness.core.fields import COMPARED_FIELDS, GOLDEN_FIELDS, SKILLS_FIELD
from harness.core.model import GOLDEN, CaseResult, FieldDiff, Outcome, RunReport, ScenarioError, Status
from harness.report.html import (
    SHOW_AFTER,
    SHOW_BEFORE,
    diff_pair,
    field_rows,
    glyph_html,
    render_html,
    side_by_side,
)
from harness.report.reproduce import reproduce_commands, shell_quote
from harness.report.write import report_json
from harness.report.writers import write_reports
from harness.verdict.diff import compared_fields, outcome_diff, structured_diff, verdict_fields
from harness.verdict.text import first_diff_offset, first_difference

SCHEMA = json.loads((Path(__file__).parents[1] / "harness" / "report" / "schema.json").read_text(encoding="utf-8"))


def glyph_names(html: str) -> list[str]:
    return re.findall(r'<span class="glyph"[^>]*>([^<]*)</span>', html)


def marked(html: str) -> str:
    """The text inside the first-diff mark, glyph labels included."""
    inner = re.search(r'<mark class="first-diff"[^>]*>(.*?)</mark>', html, re.S)
    assert inner, html
    return re.sub(r"<[^>]+>", "", inner.group(1))


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("a\r\nb", ["CR", "LF"]),
        ("\ufeffx", ["BOM"]),
        ("a\tb", ["TAB"]),
        ("end \nnext ", ["SP", "LF", "SP"]),
        ("a\u00a0b", ["NBSP"]),
        ("bad \ufffd", ["U+FFFD"]),
        ("\x00\x1b\x7f", ["NUL", "ESC", "DEL"]),
        ("zero\u200bwidth\u2028", ["ZWSP", "LS"]),
        ("lone \udcff", ["U+DCFF"]),
        ("plain words, café ☕", []),
    ],
)
def test_invisible_characters_become_named_glyphs(text: str, names: list[str]) -> None:
    assert glyph_names(glyph_html(text)) == names


def test_a_space_before_the_marked_character_is_not_called_trailing() -> None:
    # "a c" vs "a d": the view splits after "a ", and that space is followed by "c", not a line end.
    pair = diff_pair("a c", "a d", "x")
    assert glyph_names(pair["reference"].html) == []
    assert marked(pair["reference"].html) == "c"


def test_the_whole_character_holding_the_first_differing_byte_is_marked() -> None:
    # é is C3 A9 and è is C3 A8: the first differing byte is the second byte of the character.
    pair = diff_pair("caf\u00e9", "caf\u00e8", "x")
    assert (marked(pair["reference"].html), marked(pair["port"].html)) == ("\u00e9", "\u00e8")
    assert "\ufffd" not in pair["reference"].html + pair["port"].html


def test_a_value_that_is_a_prefix_of_the_other_marks_its_end() -> None:
    pair = diff_pair("abc", "abcd", "x")
    assert (marked(pair["reference"].html), marked(pair["port"].html)) == ("END", "d")


def test_an_absent_value_is_marked_absent() -> None:
    pair = diff_pair(None, "x", "x", reference_present=False)
    assert marked(pair["reference"].html) == "absent" and pair["reference"].described == "absent"


def test_a_null_value_is_shown_as_null_not_as_absent() -> None:
    pair = diff_pair(None, "x", "x")  # the reference has the field, and it is null
    assert marked(pair["reference"].html) == "n" and pair["reference"].described == "4 bytes"
    null = Outcome("ok", record={"content": "c", "memfsRevision": None})
    revision = Outcome("ok", record={"content": "c", "memfsRevision": "9f3c"})
    result = CaseResult(
        "c",
        "0.32.18",
        "letta-code@0.32.14",
        Status.FAIL,
        (),
        "c.yaml",
        diffs=outcome_diff(null, revision),
        reference_outcome=null,
        impl_outcome=revision,
    )
    rows = {row["field"]: row for row in field_rows(result)}
    assert (rows["memfsRevision"]["reference"], rows["memfsRevision"]["port"]) == ("null", "4 bytes")
    assert rows["coreMemory"]["reference"] == rows["coreMemory"]["port"] == "absent"
    [side] = side_by_side(result, "r")
    assert marked(side["reference"].html) == "n"


def test_first_difference_gets_its_line_and_column() -> None:
    pair = diff_pair("one\ntwo\nthree", "one\ntwo\nthreE", "x")
    assert (pair["line"], pair["column"]) == (3, 5)


def test_outputs_are_escaped_not_interpreted() -> None:
    html = render_html(mixed_report())
    assert "<script>alert(" not in html
    assert "&lt;script&gt;alert(" in html and "&lt;/script&gt; &amp; &lt;b&gt;" in html
    assert "&lt;script&gt;alert(3)&lt;/script&gt;" in html and "&lt;script&gt;alert(4)&lt;/script&gt;" in html


def test_the_page_loads_nothing_from_the_network() -> None:
    html = render_html(mixed_report())
    assert not re.search(r"<(link|img|iframe)\b", html)
    assert not re.search(r"\b(src|href)=\"(?!#)", html)
    assert "@import" not in html and "url(" not in html


def test_a_multi_megabyte_output_is_cut_around_the_first_difference_with_a_note(tmp_path: Path) -> None:
    big = "memory line with text\n" * 200_000  # 4.4 MB
    index = len(big) // 2
    reference, port = big[:index] + "X" + big[index + 1 :], big
    result = case(
        "huge", Status.FAIL, ("big",), Outcome("ok", record=record(reference)), Outcome("ok", record=record(port))
    )
    paths = write_reports(RunReport([result], [{"name": "letta-code@0.32.18"}], [], ["conformance"]), tmp_path)

    html = paths["html"].read_text(encoding="utf-8")
    assert len(html) < 1_500_000  # two fields x two sides x ~32k characters, not 4 x 4.4 MB
    assert html.count('<mark class="first-diff"') == 4
    core = re.search(r"field <code>coreMemory</code>.*?</div>\s*</div>\s*</div>", html, re.S)
    assert core
    notes = re.findall(r"… (\d+) (?:bytes before this|more bytes) not shown", core.group(0))
    before, after = index - SHOW_BEFORE, len(big) - index - SHOW_AFTER
    assert [int(n) for n in notes] == [before, after, before, after]  # ASCII: characters are bytes
    assert "X" in marked(core.group(0))


def test_structured_diff_of_huge_values_stays_small() -> None:
    big = "x" * 3_000_000
    text = structured_diff({"coreMemory": big + "a"}, {"coreMemory": big + "b"})
    assert 0 < len(text) < 20_000
    assert "3000001 chars" in text


def test_lifecycle_turns_are_a_table_with_both_sides_and_the_differing_observations_flagged() -> None:
    html = render_html(mixed_report())
    section = re.search(r'<section class="case"[^>]*data-case="lifecycle-update-once".*?</section>', html, re.S)
    assert section
    rows = re.findall(
        r'<tr class="(differs|same)"><td>(\d)</td><td>([^<]*)</td><td class="obs">([^<]*)</td>',
        section.group(0).split('<table class="turns')[1],
    )
    assert [(kind, turn, obs) for kind, turn, _, obs in rows] == [
        ("same", "1", "fact_seen"),
        ("same", "1", "messages"),
        ("same", "2", "fact_seen"),
        ("same", "2", "messages"),
        ("differs", "2", "reminder"),
        ("differs", "3", "fact_seen"),
        ("same", "3", "messages"),
    ]


def test_report_json_and_junit_carry_the_turns() -> None:
    report = mixed_report()
    data = report_json(report)
    lifecycle = next(r for r in data["results"] if r["case"] == "lifecycle-update-once")
    assert [t["turn"] for t in lifecycle["turns"]] == [1, 2, 3]
    assert lifecycle["turns"][2]["diffs"] == [{"observation": "fact_seen", "impl": True, "reference": False}]
    from harness.report.junit import junit_xml

    root = ET.fromstring(junit_xml(report))
    failure = next(c for c in root.iter("testcase") if c.get("name") == "lifecycle-update-once").find("failure")
    assert failure is not None and "turn 3 (send again): fact_seen differs: reference false, implementation true" in (
        failure.text or ""
    )


def test_a_junit_failure_message_is_the_first_difference() -> None:
    from harness.report.junit import junit_xml

    root = ET.fromstring(junit_xml(mixed_report()))
    messages = {
        c.get("name"): c.find("failure").get("message") for c in root.iter("testcase") if c.find("failure") is not None
    }
    # crlf-vs-lf: content is "S\n\n" + "line one" then CR against LF, at byte 3 + 8; coreMemory differs too
    assert messages["crlf-vs-lf"] == (
        "fail: content byte 11: reference U+000D CR (control), implementation U+000A LF (control) (+1 more field)"
    )
    assert messages["lifecycle-update-once"] == "fail: turn 2 and 3 differ"  # no field differs: its first reason


def test_report_json_follows_its_documented_schema(tmp_path: Path) -> None:
    for timing in (True, False):
        report = mixed_report()
        report.timing = timing
        jsonschema.validate(report_json(report), SCHEMA)
    data = json.loads(write_reports(mixed_report(), tmp_path)["json"].read_text(encoding="ascii"))
    jsonschema.validate(data, SCHEMA)
    assert data["schema"] == SCHEMA["properties"]["schema"]["const"]


def test_a_golden_failure_keeps_both_differing_values_as_the_schema_names_them() -> None:
    """A golden result's expected bytes are in no outcome: report.json keeps them in `diff_values`, which the
    writer and merge-reports spell `{reference, impl}` (the schema once said `port`, and rejected the report)."""
    ok = Outcome("ok", record=record("m"))
    golden = case("g", Status.FAIL, ("golden",), None, ok, label="golden")
    golden.diffs = [FieldDiff("content", "expected", "got", 0)]
    data = report_json(RunReport([golden], [], [], ["conformance"]))
    (written,) = data["results"]
    assert written["diff_values"] == [{"reference": "expected", "impl": "got"}]
    jsonschema.validate(data, SCHEMA)


def test_the_schema_rejects_an_undocumented_field() -> None:
    data = report_json(mixed_report())
    data["results"][0]["surprise"] = 1
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(data, SCHEMA)


def test_fields_compared_lists_every_field_and_which_differed() -> None:
    data = report_json(mixed_report())
    crlf = next(r for r in data["results"] if r["case"] == "crlf-vs-lf" and r["reference"] == REFERENCES[0])
    assert crlf["compared_fields"] == list(COMPARED_FIELDS)
    assert [(d["field"], d["offset"]) for d in crlf["diffs"]] == [("content", 11), ("coreMemory", FAILURES[0][4])]
    error = next(r for r in data["results"] if r["case"] == "error-case")
    assert error["compared_fields"] == []


def test_the_grid_has_a_row_per_case_only_when_several_references_ran() -> None:
    assert '<div id="grid" class="many">' in render_html(mixed_report())
    ok = Outcome("ok", record=record("m"))
    single = RunReport([case("a", Status.PASS, (), ok, ok)], [{"name": "letta-code@0.32.18"}], [], [])
    assert '<div id="grid" class="one">' in render_html(single) and 'class="grow"' not in render_html(single)


def test_reproduce_commands_pass_every_input_and_golden_cases_name_no_reference() -> None:
    ok = Outcome("ok", record=record("m"))
    result = case("x", Status.FAIL, (), ok, ok)
    result.request["includeMemfs"] = False
    commands = reproduce_commands(result)
    assert (
        commands[0] == "conformance run cases/compile/x.yaml --reference npm:0.32.18 --profile letta-code@0.32.18 -k x"
    )
    assert commands[1].endswith("--now=2026-01-02T03:04:05.678Z --previous-message-count=0 --no-memfs")
    assert commands[2].startswith("conformance diff-repo /cache/repos/x/memory --agent-id agent-1")
    assert "--no-memfs --reference npm:0.32.18" in commands[2]
    result.reference = "golden"
    assert reproduce_commands(result)[0] == "conformance run cases/compile/x.yaml -k x"
    assert len(reproduce_commands(result)) == 2


def test_reproduce_commands_name_the_implementation_under_test_when_it_is_not_the_port() -> None:
    ok = Outcome("ok", record=record("m"))
    result = case("x", Status.FAIL, (), ok, ok)
    result.implementation = "cmd:./my-port --serve"
    commands = reproduce_commands(result)
    assert commands[0] == (
        "conformance run cases/compile/x.yaml --reference npm:0.32.18 --impl 'cmd:./my-port --serve' "
        "--profile letta-code@0.32.18 -k x"
    )
    assert not any(c.startswith("python -m memfs_prompt") for c in commands)  # that is the port's, not its
    assert commands[1].startswith("conformance diff-repo") and commands[1].endswith("--impl 'cmd:./my-port --serve'")


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
@pytest.mark.parametrize(
    "text", ["plain", "it's", "You are a helpful agent.\n\n{CORE_MEMORY}", "a\r\nb\\n\x01c'\t", "ü \u2028"]
)
def test_reproduce_arguments_survive_the_shell_on_one_line(text: str) -> None:
    quoted = shell_quote(text)
    assert "\n" not in quoted and "\r" not in quoted
    out = subprocess.run(["bash", "-c", f"printf %s {quoted}"], capture_output=True, check=True).stdout
    assert out.decode("utf-8") == text


@pytest.mark.parametrize("at", [0, 1, 4095, 4096, 4097, 8191, 8192, 12_000, 12_287])
def test_first_difference_is_found_across_comparison_blocks(at: int) -> None:
    base = bytes(range(256)) * 48  # 12,288 bytes: three 4 KiB blocks
    changed = base[:at] + bytes([base[at] ^ 0xFF]) + base[at + 1 :]
    assert first_difference(base, changed) == first_diff_offset(changed, base) == at
    assert first_difference(base, base[:at]) == at  # a prefix: the shorter length
    assert first_difference(base.decode("latin-1"), changed.decode("latin-1")) == at


def test_the_page_is_the_same_bytes_for_the_same_run() -> None:
    assert render_html(mixed_report()) == render_html(mixed_report())


# --- size budgets (docs/report-format.md): file sizes, not timings ----------------------------------

MB = 1_000_000


def test_a_passing_matrix_of_200_cases_by_35_references_stays_within_the_size_budgets(tmp_path: Path) -> None:
    from report_examples import passing_matrix

    paths = write_reports(passing_matrix(), tmp_path)
    assert paths["json"].stat().st_size <= 15 * MB  # the full matrix's report.json
    assert paths["html"].stat().st_size <= 1 * MB  # and its index.html
    html = paths["html"].read_text(encoding="utf-8")
    assert 'data-case="case-' not in html  # no row or grid cell per passing result: they come from the page data
    data = json.loads(paths["json"].read_text(encoding="ascii"))
    assert len(data["results"]) == 7000 and len(data["cases"]) == 200
    assert sum(1 for r in data["results"] if "tags" in r or "request" in r) == 0  # stored once, per case


def test_a_passing_corpus_against_one_reference_stays_within_a_megabyte(tmp_path: Path) -> None:
    from report_examples import passing_matrix

    paths = write_reports(passing_matrix(cases=400, labels=["0.32.18"]), tmp_path)
    assert paths["json"].stat().st_size <= 1 * MB and paths["html"].stat().st_size <= 1 * MB


def test_report_json_read_back_gives_every_field_and_rebuilds_the_same_file(tmp_path: Path) -> None:
    from report_examples import passing_matrix

    from harness.report.merge import merge_reports
    from harness.report.stored import full_entries

    report = passing_matrix(cases=3, labels=["0.25.3", "0.32.18", "pypi:0.34.0"])
    report.results += mixed_report().results
    path = write_reports(report, tmp_path / "one")["json"]
    data = json.loads(path.read_text(encoding="ascii"))
    jsonschema.validate(data, SCHEMA)
    assert any(r.get("field_comparison") == {"same_as": "previous"} for r in data["results"])
    entries = full_entries(data, expand=True)
    assert [(e["case"], e["reference"]) for e in entries] == [(r["case"], r["reference"]) for r in data["results"]]
    assert all(set(SCHEMA["$defs"]["result"]["properties"]) >= set(e) for e in entries)
    assert all({"tags", "path", "request", "reasons", "diffs", "turns", "compared_fields"} <= set(e) for e in entries)
    assert {e["reference_outcome"]["status"] for e in entries if e["case"] == "case-001"} == {"ok"}
    merged = merge_reports([tmp_path / "one"], ["conformance", "run", "cases", "--report", "out"])
    merged.command, merged.timing = report.command, True
    merged.extra = report.extra
    assert write_reports(merged, tmp_path / "two")["json"].read_bytes() == path.read_bytes()


def test_the_banner_counts_every_result_as_the_counts_do_and_names_golden_checks_apart() -> None:
    ok = Outcome("ok", record=record("m"))
    results = [case(f"c{n}", Status.PASS, (), ok, ok, label=label) for n in range(3) for label in REFERENCES]
    golden = [case(f"g{n}", Status.PASS, ("golden",), None, ok, label="golden") for n in range(2)]
    html = render_html(RunReport(results + golden, [], [], ["conformance"]))
    banner = re.search(r'<div id="verdict".*?</div></div>', html, re.S)
    assert banner is not None
    text = re.sub(r"<[^>]+>", "", banner.group(0))
    assert "PASS: all 8 results agree" in text and "3 cases × 2 references" in text
    assert (
        "golden 2 golden checks among the results, not a reference: 2 cases checked against the expected bytes "
        "stored in the case, 2 of 2 pass"
    ) in text
    golden[0].status = Status.FAIL
    load_error = ScenarioError(Path("cases/compile/bad.yaml"), 3, "invalid YAML: x")
    report = RunReport(results + golden, [], [load_error], ["conformance"])
    html = render_html(report)
    assert "FAILING: 1 of 8 results (1 golden check), 1 scenario file not loaded, 1 distinct cause" in html
    assert sum(report.counts.values()) == 8 + 1  # the counts beneath: every result and the file not loaded
    assert "1 of 2 pass" in html


def test_golden_checks_beside_one_reference_leave_the_grid_one_list() -> None:
    ok = Outcome("ok", record=record("m"))
    results = [case("a", Status.PASS, (), ok, ok), case("g", Status.PASS, ("golden",), None, ok, label="golden")]
    assert '<div id="grid" class="one">' in render_html(RunReport(results, [], [], ["conformance"]))


def test_the_fields_a_result_compared_come_from_the_one_rule_in_verdict_diff() -> None:
    """A result carrying no `compared` (built by hand, or read from an old report) is asked of
    verdict.diff.compared_fields, so a client-skills record lists systemPromptWithSkills too."""
    both = Outcome("ok", record={"content": "c", SKILLS_FIELD: "c\n<available_skills/>"})
    result = CaseResult(
        "c", "0.34.12", "letta-code@0.34.12", Status.PASS, (), "c.yaml", reference_outcome=both, impl_outcome=both
    )
    assert verdict_fields(result) == list(compared_fields(both, both)) and SKILLS_FIELD in verdict_fields(result)
    golden = CaseResult("g", GOLDEN, "spec-v2", Status.PASS, (), "g.yaml", impl_outcome=both)
    assert verdict_fields(golden) == list(GOLDEN_FIELDS)


def test_reproduce_asks_harness_model_which_label_is_golden(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(harness.core.model, "GOLDEN", "spec-only")  # one owner of the label: renaming it is one edit
    result = CaseResult("c", "spec-only", "letta-code@0.32.14", Status.FAIL, (), "c.yaml")
    [rerun] = reproduce_commands(result)
    assert "--reference" not in rerun and "--profile" not in rerun
