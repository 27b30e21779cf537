"""`conformance merge-reports DIR... --out DIR`: shard reports into one (harness.report.merge)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from harness.cli.common import Commands, writing
from harness.cli.terminal import reports_line
from harness.core.plural import counted
from harness.report.merge import MergeError, merge_reports
from harness.report.writers import MERGED, files_text, write_reports


def cmd_merge_reports(args: argparse.Namespace) -> int:
    try:
        report = merge_reports(args.reports, ["conformance", *sys.argv[1:]], allow_partial=args.allow_partial)
    except MergeError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    with writing(args.out, "--out") as directory:
        paths = write_reports(report, directory, MERGED)
    summary = ", ".join(f"{n} {status}" for status, n in report.counts.items() if n)
    print(f"{counted(len(report.results), 'result')} from {counted(len(args.reports), 'report')}: {summary}")
    print(reports_line(paths))
    return 0 if report.ok else 1


def register(commands: Commands) -> None:
    merge = commands.add_parser("merge-reports", help="merge shard reports (run --shard K/N) into one report")
    merge.add_argument("reports", nargs="+", type=Path, help="report directories (or their report.json)")
    merge.add_argument("--out", required=True, help=f"directory for the merged {files_text(MERGED)}")
    merge.add_argument(
        "--allow-partial", action="store_true", help="merge even when some shards of the run are missing"
    )
    merge.set_defaults(func=cmd_merge_reports)
