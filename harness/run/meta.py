"""A run's metadata for report.json: the command, the port's version and commit, the references with
their Python profile and runtime, and (with timing only, under `timing`) the date and the duration; a run told
to stop (harness.core.stopping) is marked `interrupted`, with what stopped it and every case it did not run.

Without timing the metadata holds nothing that changes between two runs of the same commit, so
`--no-timing` reports stay byte-identical.
"""

from __future__ import annotations

import datetime
import os
import subprocess
from importlib import metadata
from pathlib import Path
from typing import Any

from harness.core.locations import checkout_root


def _git(root: Path, *args: str) -> str:
    """git on the project itself, with no user configuration or GIT_* variable (the answer must not depend on them)."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "HOME": os.devnull,
        "LC_ALL": "C",
    }
    command = ["git", "-c", "safe.directory=*", "-C", str(root), *args]
    return subprocess.run(command, capture_output=True, text=True, check=True, timeout=30, env=env).stdout.strip()


def port_commit() -> str | None:
    """The project's git commit (with `-dirty` when tracked files have changes), None outside a checkout: an
    installed tool has no commit of its own, even when its virtual environment sits inside someone's repository."""
    root = checkout_root()
    if root is None:
        return None
    try:
        head = _git(root, "rev-parse", "HEAD")
        dirty = _git(root, "status", "--porcelain", "--untracked-files=no")
    except (OSError, subprocess.SubprocessError):
        return None
    return head + ("-dirty" if dirty else "")


def port_version() -> str:
    try:
        return metadata.version("letta-conformance")
    except metadata.PackageNotFoundError:
        return "unknown"


def run_metadata(
    command: list[str], references: list[dict[str, Any]], seconds: float | None, started: float | None
) -> dict[str, Any]:
    """The `run` section of report.json; `seconds`/`started` (a POSIX time) are None without timing."""
    run: dict[str, Any] = {
        "command": command,
        "harness": {"version": port_version(), "commit": port_commit()},
        "references": references,
    }
    if started is not None and seconds is not None:  # under `timing`, as every value that changes run to run
        date = datetime.datetime.fromtimestamp(started, datetime.UTC).isoformat(timespec="seconds")
        run["timing"] = {"date": date, "duration_seconds": round(seconds, 3)}
    return run


def interrupted(why: str, not_run: dict[str, list[str]]) -> dict[str, Any]:
    """The `run.interrupted` mark of a partial report: what stopped it (`SIGINT`, `SIGTERM`, `--run-timeout N`)
    and each case it did not run, with the reference labels it was not run against, in case order."""
    return {
        "by": why,
        "not_run": [{"case": case, "references": labels} for case, labels in sorted(not_run.items())],
    }
