"""harness.cli.Progress: cases done / total and failures so far on a terminal, nothing otherwise."""

from __future__ import annotations

import io

from harness.cli.terminal import Progress
from harness.core.model import CaseResult, Status


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def result(case_id: str, status: str) -> CaseResult:
    return CaseResult(case_id, "0.32.18", "letta-code@0.32.18", status, (), f"cases/compile/{case_id}.yaml")


def run(stream: io.StringIO) -> str:
    progress = Progress(4, stream)
    for case_id, status in (("a", Status.PASS), ("b", Status.FAIL), ("c", Status.KNOWN), ("d", Status.ERROR)):
        progress(result(case_id, status))
    progress.finish()
    return stream.getvalue()


def test_on_a_terminal_progress_counts_cases_and_failures_so_far() -> None:
    lines = run(Terminal()).split("\r")
    assert [line.split("  ")[0] for line in lines if line] == [
        "[1/4] failures: 0",
        "[2/4] failures: 1",
        "[3/4] failures: 1",  # a known divergence is not a failure
        "[4/4] failures: 2",  # an error is
    ]
    assert lines[-1].endswith("\n")


def test_progress_is_silent_when_not_a_terminal() -> None:
    assert run(io.StringIO()) == ""
