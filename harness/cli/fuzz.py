"""`conformance fuzz`: Hypothesis-generated repositories (or, --lifecycle, conversations) against the references."""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from harness.cli.common import Commands, add_profile, add_reference, reference_specs
from harness.engine import Session
from harness.tools.fuzz import fuzz, known_signatures
from harness.tools.fuzz_lifecycle import fuzz_lifecycle, known_lifecycle_signatures
from harness.tools.reduce import Oracle


def cmd_fuzz(args: argparse.Namespace) -> int:
    specs = reference_specs(args)
    with (
        tempfile.TemporaryDirectory(prefix="letta-fuzz-") as tmp,
        Session(specs, cache=Path(tmp), profile_override=args.profile) as session,
    ):
        session.start()
        broken = [r.runner.describe().get("start_error") for r in session.references]
        if any(broken):
            print(f"reference could not start: {broken}", file=sys.stderr)
            return 2
        if args.lifecycle:
            cases = Path(args.cases).parent / "lifecycle"
            known = known_lifecycle_signatures(session, [cases])
            lifecycle = fuzz_lifecycle(session, seconds=args.seconds, seed=args.seed,
                                       out_dir=Path(args.out).parent / "lifecycle", known=known)  # fmt: skip
            print(lifecycle.summary())
            return 1 if lifecycle.findings else 0
        oracle = Oracle(session)
        known = known_signatures(oracle, [Path(args.cases)])
        oracle.close()
        report = fuzz(session, seconds=args.seconds, seed=args.seed, out_dir=Path(args.out), known=known,
                      max_examples=args.max_examples)  # fmt: skip
    print(report.summary())
    return 1 if report.findings else 0


def register(commands: Commands) -> None:
    parser = commands.add_parser("fuzz", help="compile Hypothesis-generated repositories with both sides")
    parser.add_argument("--seconds", type=float, default=60.0, help="how long to fuzz")
    parser.add_argument("--seed", type=int, default=0, help="first Hypothesis seed (batch b uses seed + b)")
    add_reference(parser, many=True)
    add_profile(parser)
    parser.add_argument("--max-examples", type=int, help="stop after this many repositories")
    parser.add_argument("--out", default="cases/compile", help="where new divergences are saved as cases")
    parser.add_argument("--cases", default="cases/compile", help="corpus whose recorded divergences are known")
    parser.add_argument(
        "--lifecycle", action="store_true", help="fuzz conversations (step sequences); cases go to <out>/../lifecycle"
    )
    parser.set_defaults(func=cmd_fuzz)
