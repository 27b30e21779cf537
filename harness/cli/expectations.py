"""`conformance expectations update REPORT --out FILE`: an implementation's expectations file written from a
report (harness.tools.expectations_update), existing reasons kept; what changed is printed, and what was left
out of it and why."""

from __future__ import annotations

import argparse
from pathlib import Path

from harness.cases.load import load_scenarios
from harness.cli.common import Commands, UsageError, case_paths, existing
from harness.report.stored import ReportError
from harness.run.expectations import ExpectationsError
from harness.tools.expectations_update import UpdateError, update_expectations


def cmd_update(args: argparse.Namespace) -> int:
    report = existing(Path(args.report), "report")
    loaded = load_scenarios(case_paths(args.cases))
    if loaded.errors:  # an entry of a case that did not load would be dropped as removed
        raise UsageError(f"{len(loaded.errors)} case file(s) do not load, first: {loaded.errors[0]}")
    out = Path(args.out)
    try:
        update = update_expectations(report, out, args.implementation, loaded.scenarios)
    except (UpdateError, ReportError, ExpectationsError) as error:
        raise UsageError(str(error)) from None
    for change in update.changes:
        if change.action != "kept" or args.verbose:
            print(change.line())
    before = out.read_text(encoding="utf-8") if out.exists() else None
    if before != update.text:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(update.text, encoding="utf-8")
    state = "unchanged" if before == update.text else ("written" if before is None else "updated")
    for line in update.left_out_lines():  # never silently: what the file does not say, and why
        print(line)
    print(f"expectations of {update.implementation}: {update.summary()}; {out} {state}")
    return 0


def register(commands: Commands) -> None:
    parser = commands.add_parser("expectations", help="an implementation's known failures, kept outside the corpus")
    actions = parser.add_subparsers(dest="expectations_command", required=True)
    update = actions.add_parser(
        "update",
        help="write an expectations file from a report: every difference an entry, existing reasons kept, "
        "stale entries dropped, new ones `unexplained`",
    )
    update.add_argument("report", help="a report directory (or its report.json)")
    update.add_argument("--out", required=True, help="the expectations file to write (read first when it exists)")
    update.add_argument(
        "--implementation",
        metavar="SPEC",
        help="whose results to take, as --impl spells it (default: the file's, else the report's only one)",
    )
    update.add_argument(
        "--cases",
        action="append",
        type=Path,
        default=[],
        metavar="PATH",
        help="the corpus (default: cases/): entries of cases it lacks are dropped (repeatable)",
    )
    update.add_argument("-v", "--verbose", action="store_true", help="also list the entries kept as they were")
    update.set_defaults(func=cmd_update)
