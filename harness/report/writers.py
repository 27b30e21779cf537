"""The report writers: one table (`WRITERS`) of every file a report directory holds, each entry with its file
name, what it shows, which reports it applies to and the function that renders it. A new view is one module
and one entry here.

`write_reports` writes a report's files from the table and returns them by key, in table order; the terminal's
`reports:` line (cli.terminal.reports_line), `--report`'s help (cli.common.add_report) and the files
`conformance determinism` compares (tools.determinism.REPORT_FILES) are read from the same table.

The kinds of report: `run` (`conformance run`), `matrix` (`conformance matrix`: a run against many references,
with its drift), `merged` (`conformance merge-reports`, shards into one) and `upstream-tests`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.core.model import RunReport
from harness.report.drift import drift_markdown
from harness.report.html import render_html
from harness.report.junit import junit_xml
from harness.report.stored import dumps
from harness.report.upstream_tests import UpstreamReport, upstream_html, upstream_json
from harness.report.write import report_json

RUN, MATRIX, MERGED, UPSTREAM_TESTS = "run", "matrix", "merged", "upstream-tests"
#: The kinds whose report is a RunReport (harness.core.model); upstream-tests' is an UpstreamReport.
RUN_REPORTS = frozenset({RUN, MATRIX, MERGED})


@dataclass(frozen=True)
class ReportWriter:
    key: str  # the key write_reports returns the file's path under
    file: str  # its name in the report directory
    shows: str  # what it shows, and to whom
    kinds: frozenset[str]  # the reports it is written for
    render: Callable[[Any], bytes]  # the report (RunReport, or UpstreamReport for upstream-tests) -> the bytes


def _run_json(report: RunReport) -> bytes:
    return dumps(report_json(report)).encode("ascii")


def _run_html(report: RunReport) -> bytes:
    return render_html(report).encode("utf-8", errors="replace")  # lone surrogates


def _drift_md(report: RunReport) -> bytes:
    return drift_markdown(report.extra["drift"]).encode("utf-8")


WRITERS: tuple[ReportWriter, ...] = (
    ReportWriter("html", "index.html", "a person: one self-contained page", RUN_REPORTS, _run_html),
    ReportWriter("json", "report.json", "programs: every result, both outputs, the diffs", RUN_REPORTS, _run_json),
    ReportWriter("junit", "junit.xml", "CI systems: one testsuite per reference", RUN_REPORTS, junit_xml),
    ReportWriter(
        "drift",
        "drift.md",
        "how upstream's own output changes between neighbouring references",
        frozenset({MATRIX}),
        _drift_md,
    ),
    ReportWriter(
        "json",
        "report.json",
        "programs: every revision's tests, verdicts and calls",
        frozenset({UPSTREAM_TESTS}),
        upstream_json,
    ),
    ReportWriter("html", "index.html", "a person: one table per revision", frozenset({UPSTREAM_TESTS}), upstream_html),
)


def writers_of(kind: str) -> list[ReportWriter]:
    """The writers of one kind of report, in table order."""
    if not any(kind in writer.kinds for writer in WRITERS):
        raise ValueError(f"no report writer for {kind!r}")
    return [writer for writer in WRITERS if kind in writer.kinds]


def files_of(kind: str) -> tuple[str, ...]:
    """The files a report of this kind holds, in table order."""
    return tuple(writer.file for writer in writers_of(kind))


def files_text(kind: str) -> str:
    """The files as a sentence names them: `index.html, report.json and junit.xml`."""
    *most, last = files_of(kind)
    return f"{', '.join(most)} and {last}" if most else last


def write_reports(report: RunReport | UpstreamReport, directory: Path, kind: str = RUN) -> dict[str, Path]:
    """Every file of `kind` written into `directory` (made if missing); their paths by writer key, in table order."""
    directory.mkdir(parents=True, exist_ok=True)
    paths = {}
    for writer in writers_of(kind):
        paths[writer.key] = directory / writer.file
        paths[writer.key].write_bytes(writer.render(report))
    return paths
