"""`conformance show` says which side it prints (issue 37): the reference's output unless --impl names an
implementation, stated on stderr so that stdout holds the value alone, and its help says so."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from fake_reference import fake_bundle, install_fake_bun

from harness.cli.main import main


@pytest.fixture
def memory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A committed memory directory, a fake bun on PATH and an empty cache."""
    install_fake_bun(tmp_path / "bin")
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}:/usr/bin:/bin")
    monkeypatch.setenv("LETTA_CONFORMANCE_CACHE", str(tmp_path / "cache"))
    directory = tmp_path / "memory"
    (directory / "system").mkdir(parents=True)
    (directory / "system" / "persona.md").write_text("I am.\n")
    for command in (["init", "-q"], ["add", "."], ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "m"]):
        subprocess.run(["git", "-C", str(directory), *command], check=True)
    return directory


def test_show_names_the_side_it_prints_on_stderr_and_keeps_stdout_the_value(
    memory: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bundle = f"bundle:{fake_bundle(tmp_path / 'bundle')}"
    assert main(["show", str(memory), "--reference", bundle, "--json"]) == 0
    out, err = capsys.readouterr()
    assert "I am." in json.loads(out)["content"]  # stdout: the record and nothing else
    assert (
        err == f"show: the record (--json) of the reference {bundle} (--impl SPEC shows an implementation's instead)\n"
    )
    assert main(["show", str(memory), "--reference", bundle, "--impl", "python", "--field", "coreMemory"]) == 0
    out, err = capsys.readouterr()
    assert "I am." in out
    assert (
        err == "show: the field coreMemory of the implementation python, under letta-code@0.32.14 (the profile "
        f"of the reference {bundle})\n"
    )


def test_show_help_says_without_impl_it_prints_the_references_output(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["show", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "--impl SPEC print this implementation's output instead of the reference's: python" in help_text
    assert "(default: none: the reference's output)" in help_text and "(default: python)" not in help_text
