"""`conformance reduce`: shrink a diverging case (or repository) to a minimal one that diverges the same way."""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from pathlib import Path

from harness.cases.load import load_scenario
from harness.cases.rules import unnamed_rules_note
from harness.cases.write import CaseExists, write_case
from harness.cli.common import (
    Commands,
    add_impl,
    add_profile,
    add_reference,
    cases_dir,
    existing,
    impl_specs,
    reference_specs,
    writing,
)
from harness.cli.impl_options import add_impl_env, impl_env
from harness.core.model import ScenarioError
from harness.repo.snapshot import SnapshotError, read_snapshot
from harness.run.corpus import RunOptions, open_session
from harness.tools.batch_compile import scratch_parent
from harness.tools.reduce import (
    Candidate,
    Oracle,
    candidate_of,
    reduce_candidate,
    reduced_document,
    reproduce_command,
    reproduction,
)


def cmd_reduce(args: argparse.Namespace) -> int:
    spec = reference_specs(args)[0]
    impl = impl_specs(args)[0]
    source = existing(Path(args.case_or_dir), "case or memory directory")
    seed: int | None = None  # a fuzz-found case's seed, passed on in the reduced case's `found_by`
    try:
        if source.is_file():
            scenario = load_scenario(source)
            candidate, origin = candidate_of(scenario), scenario.id
            seed = scenario.found_by.seed if scenario.found_by else None
            default_id = f"{scenario.id}-reduced"
            out_dir = Path(args.out) if args.out else cases_dir(scenario.kind, "--out DIR")
        else:
            candidate = Candidate(read_snapshot(source).model, {})
            origin, default_id = f"the repository {source.name!r}", f"{source.name.lower()}-reduced"
            out_dir = Path(args.out) if args.out else cases_dir("compile", "--out DIR")
    except (ScenarioError, SnapshotError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    with (
        tempfile.TemporaryDirectory(prefix="letta-reduce-", dir=scratch_parent()) as tmp,
        open_session(
            RunOptions(
                [spec], implementations=[impl], cache=Path(tmp), profile_override=args.profile, impl_env=impl_env(args)
            )
        ) as session,
    ):
        oracle = Oracle(session)
        found_by, profiles = reproduction(session, session.references[0], seed)
        try:
            if oracle.signature(candidate) is None:
                why = "; ".join(oracle.errors) or f"{impl.label} and {spec.label} agree: nothing to reduce"
                print(f"does not diverge: {why}", file=sys.stderr)
                return 2 if oracle.errors else 1
            reduction = reduce_candidate(oracle, candidate, budget=args.budget, seconds=args.seconds)
        finally:
            oracle.close()
    origin += f" (compared with Python profile {args.profile})" if args.profile else ""
    case_id = args.id or re.sub(r"[^a-z0-9._-]+", "-", default_id)
    doc = reduced_document(reduction, case_id, origin, found_by, profiles)
    try:
        with writing(out_dir, "--out"):
            path = write_case(doc, out_dir, overwrite=args.force)
    except CaseExists as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(f"wrote {path}: {reduction.summary()}")
    for note in [*reduction.notes, unnamed_rules_note(path)]:
        if note:
            print(f"  note: {note}")
    print(f"  it diverges again with: {reproduce_command(found_by, str(path))}")
    return 0


def register(commands: Commands) -> None:
    parser = commands.add_parser("reduce", help="shrink a diverging case (or repository) to a minimal one")
    parser.add_argument("case_or_dir", help="a scenario file, or a memory directory")
    add_reference(parser, many=False)
    add_impl(parser, many=False)
    add_impl_env(parser)
    add_profile(parser)
    parser.add_argument("--id", help="id of the new case (default: <id>-reduced)")
    parser.add_argument(
        "--out",
        help="directory for the new case (default: cases/compile in the current directory, "
        "cases/lifecycle for a lifecycle case)",
    )
    parser.add_argument("--budget", type=int, default=3000, help="most candidates to try")
    parser.add_argument("--seconds", type=float, default=600.0, help="time budget")
    parser.add_argument("--force", action="store_true", help="replace an existing case with the same id")
    parser.set_defaults(func=cmd_reduce)
