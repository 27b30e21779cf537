"""`conformance run --keep DIR` (harness.tools.keep, docs/keep.md): every case's repository and both sides' outputs,
passing results included, in the documented layout; a directory that is not new or empty is refused before the run."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from fake_reference import fake_bundle, install_fake_bun, write_cases

from harness.cli.main import main


@pytest.fixture
def fake_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """`conformance run` arguments for two cases against the fake reference: one it answers honestly, one wrong."""
    install_fake_bun(tmp_path / "bin")
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("LETTA_CONFORMANCE_CACHE", str(tmp_path / "cache"))
    cases = write_cases(tmp_path / "cases", {"a-passes": "", "b-differs": "wrong"})
    return ["run", str(cases), "--reference", f"bundle:{fake_bundle(tmp_path / 'b')}", "--no-timing"]


def test_keep_writes_each_cases_repository_and_both_sides_outputs_passing_cases_included(
    fake_run: list[str], tmp_path: Path
) -> None:
    kept = tmp_path / "kept"
    assert main([*fake_run, "--keep", str(kept)]) == 1  # b-differs fails
    index = json.loads((kept / "index.json").read_text())
    assert index["layout"] == "letta-conformance/keep/1"
    assert [(c["case"], [r["status"] for r in c["results"]]) for c in index["cases"]] == [
        ("a-passes", ["pass"]),
        ("b-differs", ["fail"]),
    ]
    for case in index["cases"]:
        where = kept / case["directory"]
        memory = where / case["repository"] / case["memory"]
        shown = subprocess.run(["git", "-C", str(memory), "show", "HEAD:system/a.md"], capture_output=True, text=True)
        assert shown.stdout == f"{case['case']}\n", shown.stderr  # the repository as built: HEAD, as compiled
        source = tmp_path / "cases" / "compile" / f"{case['case']}.yaml"
        assert (where / "case.yaml").read_bytes() == source.read_bytes()
        assert json.loads((where / "request.json").read_text())["agentId"]
        (result,) = case["results"]
        side = where / result["directory"]
        assert json.loads((side / "verdict.json").read_text())["status"] == result["status"]
        for name in ("reference", "implementation"):
            outcome = json.loads((side / f"{name}.json").read_text())
            assert outcome["status"] == "ok" and "elapsed_ms" not in outcome
            assert (side / f"{name}.content").read_bytes() == outcome["record"]["content"].encode("utf-8")
    differs = kept / "b-differs" / index["cases"][1]["results"][0]["directory"]
    assert "coreMemory" in json.loads((differs / "verdict.json").read_text())["differing_fields"]
    reference = json.loads((differs / "reference.json").read_text())["record"]
    port = json.loads((differs / "implementation.json").read_text())["record"]
    assert reference["coreMemory"] != port["coreMemory"]  # the raw records of both sides, as each answered


def test_keep_gives_the_same_bytes_on_a_second_run(fake_run: list[str], tmp_path: Path) -> None:
    for name in ("one", "two"):
        main([*fake_run, "--keep", str(tmp_path / name)])
    files = {p.relative_to(tmp_path / "one") for p in (tmp_path / "one").rglob("*") if p.is_file()}
    assert files == {p.relative_to(tmp_path / "two") for p in (tmp_path / "two").rglob("*") if p.is_file()}
    assert all((tmp_path / "one" / f).read_bytes() == (tmp_path / "two" / f).read_bytes() for f in files)


def test_keep_refuses_a_directory_that_is_not_empty_before_anything_runs(
    fake_run: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    kept = tmp_path / "kept"
    kept.mkdir()
    (kept / "mine.txt").write_text("not the harness's")
    assert main([*fake_run, "--keep", str(kept)]) == 2
    assert f"--keep {kept}: not empty; give a new or empty directory" in capsys.readouterr().err
    assert [p.name for p in kept.iterdir()] == ["mine.txt"]
    assert not (tmp_path / "cache" / "repos").exists()  # refused before a case was built
