"""memfs_prompt.memory_repo.ensure_memory_repo: the first commit a turn makes, and where upstream cannot open."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from harness.repo.gitenv import isolated_env
from memfs_prompt.memory_repo import ensure_memory_repo
from memfs_prompt.render_v1 import UpstreamError


def test_a_memory_directory_whose_git_is_a_file_fails_as_upstream_s_hook_install_does(tmp_path: Path) -> None:
    env = isolated_env(tmp_path / "home")
    memory = tmp_path / "memory"
    subprocess.run(
        ["git", "init", "-q", f"--separate-git-dir={tmp_path / 'memory.git'}", str(memory)], env=env, check=True
    )
    assert (memory / ".git").is_file()
    with pytest.raises(UpstreamError) as raised:
        ensure_memory_repo(memory, "agent-1", "Agent", env)
    assert str(raised.value) == f"Error: ENOTDIR: not a directory, mkdir '{memory / '.git' / 'hooks'}'"


def test_an_empty_directory_gets_git_init_and_the_initial_commit(tmp_path: Path) -> None:
    env = isolated_env(tmp_path / "home")
    memory = tmp_path / "memory"
    memory.mkdir()
    ensure_memory_repo(memory, "agent-1", "Agent", env)
    log = subprocess.run(
        ["git", "log", "--format=%an <%ae> %s"], cwd=memory, env=env, capture_output=True, text=True, check=True
    )
    assert log.stdout == "Agent <agent-1@letta.com> chore: initialize empty local memory\n"
