"""`conformance drift REPORT`: the drift report of a matrix report.json, as Markdown or JSON."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from harness.cli.common import Commands, UsageError, case_paths
from harness.report.drift import drift_markdown
from harness.report.stored import ReportError, read_report
from harness.tools.releases.matrix import drift_from_report


def cmd_drift(args: argparse.Namespace) -> int:
    try:
        data = read_report(Path(args.report_json))[1]  # the report's own errors first, then the cases'
        report = drift_from_report(data, case_paths(args.paths or []))
    except ReportError as error:  # not a readable report.json: the message names the file
        raise UsageError(str(error)) from None
    data = report.to_json()
    if args.json:
        print(json.dumps(data, indent=1))
    else:
        print(drift_markdown(data), end="")
    return 0 if report.ok else 1


def register(commands: Commands) -> None:
    drift = commands.add_parser("drift", help="the drift report of a matrix report.json, as Markdown (or --json)")
    drift.add_argument("report_json", help="report.json written by `conformance matrix --report DIR`")
    drift.add_argument("paths", nargs="*", type=Path, help="scenario files or directories (default: cases/)")
    drift.add_argument("--json", action="store_true")
    drift.set_defaults(func=cmd_drift)
