"""`conformance compare-reports OLD NEW`: regressions, fixes and the other changes between two runs
(harness.report.compare), a warning on stderr when the two reports ran different implementations."""

from __future__ import annotations

import argparse
import sys
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
    for warning in comparison.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    print("\n".join(comparison.lines()))
    return 0 if comparison.ok else 1


def register(commands: Commands) -> None:
    parser = commands.add_parser(
        "compare-reports",
        help="regressions, fixes and other changes between two reports (exit 1 when something got worse)",
    )
    parser.add_argument("old", help="the earlier report directory (or its report.json)")
    parser.add_argument("new", help="the later report directory (or its report.json)")
    parser.set_defaults(func=cmd_compare_reports)
