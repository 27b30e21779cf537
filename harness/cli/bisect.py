"""`conformance bisect CASE --from A --to B`: the first release (or commit) where a case's reference output changes."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from harness.cases.load import load_scenarios
from harness.cli import history
from harness.cli.common import Commands, add_impl, add_no_cache, add_timeout, case_paths, impl_specs
from harness.cli.impl_options import add_impl_env, impl_env
from harness.core.fields import COMPARED_FIELDS
from harness.core.model import Outcome
from harness.core.protocol import OPS
from harness.core.reference import DEFAULT_RUNTIME, RUNTIMES, ReferenceSpec
from harness.runners.git_reference import GitReference
from harness.tools.releases.bisect import (
    VERDICT_FIELDS,
    BisectError,
    commit_range,
    first_change,
    reference_outcome,
    release_range,
    verdict_outcome,
)

Candidates = tuple[list[str], Callable[[str], Outcome]]  # in order, and how one's outcome is had


def _candidates(args: argparse.Namespace, judged: Callable[[ReferenceSpec], Outcome]) -> Candidates:
    """The candidates from --from to --to and how each one's outcome is had: pinned releases under --runtime, or
    with --checkout the checkout's first-parent commits, each built from source as `git:CHECKOUT@COMMIT`
    (harness.acquire.revision_build, the one builder of upstream revisions; under the pinned bun only)."""
    if not args.checkout:

        def release_outcome(label: str) -> Outcome:  # a release label here (0.32.8, pypi:0.34.12)
            spec = ReferenceSpec.parse(label)
            return judged(ReferenceSpec(spec.kind, spec.value, args.runtime))

        return release_range(args.start, args.end), release_outcome
    if args.runtime != DEFAULT_RUNTIME:
        raise BisectError(f"--checkout builds each commit as a git: revision, which runs under {DEFAULT_RUNTIME} only")
    checkout = Path(args.checkout).resolve()
    return commit_range(checkout, args.start, args.end), lambda commit: judged(GitReference(checkout, commit).spec())


def cmd_bisect(args: argparse.Namespace) -> int:
    if args.git:
        return history.cmd_bisect(args)  # first-parent commits, each built from source (harness.acquire.revision_build)
    loaded = load_scenarios(case_paths(args.paths or []))
    matches = [s for s in loaded.scenarios if s.id == args.case]
    if not matches:
        print(f"error: no case with id {args.case!r}", file=sys.stderr)
        return 2
    scenario = matches[0]
    impl = impl_specs(args)[0] if args.impl else None

    def judged(spec: ReferenceSpec) -> Outcome:  # the reference's output, or with --impl the verdict on it
        if impl:
            return verdict_outcome(scenario, spec, impl, args.timeout, impl_env(args))
        return reference_outcome(scenario, spec, args.timeout)

    # an op case's record is its op's fields (core.protocol), a compile's the compile record's
    searched = VERDICT_FIELDS if impl else OPS[scenario.op].case_fields if scenario.op else COMPARED_FIELDS
    seen: dict[str, Outcome] = {}
    try:
        candidates, outcome_of = _candidates(args, judged)

        def remembered(candidate: str) -> Outcome:  # each candidate runs once, whichever field is searched
            if candidate not in seen:
                seen[candidate] = outcome_of(candidate)
            return seen[candidate]

        result = first_change(candidates, remembered, tuple(args.field or (searched if impl or scenario.op else ())))
        per_field = {name: first_change(candidates, remembered, (name,)) for name in args.field or searched}
    except (ValueError, BisectError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(f"tested: {', '.join(c for c in candidates if c in seen)}")
    for name, found in per_field.items():  # the first change of every field, not only the first of any
        where = f"first changed at {found.first_changed} (after {found.last_same})" if found.first_changed else "same"
        print(f"  {name}: {where}")
    if result.first_changed is None:
        print(f"{scenario.id}: the reference output is the same at {candidates[0]} and {candidates[-1]}")
        return 1
    print(
        f"{scenario.id}: first changed at {result.first_changed} (after {result.last_same}): {', '.join(result.what)}"
    )
    return 0


def register(commands: Commands) -> None:
    bisect = commands.add_parser("bisect", help="the first release (or commit) where a case's reference output changes")
    bisect.add_argument("case", help="case id")
    bisect.add_argument("--from", dest="start", required=True, help="pinned release (or, with --checkout, a commit)")
    bisect.add_argument("--to", dest="end", required=True, help="pinned release (or, with --checkout, a commit)")
    bisect.add_argument(
        "--git", help="a local clone of letta-code: bisect its first-parent commits (modules built from source)"
    )
    bisect.add_argument(
        "--checkout",
        help="an upstream letta-code checkout: bisect its commits, each built from source as git:CHECKOUT@COMMIT",
    )
    bisect.add_argument("--runtime", choices=RUNTIMES, default="bun")
    bisect.add_argument(
        "--field",
        action="append",
        choices=COMPARED_FIELDS,
        help="only a change of this field counts (repeatable); e.g. content, to look past coreMemory's arrival",
    )
    add_impl(bisect, many=False)
    add_impl_env(bisect)
    add_timeout(bisect)
    add_no_cache(bisect)
    bisect.add_argument(
        "--cases",
        dest="paths",
        action="append",
        type=Path,
        help="scenario file or directory holding the case (default: cases/)",
    )
    bisect.set_defaults(func=cmd_bisect)
