"""Faults in the real reference's files (bun and a real release): a truncated bundle is an error for
every case, never a pass; a derived module cut short is rewritten, not imported half."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from harness.cli import main as cli

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parent.parent
CASES = [REPO / "cases/compile/bom-frontmatter.yaml", REPO / "cases/compile/collation-icu-vs-codepoint.yaml"]


@pytest.fixture
def bundle_copy(tmp_path: Path, reference_bun: Path, release_bundle) -> Path:
    source = release_bundle("0.32.18")
    directory = tmp_path / "release"
    directory.mkdir()
    shutil.copy(source.parent / "package.json", directory / "package.json")
    shutil.copy(source, directory / "letta.js")
    return directory / "letta.js"


def run(bundle: Path, report: Path) -> tuple[int, dict[str, str], dict]:
    code = cli.main(
        ["run", *map(str, CASES), "--reference", f"bundle:{bundle}", "--report", str(report), "--no-timing"]
    )
    data = json.loads((report / "report.json").read_text())
    return code, {r["case"]: r["status"] for r in data["results"]}, data


def test_the_chosen_cases_exist() -> None:
    assert all(path.exists() for path in CASES)


def test_a_truncated_bundle_is_an_error_for_every_case(tmp_path: Path, bundle_copy: Path) -> None:
    data = bundle_copy.read_bytes()
    bundle_copy.write_bytes(data[: len(data) // 2])
    code, statuses, report = run(bundle_copy, tmp_path / "report")
    assert set(statuses.values()) == {"error"} and len(statuses) == len(CASES)
    assert "cannot load bundle" in report["results"][0]["reasons"][0]
    assert code == 1


def test_a_derived_module_cut_short_is_rewritten(tmp_path: Path, bundle_copy: Path) -> None:
    code, statuses, _ = run(bundle_copy, tmp_path / "one")
    assert code == 0 and set(statuses.values()) == {"pass"}
    (derived,) = bundle_copy.parent.glob(".conformance-driver-*.mjs")
    size = derived.stat().st_size
    derived.write_bytes(derived.read_bytes()[: size // 3])
    code, statuses, _ = run(bundle_copy, tmp_path / "two")
    assert code == 0 and set(statuses.values()) == {"pass"}
    assert derived.stat().st_size == size
