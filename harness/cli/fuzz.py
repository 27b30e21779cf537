"""`conformance fuzz`: Hypothesis-generated repositories (or, --lifecycle, conversations) against the references."""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from harness.cases.rules import unnamed_rules_note
from harness.cli.common import (
    Commands,
    UsageError,
    add_impl,
    add_no_cache,
    add_profile,
    add_reference,
    cases_dir,
    existing,
    impl_specs,
    reference_specs,
)
from harness.cli.impl_options import add_impl_env, impl_env
from harness.run.corpus import RunOptions, open_session


def cmd_fuzz(args: argparse.Namespace) -> int:
    # imported here: Hypothesis takes most of a second to import, and every other command goes without it
    from harness.tools.batch_compile import Oracle, scratch_parent
    from harness.tools.fuzz.campaign import fuzz, known_signatures
    from harness.tools.fuzz.lifecycle import fuzz_lifecycle, known_lifecycle_signatures
    from harness.tools.fuzz.ops import OP_STRATEGIES, fuzz_op, known_op_signatures

    specs = reference_specs(args)
    impls = impl_specs(args)
    if args.seconds <= 0:
        raise UsageError(f"--seconds {args.seconds}: give a positive number")
    if args.op is not None and args.op not in OP_STRATEGIES:
        raise UsageError(f"--op {args.op}: no strategy draws its cases; choose from {', '.join(OP_STRATEGIES)}")
    if args.op is not None and args.lifecycle:
        raise UsageError("--op and --lifecycle: give one (op cases or conversations)")
    args.cases = str(existing(Path(args.cases), "--cases") if args.cases else cases_dir("compile", "--cases DIR"))
    args.out = args.out or str(cases_dir("compile", "--out DIR"))
    if Path(args.out).exists() and not Path(args.out).is_dir():
        raise UsageError(f"--out {args.out}: not a directory")
    with (
        tempfile.TemporaryDirectory(prefix="letta-fuzz-", dir=scratch_parent()) as tmp,
        open_session(
            RunOptions(
                specs, implementations=impls, cache=Path(tmp), profile_override=args.profile, impl_env=impl_env(args)
            )
        ) as session,
    ):
        session.start()
        broken = [r.runner.describe().get("start_error") for r in session.references]
        if any(broken):
            print(f"reference could not start: {broken}", file=sys.stderr)
            return 2
        if args.lifecycle:
            cases = Path(args.cases).parent / "lifecycle"
            known = known_lifecycle_signatures(session, [cases])
            lifecycle = fuzz_lifecycle(
                session, seconds=args.seconds, seed=args.seed, out_dir=Path(args.out).parent / "lifecycle", known=known
            )
            print(lifecycle.summary())
            print_rules_notes(lifecycle.findings)
            return 1 if lifecycle.findings else 0
        if args.op is not None:
            return fuzz_ops(session, args, fuzz_op, known_op_signatures)
        started = time.monotonic()  # the budget counts from here: the known divergences are part of it
        oracle = Oracle(session)
        known = known_signatures(oracle, [Path(args.cases)])
        oracle.close()
        left = max(args.seconds - (time.monotonic() - started), 0.0)
        report = fuzz(
            session, seconds=left, seed=args.seed, out_dir=Path(args.out), known=known, max_examples=args.max_examples
        )
    print(report.summary())
    print_rules_notes(report.findings)
    return 1 if report.findings else 0


def fuzz_ops(session: Any, args: argparse.Namespace, fuzz_op: Any, known_op_signatures: Any) -> int:
    """`--op`: generated op cases; the known divergences are those of <cases>/../ops, new ones go to <out>/../ops."""
    started = time.monotonic()  # the budget counts from here, as for compile cases
    known = known_op_signatures(session, args.op, [Path(args.cases).parent / "ops"])
    left = max(args.seconds - (time.monotonic() - started), 0.0)
    report = fuzz_op(
        session,
        args.op,
        seconds=left,
        seed=args.seed,
        out_dir=Path(args.out).parent / "ops",
        known=known,
        max_runs=args.max_examples,
    )
    print(report.summary())
    print_rules_notes(report.findings)
    return 1 if report.findings else 0


def print_rules_notes(findings: list[Any]) -> None:
    """A written finding is a case without rules (what it pins is for its reader to say): what to add."""
    for finding in findings:
        if finding.path is not None and (note := unnamed_rules_note(Path(finding.path))):
            print(f"  note: {note}")


def register(commands: Commands) -> None:
    parser = commands.add_parser(
        "fuzz", help="compile Hypothesis-generated repositories with the references and the implementations under test"
    )
    parser.add_argument(
        "--seconds",
        type=float,
        default=60.0,
        help="wall-clock budget once the reference has started, shrinking, reducing and saving included",
    )
    parser.add_argument("--seed", type=int, default=0, help="first Hypothesis seed (batch b uses seed + b)")
    add_reference(parser, many=True)
    add_impl(parser, many=True)
    add_impl_env(parser)
    add_profile(parser)
    add_no_cache(parser)
    parser.add_argument("--max-examples", type=int, help="stop after this many repositories")
    parser.add_argument(
        "--out", help="where new divergences are saved as cases (default: cases/compile in the current directory)"
    )
    parser.add_argument(
        "--cases", help="corpus whose recorded divergences are known (default: cases/compile in the current directory)"
    )
    parser.add_argument(
        "--lifecycle", action="store_true", help="fuzz conversations (step sequences); cases go to <out>/../lifecycle"
    )
    parser.add_argument(
        "--op",
        metavar="OP",
        help="fuzz op cases of this protocol op (memory_view, memory_write, validate): generated repositories, "
        "work-tree states, staged changes and arguments; cases go to <out>/../ops",
    )
    parser.set_defaults(func=cmd_fuzz)
