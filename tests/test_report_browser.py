"""index.html opened in headless Chromium: what a person reading the report sees.

A fabricated run (tests/report_examples.py: passes, CRLF/BOM/NBSP/trailing-space failures, an
error with stderr, a known divergence, a lifecycle case, two references) is written with
write_reports and loaded from disk in Debian's chromium, driven by Playwright (no browser
download). Screenshots are kept in reports/artifacts/ (git-ignored) and their paths printed.

Without /usr/bin/chromium (or $CHROMIUM) or Playwright the tests skip, unless $CI is set: in
CI (.ci/run installs chromium and sets CI) they must run.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from report_examples import FAILURES, REFERENCES, STDERR, mixed_report

from harness.report.writers import write_reports

CHROMIUM = Path(os.environ.get("CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
ARTIFACTS = Path(__file__).resolve().parents[1] / "reports" / "artifacts"
HIGHLIGHT = "rgb(224, 0, 27)"  # mark.first-diff's background in report.html.j2


def _unavailable(reason: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"{reason}; CI must run the browser test (.ci/run installs chromium)")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("playwright is not installed (pip install -e '.[test]')")
    if not CHROMIUM.exists():
        _unavailable(f"{CHROMIUM} not found (apt-get install chromium, or set $CHROMIUM)")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def page(browser: Any, tmp_path: Path) -> Iterator[Any]:
    html = write_reports(mixed_report(), tmp_path / "report")["html"]
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.requests, page.js_errors = [], []
    page.on("request", lambda request: page.requests.append(request.url))
    page.on("pageerror", lambda error: page.js_errors.append(str(error)))
    page.goto(html.as_uri())
    yield page
    assert page.js_errors == []
    page.close()


def screenshot(page: Any, name: str, capsys: pytest.CaptureFixture[str], **options: Any) -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / name
    page.screenshot(path=str(path), **options)
    with capsys.disabled():
        print(f"\nscreenshot: {path}")
    return path


def section(page: Any, case_id: str) -> Any:
    return page.locator(f'section.case[data-case="{case_id}"]')


def in_viewport(page: Any, locator: Any) -> bool:
    box = locator.bounding_box()
    return box is not None and -1 <= box["y"] < page.viewport_size["height"] and box["height"] > 0  # -1: rounding


def test_a_person_sees_the_failing_case_its_glyphs_and_the_marked_first_difference(
    page: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    summary = page.locator("#summary").inner_text()
    for count in ("pass: 3", "fail: 6", "known-divergence: 1", "error: 1"):
        assert count in summary

    # From the results table, the failing case's link brings its detail section into view.
    page.locator('#results tr[data-case="crlf-vs-lf"][data-reference="0.32.18"] a').click()
    crlf = section(page, "crlf-vs-lf")
    assert in_viewport(page, crlf.locator("h3"))
    assert "first differing byte at offset 8 (line 1, column 9" in crlf.locator("h4.diff-heading").nth(1).inner_text()
    ref_pane, port_pane = crlf.locator(".side").nth(1).locator(".pane").all()
    assert ref_pane.locator("b").first.inner_text() == "reference 0.32.18"
    assert ref_pane.locator("pre").inner_text() == "line oneCRLF\nline twoCRLF\n"
    assert port_pane.locator("pre").inner_text() == "line oneLF\nline twoLF\n"
    mark = ref_pane.locator("mark.first-diff")
    assert mark.is_visible() and mark.inner_text() == "CR"
    assert mark.evaluate("m => getComputedStyle(m).backgroundColor") == HIGHLIGHT
    assert port_pane.locator("mark.first-diff").inner_text() == "LF\n"  # the glyph, then the line break it stands for
    verdicts = crlf.locator("table.fields tr.differs td.obs").all_inner_texts()
    assert verdicts == ["content", "coreMemory"]
    screenshot(page, "report-failing-case.png", capsys)

    # Each byte-level failure: the marked character on both sides, as a person reads it.
    shown = {
        "crlf-vs-lf": ("CR", "LF\n"),
        "bom-kept": ("BOM", "h"),
        "nbsp-in-value": ("NBSP", " "),
        "trailing-space": ("SP", "LF\n"),
    }
    for case_id, _, _, _, offset in FAILURES:
        view = section(page, case_id).locator(".side").nth(1)  # coreMemory
        view.scroll_into_view_if_needed()
        marks = view.locator("mark.first-diff")
        assert (marks.nth(0).inner_text(), marks.nth(1).inner_text()) == shown[case_id]
        assert all(in_viewport(page, marks.nth(i)) for i in (0, 1))
        assert f"offset {offset} " in section(page, case_id).locator("h4.diff-heading").nth(1).inner_text()

    error = section(page, "error-case")
    error.scroll_into_view_if_needed()
    assert error.locator("pre.stderr").is_visible()
    assert error.locator("pre.stderr").inner_text() == STDERR
    assert "known-divergence" in section(page, "known-fffd").locator("h3").inner_text()

    lifecycle = section(page, "lifecycle-update-once")
    turns = lifecycle.locator("table.turns tr.differs")
    turns.first.scroll_into_view_if_needed()
    assert turns.locator("td.obs").all_inner_texts() == ["reminder", "fact_seen"]
    assert turns.nth(1).locator("mark.first-diff").all_inner_texts() == ["f", "t"]
    rows = lifecycle.locator("table.turns tr.differs, table.turns tr.same")
    assert [row.is_visible() for row in rows.all()].count(True) == 2  # identical observations hidden at first
    lifecycle.locator("input.only-diffs").uncheck()
    assert all(row.is_visible() for row in rows.all()) and rows.count() == 7
    screenshot(page, "report-lifecycle.png", capsys)
    screenshot(page, "report-full.png", capsys, full_page=True)

    assert [url for url in page.requests if not url.startswith("file://")] == []


def test_the_status_tag_and_reference_filters_hide_the_other_rows(
    page: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    def visible_rows() -> list[tuple[str, str, str]]:
        rows = page.locator("#results tbody tr")
        return [
            (row.get_attribute("data-case"), row.get_attribute("data-reference"), row.get_attribute("data-status"))
            for row in rows.all()
            if row.is_visible()
        ]

    assert len(visible_rows()) == 11
    page.select_option("#status-filter", "fail")
    assert {status for _, _, status in visible_rows()} == {"fail"}
    assert len(visible_rows()) == 6
    assert page.locator("#shown-count").inner_text() == "6 of 11 shown"

    page.select_option("#tag-filter", "whitespace")
    assert sorted(case for case, _, _ in visible_rows()) == ["nbsp-in-value", "trailing-space"]
    screenshot(page, "report-filtered.png", capsys)

    page.select_option("#status-filter", "")
    page.select_option("#tag-filter", "line-endings")
    assert sorted(visible_rows()) == [("crlf-vs-lf", REFERENCES[1], "pass"), ("crlf-vs-lf", REFERENCES[0], "fail")]
    page.select_option("#reference-filter", REFERENCES[1])
    assert visible_rows() == [("crlf-vs-lf", REFERENCES[1], "pass")]

    page.select_option("#tag-filter", "")
    page.select_option("#reference-filter", "")
    page.locator('#summary button[data-status="error"]').click()
    assert visible_rows() == [("error-case", REFERENCES[0], "error")]


def test_a_multi_megabyte_output_shows_the_cut_notes_and_scrolls_to_the_marked_byte(
    browser: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from report_examples import case, record

    from harness.core.model import Outcome, RunReport, Status

    big = "memory line with text\n" * 200_000  # 4.4 MB
    index = len(big) // 2
    result = case(
        "huge-output",
        Status.FAIL,
        ("big",),
        Outcome("ok", record=record(big[:index] + "\r" + big[index + 1 :])),
        Outcome("ok", record=record(big)),
    )
    html = write_reports(RunReport([result], [{"name": "letta-code@0.32.18"}], [], ["conformance"]), tmp_path)["html"]
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(html.as_uri())
    view = section(page, "huge-output").locator(".side").nth(1)
    view.scroll_into_view_if_needed()
    for summary in view.locator(".pane .truncated").all():
        assert in_viewport(page, summary) and summary.inner_text().startswith("Truncated: this view shows the ")
    for pane in view.locator(".pane .text").all():
        notes = pane.locator(".cut").all_inner_texts()
        assert len(notes) == 2 and "bytes before this not shown" in notes[0] and "more bytes not shown" in notes[1]
        mark = pane.locator("mark.first-diff")
        pane_box, mark_box = pane.bounding_box(), mark.bounding_box()  # the pane opened scrolled to the mark
        assert pane_box["y"] <= mark_box["y"] <= pane_box["y"] + pane_box["height"]
    assert view.locator("mark.first-diff").all_inner_texts() == ["CR", "m"]
    screenshot(page, "report-huge-output.png", capsys)
    page.close()


def test_the_verdict_and_the_causes_come_first_and_search_and_counts_visibly_act(
    page: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    banner = page.locator("#verdict")
    assert in_viewport(page, banner) and banner.inner_text().startswith("FAILING: ")
    assert in_viewport(page, page.locator("#explained"))  # the first screen: the failures by rule, to fix in order
    assert page.locator("#run").is_visible()  # the run's metadata follows the summaries, not on the first screen
    assert page.locator("#causes").is_visible() and page.locator(".group").count() >= 4
    page.fill("#search", "bom")
    rows = [r.get_attribute("data-case") for r in page.locator("#results tbody tr").all() if r.is_visible()]
    assert rows and all("bom" in case for case in rows)
    page.fill("#search", "")
    page.locator('#summary button[data-status="fail"]').click()
    assert in_viewport(page, page.locator("#results-heading"))  # the filtered table is brought into view
    screenshot(page, "report-after-count-click.png", capsys)


def test_a_passing_run_of_200_cases_by_35_references_fits_a_few_screens(
    browser: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from report_examples import passing_matrix

    paths = write_reports(passing_matrix(), tmp_path)
    assert paths["html"].stat().st_size <= 1_000_000  # passing rows are page data, not HTML (docs/report-format.md)
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(paths["html"].as_uri(), timeout=120_000)
    assert page.locator("#verdict").inner_text().startswith("PASS: all 7000 results agree")
    header = page.locator("#grid .grow").first.locator(".cell")
    assert header.count() == 35
    assert page.locator("#grid").bounding_box()["height"] < 900  # the whole grid on one screen
    assert page.evaluate("document.documentElement.scrollHeight") < 2 * 900  # passing rows collapsed
    order = [o.get_attribute("value") for o in page.locator("#reference-filter option").all()][1:]
    assert order[:3] == ["0.25.3", "0.32.8", "0.32.18"] and order[3:6] == ["pypi:0.34.0", "pypi:0.34.1", "pypi:0.34.2"]
    assert page.locator("#results tbody tr").count() == 0  # nothing to show until asked
    page.check("#show-passing")
    assert page.locator("#shown-count").inner_text() == "7000 of 7000 shown"
    row = page.locator('#results tbody tr[data-case="case-007"][data-reference="pypi:0.34.3"]')
    assert row.locator("td").all_inner_texts() == [
        "case-007",
        "pypi:0.34.3",
        "letta-code@pypi:0.34.3",
        "pass",
        "",
        "core, frontmatter",
    ]
    page.fill("#search", "case-007 0.34.30")
    assert page.locator("#shown-count").inner_text() == "1 of 7000 shown"
    page.fill("#search", "")
    screenshot(page, "report-200x35-passing.png", capsys)
    page.close()


def test_the_grid_and_the_passing_rows_drawn_from_the_page_data_keep_the_report_order_and_links(page: Any) -> None:
    rows = page.locator("#results tbody tr")
    order = [(row.get_attribute("data-case"), row.get_attribute("data-reference")) for row in rows.all()]
    assert order == sorted(order, key=lambda key: (key[0], REFERENCES.index(key[1]) * -1))  # 0.30.28 before 0.32.18
    assert rows.count() == 11 and page.locator("#results tbody tr.light").count() == 3
    cells = page.locator("#grid a.cell")
    assert cells.count() == 8 and page.locator("#grid i.cell.status-pass").count() == 3  # failing ones link
    page.locator('#grid a.cell[data-case="bom-kept"]').click()
    assert in_viewport(page, section(page, "bom-kept").locator("h3"))
    title = page.locator('#grid i.cell[data-case="a-pass"]').first.get_attribute("title")
    assert title == f"a-pass [{REFERENCES[1]}]: pass"


def test_a_character_no_font_draws_shows_its_code_point_beside_its_box(browser: Any, tmp_path: Path) -> None:
    """U+1E290 (Toto, Unicode 14: Python's unicodedata calls it a letter, so it is no glyph span) is in none of
    the fonts a Debian chromium has; é is in all of them."""
    from report_examples import case, record

    from harness.core.model import Outcome, RunReport, Status

    reference, port = Outcome("ok", record=record("é \U0001e290 a")), Outcome("ok", record=record("é \U0001e290 b"))
    html = write_reports(RunReport([case("toto", Status.FAIL, (), reference, port)], [], [], ["conformance"]), tmp_path)
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(html["html"].as_uri())
    marked = page.locator(".pane pre .nog")
    assert marked.count() >= 2  # the character in both panes
    assert {marked.nth(i).get_attribute("data-cp") for i in range(marked.count())} == {"U+1E290"}
    after = page.evaluate("getComputedStyle(document.querySelector('.pane pre .nog'), '::after').content")
    assert after == '"U+1E290"'  # drawn beside the box, not in the text (copying the value copies the character)
    assert "\U0001e290" in (page.locator(".pane pre").first.text_content() or "")
    page.close()


def test_golden_checks_get_no_grid_column_and_the_banner_names_them_apart(browser: Any, tmp_path: Path) -> None:
    from report_examples import case, record

    from harness.core.model import Outcome, RunReport, Status

    ok = Outcome("ok", record=record("m"))
    results = [case(c, Status.PASS, (), ok, ok, label=label) for c in ("a", "b") for label in REFERENCES]
    results.append(case("spec-golden", Status.PASS, ("golden",), None, ok, label="golden"))
    html = write_reports(RunReport(results, [], [], ["conformance"]), tmp_path)["html"]
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(html.as_uri())
    rows = page.locator("#grid .grow").all()
    assert [row.locator(".cell").count() for row in rows] == [2, 2, 1]  # a, b against both references; the golden one
    assert page.locator('#grid .cell[data-reference="golden"]').get_attribute("data-case") == "spec-golden"
    banner = page.locator("#verdict").inner_text()
    assert banner.startswith("PASS: all 5 results agree") and "2 cases × 2 references" in banner
    assert "1 golden check among the results, not a reference: 1 case checked against the expected bytes" in banner
    page.close()


def test_the_conformance_summary_of_three_implementations_is_on_the_first_screen(
    browser: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from report_examples import PLANTED, PYTHON, SERVER, three_implementations

    from harness.core.model import RunReport

    report = RunReport(three_implementations(), [], [], ["conformance", "run", "cases"], timing=False)
    html = write_reports(report, tmp_path)["html"]
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(html.as_uri())
    tables = page.locator("#conformance table.conformance")
    assert [t.get_attribute("data-implementation") for t in tables.all()] == [PYTHON, PLANTED, SERVER]
    viewport = page.viewport_size
    banner = page.locator("#verdict").bounding_box()
    for table in tables.all():  # every table whole on the first screen, below the verdict banner, none cut off
        box = table.bounding_box()
        assert table.is_visible() and banner["y"] + banner["height"] <= box["y"]
        assert box["y"] + box["height"] <= viewport["height"] and box["x"] + box["width"] <= viewport["width"]
    planted = page.locator(f'table.conformance[data-implementation="{PLANTED}"]')
    assert planted.locator("caption").inner_text().startswith(f"{PLANTED}: 57.1%")
    collation = planted.locator('tr[data-row="collation"] td')
    assert collation.all_inner_texts() == ["0", "0", "2", "0", "0.0%"]
    failing = collation.nth(2).evaluate("td => getComputedStyle(td).backgroundColor")
    assert failing == "rgb(253, 226, 225)"  # td.c-failing: a failing count stands out
    server = page.locator(f'table.conformance[data-implementation="{SERVER}"]')
    assert server.locator('tr[data-row="lifecycle"] td').all_inner_texts() == ["0", "0", "0", "1", "-"]
    path = screenshot(page, "summary-first-screen.png", capsys)
    assert path.stat().st_size > 0
    assert errors == []
    page.close()
