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


def isolated_env(home: Path, ceiling: Path | None = None, extra_path: list[str] | None = None) -> dict[str, str]:
    """A fresh environment: empty HOME, no system/global git config, pinned locale and TZ, no GIT_* inherited."""
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
    }
    if ceiling is not None:
        env["GIT_CEILING_DIRECTORIES"] = str(ceiling)
    return env


def recorded_env(env: dict[str, str]) -> dict[str, str]:
    """The parts of an environment that can change output, for reports."""
    keys = ("LANG", "LC_ALL", "TZ", "GIT_CONFIG_NOSYSTEM", "GIT_CONFIG_GLOBAL", "GIT_CEILING_DIRECTORIES")
    return {k: env[k] for k in keys if k in env}
