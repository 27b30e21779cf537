"""`conformance fuzz --seconds N` is a wall-clock budget, shrinking and reducing included, and a saved case
says which reference, profile and seed found it, so that `conformance run` reproduces it.

The reference is tests/fake_reference.py's fake `bun` on PATH with `mode: wrong`: every answer's
coreMemory gets a `!`, so every example diverges and the fuzzer always has something to shrink.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
import yaml
from fake_reference import fake_bundle, install_fake_bun

from harness.cases.load import load_scenario
from harness.cli import main as cli
from harness.core.model import FoundBy

BUDGET = 6.0
SLACK = 15.0  # generous: this checks that the budget is honoured, not how fast anything is


@pytest.fixture
def wrong_reference(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """`--reference bundle:PATH` served by a fake bun whose every answer diverges from the port."""
    install_fake_bun(tmp_path / "bin", mode="wrong")
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}:/usr/bin:/bin")
    monkeypatch.setenv("LETTA_CONFORMANCE_CACHE", str(tmp_path / "cache"))
    return f"bundle:{fake_bundle(tmp_path / 'bundle')}"


def fuzz_cli(tmp_path: Path, reference: str, seconds: float, *extra: str) -> tuple[int, float, Path]:
    """`conformance fuzz` in process; (exit code, wall seconds after the reference started, out dir)."""
    out, corpus = tmp_path / "found", tmp_path / "corpus"
    corpus.mkdir(exist_ok=True)
    started = time.monotonic()
    code = cli.main(
        [
            "fuzz",
            "--seconds",
            str(seconds),
            "--seed",
            "3",
            "--reference",
            reference,
            "--out",
            str(out),
            "--cases",
            str(corpus),
            *extra,
        ]
    )
    return code, time.monotonic() - started, out


def test_fuzz_stops_within_its_budget_when_every_example_diverges(
    tmp_path: Path, wrong_reference: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, elapsed, out = fuzz_cli(tmp_path, wrong_reference, BUDGET)
    printed = capsys.readouterr().out
    assert code == 1, printed  # a new divergence was found
    assert elapsed < BUDGET + SLACK, f"fuzz --seconds {BUDGET} took {elapsed:.1f} s\n{printed}"
    saved = sorted(out.glob("fuzz-*.yaml"))  # one per kind of divergence; later examples show them again (known)
    assert saved, printed
    for path in saved:
        scenario = load_scenario(path)
        assert "fuzz" in scenario.tags
        # whatever the budget allowed: reduced (tagged so), or saved as found and saying so
        assert "reduced" in scenario.tags or "budget ran out" in scenario.description, path.read_text()


def test_a_saved_case_records_the_reference_profile_and_seed_and_run_reproduces_it(
    tmp_path: Path, wrong_reference: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, out = fuzz_cli(tmp_path, wrong_reference, BUDGET)
    assert code == 1, capsys.readouterr().out
    saved = sorted(out.glob("fuzz-*.yaml"))[0]
    found_by = yaml.safe_load(saved.read_text())["found_by"]
    assert found_by["reference"] == wrong_reference and found_by["profile"] and isinstance(found_by["seed"], int)
    scenario = load_scenario(saved)
    assert scenario.found_by == FoundBy(**found_by)
    assert scenario.id == f"fuzz-{found_by['seed']}" and f"--seed {found_by['seed']}" in scenario.description
    report = tmp_path / "report"
    code = cli.main(
        [
            "run",
            str(saved),
            "--reference",
            found_by["reference"],
            "--profile",
            found_by["profile"],
            "--report",
            str(report),
            "--no-timing",
        ]
    )
    [result] = json.loads((report / "report.json").read_text())["results"]
    assert code == 1 and result["status"] == "fail", result  # the divergence, reproduced from the case alone
