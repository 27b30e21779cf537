"""Running one git command: the single place the port starts a short-lived git process.

Upstream runs git with `execFileSync`/`spawnSync` (no input, output captured) from a directory; every module of
the port that runs one git command to its end (the hook's commands, the write tool's `runGit`, the repository set-up,
the reminders' status, the view's log, `git show`, the CLI's probes) goes through `run_git`, so all of them get the
same stdin (none: the protocol's stdin is never handed to git), the same environment handling and the same
captured output. What a failure means is each caller's: upstream reports it differently in each place (a
`Command failed` error, a hook line, nothing). The long-running `git cat-file --batch` and streamed `git ls-tree` of
memfs_prompt.git_head are processes, not commands, and start their own.
"""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
from os import PathLike


def run_git(
    cwd: str | PathLike[str] | None,
    env: Mapping[str, str] | None,
    *args: str,
    check: bool = False,
    timeout: float | None = None,
) -> subprocess.CompletedProcess[bytes]:
    """`git ARGS` in `cwd` (None: the current directory) with `env` (None: this process's environment), no stdin,
    stdout and stderr captured as bytes. A non-zero exit is returned, or with `check` raised as
    `subprocess.CalledProcessError`; OSError (no git) and, with `timeout`, `subprocess.TimeoutExpired` propagate."""
    return subprocess.run(
        ["git", *args],
        cwd=cwd,
        env=dict(env) if env is not None else None,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        check=check,
        timeout=timeout,
    )
