"""The isolated environment every git process and every implementation runs under.

A user's git configuration (core.autocrlf, core.quotePath, hooks, templates, signing),
locale and timezone must not change what a scenario builds or what either side outputs.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

PINNED_LOCALE = "C.UTF-8"
PINNED_TZ = "UTC"
# The date of a commit an implementation makes itself (upstream's `git commit --allow-empty` when HEAD names no
# commit, docs/lifecycle.md): fixed, so its id is the same on every run and on every side (2026-01-01T00:00:00Z).
PINNED_GIT_DATE = "1767225600 +0000"


def isolated_env(home: Path, ceiling: Path | None = None, extra_path: list[str] | None = None) -> dict[str, str]:
    """A fresh environment: empty HOME, no system/global git config, pinned locale, TZ and commit dates, no GIT_*
    inherited."""
    home.mkdir(parents=True, exist_ok=True)
    git = shutil.which("git") or "/usr/bin/git"
    path_dirs = [*(extra_path or []), os.path.dirname(git), "/usr/bin", "/bin"]
    env = {
        "PATH": os.pathsep.join(dict.fromkeys(path_dirs)),
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "LANG": PINNED_LOCALE,
        "LC_ALL": PINNED_LOCALE,
        "TZ": PINNED_TZ,
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_OPTIONAL_LOCKS": "0",
        "GIT_AUTHOR_DATE": PINNED_GIT_DATE,
        "GIT_COMMITTER_DATE": PINNED_GIT_DATE,
    }
    if ceiling is not None:
        env["GIT_CEILING_DIRECTORIES"] = str(ceiling)
    return env


PINNED_NAMES = ("PATH", "HOME", "XDG_CONFIG_HOME", "LANG", "LC_ALL", "TZ")  # isolated_env's, besides its GIT_*


def pinned_by_isolation(name: str) -> bool:
    """Whether isolated_env decides this variable (so nobody may pass it: it is what makes two runs alike)."""
    return name in PINNED_NAMES or name.startswith("GIT_")


def recorded_env(env: dict[str, str]) -> dict[str, str]:
    """The parts of an environment that can change output, for reports."""
    keys = (
        "LANG",
        "LC_ALL",
        "TZ",
        "GIT_CONFIG_NOSYSTEM",
        "GIT_CONFIG_GLOBAL",
        "GIT_CEILING_DIRECTORIES",
        "GIT_AUTHOR_DATE",
        "GIT_COMMITTER_DATE",
    )
    return {k: env[k] for k in keys if k in env}
