"""compare-reports names each change of status by its direction (issue 37): a divergence that stopped diverging
is a fix whose expectation went stale, not a regression; a failure an expectations file now lists is newly
expected, not fixed; two reports of different implementations are compared with a warning naming both."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cli.main import main
from harness.core.model import Status
from harness.report.compare import DIRECTIONS, Direction, compare_reports
from harness.report.stored import SCHEMA

# The directions as a reviewer reads them, written apart from the table in harness/report/compare.py: a row is
# the old status, a column the new one.
ABBREVIATIONS = {
    "REG": Direction.REGRESSION,
    "FIX": Direction.FIX,
    "FIX-STALE": Direction.FIX_STALE,
    "EXPECTED": Direction.NEWLY_EXPECTED,
    "UNEXPECTED": Direction.NO_LONGER_EXPECTED,
    "UNSTALE": Direction.STALE_REMOVED,
    "STALE": Direction.NEWLY_STALE,
    "STILL-FAIL": Direction.STILL_FAILING,
    "COMPARED": Direction.NOW_COMPARED,
    "COMPARED-FAIL": Direction.NOW_COMPARED_FAILING,
    "LOST": Direction.LOST,
    "UNCOMPARED": Direction.UNCOMPARED,
    "STILL-UNCOMPARED": Direction.STILL_UNCOMPARED,
}
GRID = """
                    pass        fail           known-divergence  stale-divergence  error          runtime-divergence  not-applicable
pass                -           REG            REG               STALE             REG            UNCOMPARED          LOST
fail                FIX         -              EXPECTED          FIX-STALE         STILL-FAIL     UNCOMPARED          UNCOMPARED
known-divergence    FIX         UNEXPECTED     -                 FIX-STALE         REG            UNCOMPARED          UNCOMPARED
stale-divergence    UNSTALE     REG            REG               -                 REG            UNCOMPARED          LOST
error               FIX         STILL-FAIL     EXPECTED          FIX-STALE         -              UNCOMPARED          UNCOMPARED
runtime-divergence  COMPARED    COMPARED-FAIL  COMPARED          COMPARED-FAIL     COMPARED-FAIL  -                   STILL-UNCOMPARED
not-applicable      COMPARED    COMPARED-FAIL  COMPARED          COMPARED-FAIL     COMPARED-FAIL  STILL-UNCOMPARED    -
"""  # noqa: E501


def grid() -> dict[tuple[Status, Status], Direction]:
    header, *rows = [line.split() for line in GRID.strip().splitlines()]
    return {
        (Status(row[0]), Status(new)): ABBREVIATIONS[cell]
        for row in rows
        for new, cell in zip(header, row[1:], strict=True)
        if cell != "-"
    }


def report(path: Path, status: str, implementation: str = "python", case: str = "c") -> Path:
    path.mkdir(parents=True, exist_ok=True)
    result = {"case": case, "reference": "pypi:0.34.12", "implementation": implementation, "status": status}
    (path / "report.json").write_text(json.dumps({"schema": SCHEMA, "results": [result]}))
    return path


def test_the_table_gives_every_pair_of_statuses_a_direction() -> None:
    assert set(DIRECTIONS) == {(a, b) for a in Status for b in Status if a != b}
    assert grid() == DIRECTIONS


@pytest.mark.parametrize(
    ("old", "new"), sorted(grid(), key=lambda pair: (list(Status).index(pair[0]), list(Status).index(pair[1])))
)
def test_each_change_of_status_is_listed_under_its_direction(old: Status, new: Status, tmp_path: Path) -> None:
    direction = grid()[old, new]
    comparison = compare_reports(report(tmp_path / "old", old), report(tmp_path / "new", new))
    assert comparison.changes == {direction: [(("c", "pypi:0.34.12"), str(old), str(new))]}
    assert comparison.ok is not direction.worse
    lines = comparison.lines()
    heading = lines.index(f"{direction.title}: 1 ({direction.meaning})")
    assert lines[heading + 1] == f"  c [pypi:0.34.12]: {old} -> {new}"


def test_a_divergence_that_stopped_diverging_is_a_fix_whose_entry_must_go(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old, new = report(tmp_path / "old", Status.KNOWN), report(tmp_path / "new", Status.STALE)
    assert main(["compare-reports", str(old), str(new)]) == 0
    out = capsys.readouterr().out
    assert out.startswith(
        "regressions: 0\nfixes: 0\nfixes with a stale expectation: 1 (now agree, but an expectation "
        "still says they diverge: a fix; remove the stale entry"
    )
    assert "  c [pypi:0.34.12]: known-divergence -> stale-divergence\n" in out


def test_a_failure_an_expectations_file_now_lists_is_not_a_fix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old, new = report(tmp_path / "old", Status.FAIL), report(tmp_path / "new", Status.KNOWN)
    assert main(["compare-reports", str(old), str(new)]) == 0
    out = capsys.readouterr().out
    assert "fixes: 0\n" in out and "failures newly expected: 1 (still fail, now listed as known divergences: " in out


def test_reports_of_different_implementations_are_compared_with_a_warning_naming_both(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old = report(tmp_path / "old", Status.FAIL, implementation="cmd:./old-port --serve")
    new = report(tmp_path / "new", Status.PASS)
    assert main(["compare-reports", str(old), str(new)]) == 0
    captured = capsys.readouterr()
    assert captured.err == (
        "warning: the two reports ran different implementations: the old one cmd:./old-port --serve, the new one "
        "python; each result of the one is compared with the same case's result of the other, so the changes below "
        "are between implementations, not between runs of one\n"
    )
    assert "fixes: 1 (failed before, now agree)\n" in captured.out
    assert main(["compare-reports", str(new), str(new)]) == 0 and capsys.readouterr().err == ""
