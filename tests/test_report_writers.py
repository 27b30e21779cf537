"""The table of report writers (harness.report.writers): what each kind of report directory holds, that the
files are written from the table and nothing else, and that the docs, `--report`'s help and the terminal's
`reports:` line name the files the table holds."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest
from report_examples import mixed_report

from harness.cli.common import add_report
from harness.cli.terminal import reports_line
from harness.core.model import RunReport
from harness.report.drift import drift_markdown
from harness.report.writers import MATRIX, MERGED, RUN, UPSTREAM_TESTS, WRITERS, files_of, write_reports, writers_of
from harness.tools.determinism import REPORT_FILES

ROOT = Path(__file__).resolve().parents[1]
KINDS = (RUN, MATRIX, MERGED, UPSTREAM_TESTS)

DRIFT = {
    "ok": False,
    "pairs": [{"from": "0.25.9", "to": "0.30.28", "kind": "release", "changed_cases": ["a"]}],
    "groups": [],
    "unexplained": [],
    "stale_explanations": [{"case": "a", "from": "0.25.9", "to": "0.30.28", "says": "it changes", "path": "a.yaml"}],
    "not_compared": [],
}


def test_each_kind_names_each_file_and_key_once() -> None:
    for kind in KINDS:
        writers = writers_of(kind)
        assert len({w.file for w in writers}) == len(writers), kind
        assert len({w.key for w in writers}) == len(writers), kind


def test_an_unknown_kind_of_report_is_refused() -> None:
    with pytest.raises(ValueError, match="no report writer for 'matrixx'"):
        writers_of("matrixx")


def test_a_run_writes_its_three_files_and_nothing_else(tmp_path: Path) -> None:
    paths = write_reports(mixed_report(), tmp_path)
    assert list(paths) == ["html", "json", "junit"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["index.html", "junit.xml", "report.json"]
    assert all(path.parent == tmp_path for path in paths.values())


def test_a_matrix_also_writes_drift_md_from_its_drift(tmp_path: Path) -> None:
    report = RunReport([], [], [], ["conformance", "matrix"], timing=False, extra={"drift": DRIFT})
    paths = write_reports(report, tmp_path / "m", MATRIX)
    assert list(paths) == ["html", "json", "junit", "drift"]
    text = paths["drift"].read_text(encoding="utf-8")
    assert text == drift_markdown(DRIFT)
    assert "- `a` 0.25.9 -> 0.30.28: it changes (a.yaml)" in text
    assert text.endswith("0 change group(s), 0 explained, 0 unexplained, 1 stale explanation(s).\n")


def test_the_reports_line_names_the_written_files_in_table_order(tmp_path: Path) -> None:
    report = RunReport([], [], [], ["conformance", "matrix"], timing=False, extra={"drift": DRIFT})
    paths = write_reports(report, tmp_path, MATRIX)
    expected = f"reports: {tmp_path}/index.html {tmp_path}/report.json {tmp_path}/junit.xml {tmp_path}/drift.md"
    assert reports_line(paths) == expected


def test_report_help_names_the_files_of_its_kind() -> None:
    helps = {}
    for kind in (RUN, MATRIX, UPSTREAM_TESTS):
        parser = argparse.ArgumentParser()
        add_report(parser, kind)
        helps[kind] = next(a.help for a in parser._actions if a.dest == "report")
    assert helps == {
        RUN: "directory for index.html, report.json and junit.xml",
        MATRIX: "directory for index.html, report.json, junit.xml and drift.md",
        UPSTREAM_TESTS: "directory for report.json and index.html",
    }


def test_determinism_compares_every_file_a_run_writes() -> None:
    assert sorted(REPORT_FILES) == ["index.html", "junit.xml", "report.json"]
    assert files_of(RUN) == REPORT_FILES


def test_report_format_md_lists_every_file_of_a_run_and_a_matrix_with_its_reports() -> None:
    """docs/report-format.md's table of files is the table of writers: a writer added (or a file named) in only
    one of the two fails here."""
    text = (ROOT / "docs" / "report-format.md").read_text(encoding="utf-8")
    table = text.split("| file | for | reports | rendered by |\n", 1)[1].split("\n\n", 1)[0]
    rows = re.findall(r"^\| `([^`]+)` \| [^|]+ \| ([^|]+) \|", table, flags=re.M)
    documented = {(file, kind.strip()) for file, kinds in rows for kind in kinds.split(",")}
    written = {(w.file, kind) for w in WRITERS for kind in w.kinds if kind != UPSTREAM_TESTS}
    assert documented == written
