"""`conformance determinism`: the corpus run twice; the report files must be byte-identical
(harness.tools.determinism)."""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from harness.cli.common import Commands, add_paths, add_reference, case_paths
from harness.core.plural import counted
from harness.tools.determinism import differences, run_twice


def register(commands: Commands) -> None:
    parser = commands.add_parser("determinism", help="run the corpus twice; the reports must be byte-identical")
    add_paths(parser)
    add_reference(parser, many=True)
    parser.add_argument("--keep", help="directory for the two report directories (default: a temporary one)")
    parser.set_defaults(func=cmd_determinism)


def cmd_determinism(args: argparse.Namespace) -> int:
    run_args = [*map(str, case_paths(args.paths)), *(f"--reference={r}" for r in args.reference or [])]
    with tempfile.TemporaryDirectory(prefix="determinism-") as tmp:
        workdir = Path(args.keep) if args.keep else Path(tmp)
        first, second, codes = run_twice(run_args, workdir)
        if codes[0] != codes[1]:
            print(f"the two runs exited {codes[0]} and {codes[1]}", file=sys.stderr)
            return 1
        found = differences(first, second)
    for text in found:
        print(text, file=sys.stderr)
    print(
        f"two runs (exit {codes[0]}): "
        + ("byte-identical reports" if not found else f"{counted(len(found), 'file')} differ")
    )
    return 1 if found else 0
