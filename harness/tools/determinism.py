"""Determinism check: run the corpus twice and require byte-identical reports.

`conformance determinism [PATHS] [--reference R ...]` runs `conformance run --no-timing --no-cache` twice
(the references answer both times: the result store would make the second run the first's copy)
(same command, same report directory, moved aside after each run) and compares report.json,
junit.xml and index.html byte for byte.
With timing on, the only fields allowed to differ are the documented timing ones (`timing_free`).
Exit 0 when identical, 1 with the first differing lines otherwise.
"""

from __future__ import annotations

import difflib
import subprocess
import sys
from pathlib import Path
from typing import Any

from harness.report.writers import RUN, files_of

REPORT_FILES = files_of(RUN)  # the files `conformance run --report` writes (harness.report.writers)
#: Fields that hold timings (report.json): per-result `timing`, per-reference process `starts` and `info.importMs`.
TIMING_KEYS = frozenset({"timing", "starts", "importMs"})


def timing_free(value: Any) -> Any:
    """report.json data without the documented timing fields."""
    if isinstance(value, dict):
        return {k: timing_free(v) for k, v in value.items() if k not in TIMING_KEYS}
    if isinstance(value, list):
        return [timing_free(v) for v in value]
    return value


def run_twice(args: list[str], workdir: Path) -> tuple[Path, Path, list[int]]:
    """The same `conformance run ARGS --no-timing --no-cache --report DIR` twice; the two reports and exit codes.

    Both runs write to the same DIR (the command is in index.html), moved to A/ and B/ afterwards.
    """
    codes = []
    target = workdir / "report"
    dirs = (workdir / "A", workdir / "B")
    for directory in dirs:
        command = [
            sys.executable,
            "-m",
            "harness.cli",
            "run",
            *args,
            "--no-timing",
            "--no-cache",
            "--report",
            str(target),
        ]
        codes.append(subprocess.run(command, check=False, stdout=subprocess.DEVNULL).returncode)
        target.rename(directory)
    return dirs[0], dirs[1], codes


def differences(first: Path, second: Path) -> list[str]:
    """For each report file that differs: its name and the first differing lines."""
    out = []
    for name in REPORT_FILES:
        one, two = (first / name).read_bytes(), (second / name).read_bytes()
        if one != two:
            diff = difflib.unified_diff(
                one.decode("utf-8", "replace").splitlines(),
                two.decode("utf-8", "replace").splitlines(),
                f"A/{name}",
                f"B/{name}",
                lineterm="",
                n=1,
            )
            out.append("\n".join(list(diff)[:20]))
    return out
