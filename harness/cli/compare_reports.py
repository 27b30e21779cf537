"""`conformance compare-reports OLD NEW`: regressions, fixes and new cases between two runs."""

from __future__ import annotations

import argparse
from pathlib import Path

from harness.cli.common import Commands, UsageError, existing
from harness.report.compare import compare_reports
from harness.report.merge import MergeError


def cmd_compare_reports(args: argparse.Namespace) -> int:
    old, new = existing(Path(args.old), "report"), existing(Path(args.new), "report")
    try:
        comparison = compare_reports(old, new)
    except MergeError as error:
        raise UsageError(str(error)) from None
    print("\n".join(comparison.lines()))
    return 0 if comparison.ok else 1


def register(commands: Commands) -> None:
    parser = commands.add_parser("compare-reports", help="regressions, fixes and new cases between two reports")
    parser.add_argument("old", help="the earlier report directory (or its report.json)")
    parser.add_argument("new", help="the later report directory (or its report.json)")
    parser.set_defaults(func=cmd_compare_reports)
