"""Two runs of the same cases give byte-identical reports (`--no-timing`), and with timings on they
differ only in the documented timing fields. The full corpus: `nox -s determinism`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.tools.determinism import differences, run_twice, timing_free

REPO = Path(__file__).resolve().parent.parent
GROUPS = [
    "bom",
    "bs",
    "collation",
    "core",
    "empty",
    "encoding",
    "external",
    "fm",
    "history",
    "inputs",
    "names",
    "newlines",
    "persona",
    "proto",
    "replace",
    "skills",
    "spec",
    "subdir",
    "symlink",
    "system",
    "worktree",
]


def representative_cases() -> list[str]:
    """The first case of each group (by file name), the golden spec case among them."""
    files = sorted((REPO / "cases" / "compile").glob("*.yaml"))
    return [str(next(f for f in files if f.name.startswith(group + "-"))) for group in GROUPS]


@pytest.mark.integration
def test_two_runs_give_byte_identical_reports(tmp_path: Path, reference_bun, release_bundle) -> None:
    first, second, codes = run_twice(representative_cases(), tmp_path)
    assert codes == [0, 0]
    assert differences(first, second) == []
    report = json.loads((first / "report.json").read_text())
    assert len(report["results"]) == len(GROUPS)
    assert '"timing"' not in json.dumps(report)  # no timing key (the command says --no-timing)


@pytest.mark.integration
def test_with_timings_only_the_documented_timing_fields_differ(tmp_path: Path, reference_bun, release_bundle) -> None:
    from harness.cli import main as cli

    reports = []
    for name in ("A", "B"):
        assert cli.main(["run", *representative_cases()[:6], "--report", str(tmp_path / name)]) == 0
        reports.append(json.loads((tmp_path / name / "report.json").read_text()))
    assert all("timing" in r for r in reports[0]["results"])
    assert timing_free(reports[0]) == timing_free(reports[1])


def test_timing_free_drops_timing_keys_at_any_depth() -> None:
    data = {
        "results": [{"case": "a", "timing": {"seconds": 1}}],
        "references": [{"starts": 2, "info": {"importMs": 3, "bun": "1.4.5"}}],
    }
    assert timing_free(data) == {"results": [{"case": "a"}], "references": [{"info": {"bun": "1.4.5"}}]}


def test_differences_names_the_file_and_the_line(tmp_path: Path) -> None:
    for name, text in (("A", "same\none\n"), ("B", "same\ntwo\n")):
        (tmp_path / name).mkdir()
        for file in ("report.json", "junit.xml", "index.html"):
            (tmp_path / name / file).write_text(text if file == "junit.xml" else "x")
    (found,) = differences(tmp_path / "A", tmp_path / "B")
    assert "A/junit.xml" in found and "-one" in found and "+two" in found
