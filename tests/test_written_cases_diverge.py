"""Every case `conformance reduce` and `conformance fuzz` write diverges again when run as it says, and a plain run
of one that needs another profile says why it does not apply instead of passing it.

The reference is tests/fake_reference.py's fake `bun` (the Python port with the profile of the bundle's release,
0.32.18: letta-code@0.32.14); what diverges is tests/planted_bug_impl.py (labels sorted by code point), a
`--profile` other than the release's own, or, for fuzz, a fake whose every answer is wrong.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import yaml
from fake_reference import fake_bundle, install_fake_bun

from harness.cases.load import load_scenario
from harness.cli import main as cli
from harness.core.model import FoundBy, Scenario
from harness.tools.reduce import reproduce_command

PLANTED = f"cmd:{sys.executable} {Path(__file__).parent / 'planted_bug_impl.py'}"
OLD_PROFILE = "letta-code@0.31.12"  # reads no YAML block scalar; 0.32.18's letta-code@0.32.14 does
ZETA_ALPHA = {f"system/note{i}.md": f"note {i}\n" for i in range(4)} | {
    "system/Zeta.md": "z\n",
    "system/alpha.md": "a\n",
}
BLOCK = {f"system/plain{i}.md": f"---\ndescription: plain {i}\n---\nbody {i}\n" for i in range(3)} | {
    "system/block.md": "---\ndescription: |\n  line one\n  line two\n---\nbody\n"
}


def fake_reference(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, **config: object) -> str:
    install_fake_bun(tmp_path / "bin", **config)
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}:/usr/bin:/bin")
    monkeypatch.setenv("LETTA_CONFORMANCE_CACHE", str(tmp_path / "cache"))
    return f"bundle:{fake_bundle(tmp_path / 'bundle')}"


def write_case(directory: Path, case_id: str, files: dict[str, str], tags: list[str]) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{case_id}.yaml"
    doc = {
        "id": case_id,
        "description": "d",
        "tags": tags,
        "repo": {"commits": [{"files": {"system/old.md": "old\n"}}, {"files": files}]},
    }
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    return path


def run_statuses(path: Path, tmp_path: Path, *argv: str) -> list[str]:
    report = tmp_path / "report"
    cli.main(["run", str(path), *argv, "--report", str(report), "--no-timing"])
    return [r["status"] for r in json.loads((report / "report.json").read_text())["results"]]


def reproduced(saved: Scenario, tmp_path: Path) -> list[str]:
    """The written case run as its `found_by` says."""
    found_by = saved.found_by
    assert found_by is not None, saved.path
    impl = ["--impl", found_by.implementation] if found_by.implementation else []
    return run_statuses(saved.path, tmp_path, "--reference", found_by.reference, "--profile", found_by.profile, *impl)


def test_a_reduced_case_records_the_implementation_and_diverges_again_with_its_tags_dropped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    reference = fake_reference(tmp_path, monkeypatch)
    case = write_case(tmp_path / "cases" / "compile", "sorted", ZETA_ALPHA, ["collation", "history"])
    monkeypatch.chdir(tmp_path)  # reduce writes into ./cases/compile (cli.common.cases_dir): beside the case here
    assert cli.main(["reduce", str(case), "--reference", reference, "--impl", PLANTED]) == 0
    printed = capsys.readouterr().out
    saved = load_scenario(case.parent / "sorted-reduced.yaml")
    assert saved.tags == ("reduced",)  # `history` no longer holds of one commit; nobody checked `collation`
    assert saved.found_by == FoundBy(reference, "letta-code@0.32.14", None, PLANTED)
    assert reproduce_command(saved.found_by, "cases/compile/sorted-reduced.yaml") in printed  # as written, from ./
    assert saved.profiles == ()  # the reference's own profile: any run of the reference compares under it
    assert reproduced(saved, tmp_path / "again") == ["fail"]


def test_a_case_reduced_under_another_profile_records_it_and_a_plain_run_says_why_it_does_not_apply(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    reference = fake_reference(tmp_path, monkeypatch)
    case = write_case(tmp_path / "cases" / "compile", "block", BLOCK, ["block-scalar"])
    monkeypatch.chdir(tmp_path)  # reduce writes into ./cases/compile (cli.common.cases_dir): beside the case here
    assert cli.main(["reduce", str(case), "--reference", reference, "--profile", OLD_PROFILE]) == 0
    saved = load_scenario(case.parent / "block-reduced.yaml")
    assert saved.found_by == FoundBy(reference, OLD_PROFILE) and saved.profiles == (OLD_PROFILE,)
    assert reproduced(saved, tmp_path / "again") == ["fail"]
    capsys.readouterr()
    assert run_statuses(saved.path, tmp_path / "plain", "--reference", reference) == ["not-applicable"]  # not a pass
    assert f"run it with --profile {OLD_PROFILE}" in capsys.readouterr().err


@pytest.mark.parametrize("profile", [None, OLD_PROFILE])
def test_every_case_fuzz_writes_diverges_again_when_run_as_its_found_by_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, profile: str | None
) -> None:
    reference = fake_reference(tmp_path, monkeypatch, mode="wrong")
    out, corpus = tmp_path / "found", tmp_path / "corpus"
    corpus.mkdir()
    chosen = ["--profile", profile] if profile else []
    assert (
        cli.main(
            [
                "fuzz",
                "--seconds",
                "6",
                "--seed",
                "3",
                "--reference",
                reference,
                "--out",
                str(out),
                "--cases",
                str(corpus),
                *chosen,
            ]
        )
        == 1
    )
    saved = [load_scenario(path) for path in sorted(out.glob("fuzz-*.yaml"))]
    assert saved
    for index, scenario in enumerate(saved):
        assert scenario.profiles == ((profile,) if profile else ())
        assert scenario.found_by is not None and scenario.found_by.profile == (profile or "letta-code@0.32.14")
        assert reproduced(scenario, tmp_path / f"again-{index}") == ["fail"], scenario.path
