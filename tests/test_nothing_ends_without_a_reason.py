"""A run, a diff or a show never ends, or leaves something out, without saying why: a case whose `profiles` exclude
every chosen reference is not applicable, with the reason; `-x` stops at the first file that did not load; and
`diff-repo`/`show` on a directory that is no repository, that has uncommitted changes, or with names git quotes
(which upstream drops) say so on stderr, one line each, without changing the verdict.

The reference is tests/fake_reference.py's fake `bun` (the Python port, profile letta-code@0.32.14 of its 0.32.18).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from fake_reference import fake_bundle, install_fake_bun, scenario_yaml

from harness.cli import main as cli

LIFECYCLE = (
    "id: {id}\ndescription: d\nprofiles: [letta-code@0.31.12]\nrepo:\n  commits:\n    - files:\n"
    '        system/persona.md: "I am.\\n"\nsteps:\n  - turn: "hello"\n'
)


@pytest.fixture
def reference(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    install_fake_bun(tmp_path / "bin")
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}:/usr/bin:/bin")
    monkeypatch.setenv("LETTA_CONFORMANCE_CACHE", str(tmp_path / "cache"))
    return f"bundle:{fake_bundle(tmp_path / 'bundle')}"


def run(tmp_path: Path, cases: Path, *argv: str) -> tuple[int, list[dict]]:
    code = cli.main(["run", str(cases), *argv, "--report", str(tmp_path / "report"), "--no-timing"])
    path = tmp_path / "report" / "report.json"
    return code, json.loads(path.read_text())["results"] if path.exists() else []


def test_a_case_whose_profiles_exclude_every_reference_is_not_applicable_and_says_why(
    tmp_path: Path, reference: str, capsys: pytest.CaptureFixture[str]
) -> None:
    compile_dir, lifecycle_dir = tmp_path / "cases" / "compile", tmp_path / "cases" / "lifecycle"
    compile_dir.mkdir(parents=True)
    lifecycle_dir.mkdir(parents=True)
    (compile_dir / "old-only.yaml").write_text(
        scenario_yaml("old-only").replace("repo:", "profiles: [letta-code@0.31.12]\nrepo:")
    )
    (lifecycle_dir / "old-probe.yaml").write_text(LIFECYCLE.format(id="old-probe"))
    code, results = run(tmp_path, tmp_path / "cases", "--reference", reference)
    assert code == 0, results  # nothing failed, and nothing passed silently: each result says it does not apply
    assert [(r["case"], r["status"]) for r in results] == [
        ("old-only", "not-applicable"),
        ("old-probe", "not-applicable"),
    ]
    err = capsys.readouterr().err
    assert err.splitlines()[-1] == (  # one line per reason
        f"NOT-APPLICABLE: old-only [{reference}], old-probe [{reference}]: its profiles (letta-code@0.31.12) name "
        f"neither the reference {reference} nor the profile it is compared under (letta-code@0.32.14): run it with "
        "--profile letta-code@0.31.12, or with a --reference of one of its profiles"
    )
    code, results = run(
        tmp_path, compile_dir / "old-only.yaml", "--reference", reference, "--profile", "letta-code@0.31.12"
    )
    assert [r["status"] for r in results] == ["pass"]


def test_x_stops_at_the_first_file_that_did_not_load(
    tmp_path: Path, reference: str, capsys: pytest.CaptureFixture[str]
) -> None:
    cases = tmp_path / "cases" / "compile"
    cases.mkdir(parents=True)
    (cases / "a-broken.yaml").write_text("id: a-broken\ndescription: d\nrepo: {kind: svn}\n")
    (cases / "b-good.yaml").write_text(scenario_yaml("b-good"))
    code, results = run(tmp_path, tmp_path / "cases", "--reference", reference, "-x")
    assert code == 1 and results == []  # b-good never ran
    assert "stopped after 1 load error and 0 failing results (-x/--maxfail): no case ran" in capsys.readouterr().err
    code, results = run(tmp_path, tmp_path / "cases", "--reference", reference, "--maxfail", "2")
    assert code == 1 and [r["case"] for r in results] == ["b-good"]  # one load error of two allowed


def git(directory: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-C", str(directory), "-c", "user.name=t", "-c", "user.email=t@t", *args],
        check=True,
        capture_output=True,
    )


@pytest.mark.parametrize("command", ["diff-repo", "show"])
def test_diff_repo_and_show_say_what_the_verdict_leaves_out_one_line_each(
    tmp_path: Path, reference: str, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    memory = tmp_path / "memory"
    (memory / "system").mkdir(parents=True)
    (memory / "system" / "persona.md").write_text("I am.\n")
    (memory / "system" / "café.md").write_text("dropped by upstream\n")
    (memory / "system" / 'say "hi".md').write_text("dropped too\n")
    git(memory, "init", "-q")
    git(memory, "add", ".")
    git(memory, "commit", "-qm", "m")
    quoted = (
        f"note: {memory}: git quotes 2 .md name(s) in upstream's listing, so upstream drops those files "
        '(docs/quirks.md): "system/caf\\303\\251.md", "system/say \\"hi\\".md"'
    )
    # show's last stderr line says whose output it printed; diff-repo prints no such line
    whose = [f"show: the field content of the reference {reference} (--impl SPEC shows an implementation's instead)"]
    whose = whose if command == "show" else []
    assert cli.main([command, str(memory), "--reference", reference]) == 0
    assert capsys.readouterr().err.splitlines() == [quoted, *whose]
    (memory / "system" / "persona.md").write_text("I was.\n")
    (memory / "system" / "new.md").write_text("untracked\n")
    assert cli.main([command, str(memory), "--reference", reference]) == 0  # the verdict is the same
    assert capsys.readouterr().err.splitlines() == [
        f"note: {memory} has 2 uncommitted change(s) (git status): upstream compiles HEAD, so they are not "
        "compiled; commit them to compare them",
        quoted,
        *whose,
    ]
    plain = tmp_path / "plain"
    plain.mkdir()
    assert cli.main([command, str(plain), "--reference", reference]) == 0
    assert capsys.readouterr().err.splitlines() == [
        f"note: {plain} is not in a git repository: upstream compiles no memory file from it",
        *whose,
    ]
