"""A porter's first runs, end to end against the real default reference: the two implementations written for
these tests (tests/v2_only_impl.py, tests/planted_rules_impl.py) through `conformance run`, and what the
terminal and report.json say of them: the v2-only port's first rule is memfs-v1 (with its metadata block),
the summary stays short, and each planted bug is named as its rule. The whole corpus (the issue's size and
line targets) is measured by `nox -s bench` (benchmarks/porter_loop.py); here a selection with cases of
both layouts and of each planted bug keeps the references' cold work small."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SELECTION = "bom or collation-icu-vs or trim"  # memfs-v1 and v2 cases, BOM, collation and trim cases


def run(impl: str, report: Path) -> tuple[list[str], dict]:  # type: ignore[type-arg]
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    argv = [
        sys.executable,
        "-m",
        "harness.cli",
        "run",
        "cases",
        "-k",
        SELECTION,
        "--impl",
        impl,
        "--no-timing",
        "--report",
        str(report),
    ]
    done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, check=False, timeout=900)
    assert done.returncode == 1, done.stderr[-3000:]
    return done.stdout.splitlines() + done.stderr.splitlines(), json.loads((report / "report.json").read_text())


@pytest.mark.integration
def test_a_v2_only_port_is_told_first_that_the_memfs_v1_layout_is_not_rendered(
    tmp_path: Path, release_bundle: object
) -> None:
    lines, report = run("cmd:python tests/v2_only_impl.py", tmp_path)
    first = report["attribution"][0]
    assert (first["rule"], first["with"]) == ("memfs-v1", ["metadata-block"])
    assert first["explains"] == report["counts"]["fail"] + report["counts"]["error"]
    assert any(line.startswith("1. memfs-v1 + metadata-block (layout features") for line in lines)
    assert len(lines) <= 60
    assert not any(line.startswith("FAIL: ") for line in lines)  # per-result lines only with -v


@pytest.mark.integration
def test_each_planted_bug_is_named_as_its_rule(tmp_path: Path, release_bundle: object) -> None:
    lines, report = run("cmd:python tests/planted_rules_impl.py", tmp_path)
    named = [entry["rule"] for entry in report["attribution"]]
    assert {"js-trim-set", "label-collation", "bom-stripped"} <= set(named)
    assert "memfs-v1" not in named[:3]
    for rule in ("js-trim-set", "label-collation", "bom-stripped"):
        assert any(line.startswith(f"{named.index(rule) + 1}. {rule}") for line in lines)


@pytest.mark.integration
def test_verbose_lists_every_failing_result_with_its_first_difference(tmp_path: Path, release_bundle: object) -> None:
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    argv = [
        sys.executable,
        "-m",
        "harness.cli",
        "run",
        "cases",
        "-k",
        "bom-double",
        "-v",
        "--impl",
        "cmd:python tests/v2_only_impl.py",
    ]
    done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, check=False, timeout=900)
    assert "FAIL: bom-double [pypi:0.34.12]" in done.stderr and "content: first difference at byte" in done.stderr
    assert "FAIL bom-double [pypi:0.34.12]: content byte" in done.stdout  # the short summary line per result


@pytest.mark.integration
def test_the_matrix_explains_failures_by_rule_as_run_does(
    tmp_path: Path, release_bundle: object, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`conformance matrix --impl` prints the same summary as `run` (cli.terminal.print_results), not a line per
    failing result and reference: here against the default release alone (the pinned list replaced)."""
    from harness.cli import matrix
    from harness.cli.main import main
    from harness.core.reference import ReferenceSpec

    monkeypatch.setattr(matrix, "matrix_specs", lambda *args: [ReferenceSpec.parse("pypi:0.34.12")])
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.chdir(ROOT)
    argv = [
        "matrix",
        "cases",
        "-k",
        SELECTION,
        "--impl",
        "cmd:python tests/planted_rules_impl.py",
        "--no-timing",
        "--report",
        str(tmp_path),
    ]
    assert main(argv) == 1
    captured = capsys.readouterr()
    lines = captured.out.splitlines() + captured.err.splitlines()
    report = json.loads((tmp_path / "report.json").read_text())
    named = [entry["rule"] for entry in report["attribution"]]
    assert {"js-trim-set", "label-collation", "bom-stripped"} <= set(named)
    for rule in ("js-trim-set", "label-collation", "bom-stripped"):
        assert any(line.startswith(f"{named.index(rule) + 1}. {rule}") for line in lines)
    assert report["counts"]["fail"] > 10 and not any(line.startswith("FAIL: ") for line in lines)  # those with -v
