"""`conformance mutation`: hand-written mutants of memfs_prompt/ against the corpus (harness.tools.mutation)."""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from harness.cli.common import Commands, UsageError, add_no_cache, add_paths, add_reference, case_paths, existing
from harness.core.model import ScenarioError
from harness.tools import mutation as tool


def register(commands: Commands) -> None:
    parser = commands.add_parser("mutation", help="hand-written mutants of memfs_prompt/ against the corpus")
    add_paths(parser)
    add_reference(parser, many=True, default="one pinned release per profile")
    parser.add_argument(
        "--mutants", type=Path, action="append", help="a mutants file or directory (repeatable; default: mutants/)"
    )
    parser.add_argument("-k", help="only mutants whose id contains one of these comma-separated words")
    parser.add_argument("--baseline", type=Path, help="baseline file: recorded there when missing, reused when present")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds one mutant's corpus run may take")
    add_no_cache(parser)
    parser.add_argument("--check", type=Path, help=argparse.SUPPRESS)  # the child run of one mutant
    parser.add_argument("--package", type=Path, help=argparse.SUPPRESS)
    parser.set_defaults(func=cmd_mutation)


def cmd_mutation(args: argparse.Namespace) -> int:
    if args.check:
        return tool.check(args.check, [p.resolve() for p in args.paths], args.package)

    files = [existing(p, "--mutants") for p in args.mutants or [tool.DEFAULT_MUTANTS]]
    try:  # every file checked before any baseline work: its shape, each file it names, each snippet once
        mutants = tool.load_mutants(files)
    except ScenarioError as error:
        raise UsageError(str(error)) from None
    if args.k:
        words = [w for w in args.k.split(",") if w]
        mutants = [m for m in mutants if any(w in m.id for w in words)]
    paths = [p.resolve() for p in case_paths(args.paths)]
    references = args.reference or tool.default_references()
    with tempfile.TemporaryDirectory(prefix="mutation-") as tmp:
        baseline = args.baseline or Path(tmp) / "baseline.json"
        if not baseline.exists():
            print(f"recording reference answers: {', '.join(references)}", file=sys.stderr)
            tool.record_baseline(paths, references, baseline)
        if mutants:  # the unmutated port first: a kill must be the mutant's doing, not the environment's
            control = tool.run_mutant(tool.CONTROL, baseline, paths, args.timeout)
            if control.outcome != "survived":
                print(
                    f"error: the unmutated port does not reproduce the baseline's verdicts ({control.detail}); "
                    "no mutant can be scored (record the baseline again: --baseline to a new file)",
                    file=sys.stderr,
                )
                return 1
        results = []
        for mutant in mutants:
            results.append(result := tool.run_mutant(mutant, baseline, paths, args.timeout))
            print(tool.result_line(result), flush=True)
    text, ok = tool.summary(results)
    print(text)
    return 0 if ok else 1
