"""A run's metadata for report.json: the command, the port's version and commit, the references with
their Python profile and runtime, and (with timing only, under `timing`) the date and the duration.

Without timing the metadata holds nothing that changes between two runs of the same commit, so
`--no-timing` reports stay byte-identical.
"""

from __future__ import annotations

import datetime
import subprocess
from importlib import metadata
from pathlib import Path
from typing import Any

PROJECT_ROOT = Path(__file__).resolve().parents[2]


def port_commit() -> str | None:
    """The project's git commit (with `-dirty` when the work tree has changes), None outside a checkout."""
    try:
        head = subprocess.run(["git", "-C", str(PROJECT_ROOT), "rev-parse", "HEAD"], capture_output=True, text=True,
                              check=True, timeout=10).stdout.strip()  # fmt: skip
        dirty = subprocess.run(["git", "-C", str(PROJECT_ROOT), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, check=True, timeout=30).stdout.strip()  # fmt: skip
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
        "port": {"version": port_version(), "commit": port_commit()},
        "references": references,
    }
    if started is not None and seconds is not None:  # under `timing`, as every value that changes run to run
        date = datetime.datetime.fromtimestamp(started, datetime.UTC).isoformat(timespec="seconds")
        run["timing"] = {"date": date, "duration_seconds": round(seconds, 3)}
    return run
