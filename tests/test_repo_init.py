"""harness.repo.shape.init writes a plain work tree's git directory itself: exactly what `git init` writes."""

from __future__ import annotations

import subprocess
from pathlib import Path

from harness.core.repomodel import RepoShape
from harness.repo import shape
from harness.repo.gitenv import isolated_env


def _files(root: Path) -> dict[str, bytes | None]:
    return {str(p.relative_to(root)): (p.read_bytes() if p.is_file() else None) for p in sorted(root.rglob("*"))}


def test_a_plain_repository_is_initialised_as_git_init_does(tmp_path: Path) -> None:
    env = isolated_env(tmp_path / "home")
    ours = shape.init(tmp_path / "ours", RepoShape(), env)
    theirs = tmp_path / "theirs"
    subprocess.run(["git", "init", "-q", "--template=", "--initial-branch=main", str(theirs)], env=env, check=True)
    assert ours == tmp_path / "ours" / ".git"
    assert _files(ours) == _files(theirs / ".git")
    listed = subprocess.run(
        ["git", "rev-parse", "--git-dir", "--is-bare-repository"],
        cwd=tmp_path / "ours",
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert listed.stdout.split() == [".git", "false"]
