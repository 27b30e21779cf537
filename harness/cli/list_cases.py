"""`conformance list`: the cases, one line each (id, kind, tags, what it pins), and the files that did not load."""

from __future__ import annotations

import argparse
import sys

from harness.cli.common import Commands, add_paths, add_select, load_selected


def cmd_list(args: argparse.Namespace) -> int:
    scenarios, load_errors = load_selected(args.paths, args.k)
    for scenario in scenarios:
        what = one_line(scenario.pins or scenario.description)
        print(f"{scenario.id}\t{scenario.kind}\t{','.join(scenario.tags)}\t{what}")
    for error in load_errors:
        print(f"error: {error}", file=sys.stderr)
    return 1 if load_errors else 0


def one_line(text: str) -> str:
    """A YAML-folded or multi-line text as one line (its line breaks and runs of spaces one space each)."""
    return " ".join(text.split())


def register(commands: Commands) -> None:
    lister = commands.add_parser("list", help="list scenarios")
    add_paths(lister)
    add_select(lister)
    lister.set_defaults(func=cmd_list)
