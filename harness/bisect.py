"""`conformance bisect CASE --from A --to B`: the first reference where a case's upstream output changes.

Candidates are the pinned releases from A to B (manifest order), or, with `--checkout PATH`, the
first-parent commits of an upstream checkout from A to B, each built into a bundle with upstream's
own `bun install && bun run build` (harness.releases.build_checkout) in a temporary worktree.
The search is a binary search for the first candidate whose output differs from A's: exact when
the output changes once between A and B; when it changes and changes back, it finds *a* change.
Only the reference's own output is compared, never the port's.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .compare import COMPARED_FIELDS
from .drift import changes
from .releases import ReferenceSpec, ReferenceUnavailable, build_checkout, cache_root, ensure_bun, load_manifest
from .run import Session
from .runners.base import Outcome
from .scenario import Scenario, load_scenarios


class BisectError(Exception):
    """A candidate could not be run; bisecting cannot go on."""


def output_key(outcome: Outcome, fields: tuple[str, ...] = ()) -> str:
    """What counts as "the same output": the record's bytes (only `fields`, when given), or that it
    threw (upstream's message aside)."""
    if outcome.status == "error":
        raise BisectError(outcome.error or "the reference could not run")
    if outcome.status == "thrown":
        return "thrown"
    record = outcome.record or {}
    if fields:
        record = {name: record.get(name, "<absent>") for name in fields}
    return json.dumps(record, sort_keys=True, ensure_ascii=True)


@dataclass
class BisectResult:
    candidates: list[str]
    first_changed: str | None  # None: the output at the end equals the start
    last_same: str | None
    tested: list[str] = field(default_factory=list)  # in the order they were run
    what: list[str] = field(default_factory=list)  # drift.changes between last_same and first_changed

    def to_json(self) -> dict[str, Any]:
        return self.__dict__.copy()


def first_change(
    candidates: list[str], outcome_of: Callable[[str], Outcome], fields: tuple[str, ...] = ()
) -> BisectResult:
    """Binary search over candidates (oldest first) for the first whose output differs from the first's
    (in `fields` only, when given)."""
    if len(candidates) < 2:
        raise ValueError("bisect needs at least two candidates (the range holds " + str(len(candidates)) + ")")
    seen: dict[str, Outcome] = {}
    tested: list[str] = []

    def key(index: int) -> str:
        name = candidates[index]
        if name not in seen:
            seen[name] = outcome_of(name)
            tested.append(name)
        return output_key(seen[name], fields)

    start = key(0)
    if key(len(candidates) - 1) == start:
        return BisectResult(candidates, None, None, tested)
    low, high = 0, len(candidates) - 1  # key(low) == start, key(high) != start
    while high - low > 1:
        middle = (low + high) // 2
        if key(middle) == start:
            low = middle
        else:
            high = middle
    before, after = seen[candidates[low]], seen[candidates[high]]
    what = changes(before, after, fields or COMPARED_FIELDS)
    return BisectResult(candidates, candidates[high], candidates[low], tested, what)


def release_range(start: str, end: str, order: list[str] | None = None) -> list[str]:
    order = order if order is not None else list(load_manifest()["releases"])
    for version in (start, end):
        if version not in order:
            raise ValueError(f"{version} is not a pinned release (pinned: {', '.join(order)})")
    i, j = order.index(start), order.index(end)
    if i >= j:
        raise ValueError(f"--from {start} must be an older pinned release than --to {end}")
    return order[i : j + 1]


def commit_range(checkout: Path, start: str, end: str) -> list[str]:
    """start, then the first-parent commits after it up to end, oldest first."""

    def git(*args: str) -> str:
        done = subprocess.run(["git", "-C", str(checkout), *args], capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise ValueError(f"git {' '.join(args)} in {checkout}: {done.stderr.strip()}")
        return done.stdout.strip()

    first = git("rev-parse", "--verify", f"{start}^{{commit}}")
    listed = git("rev-list", "--reverse", "--first-parent", "--ancestry-path", f"{first}..{end}").split()
    return [first, *listed]


def checkout_bundle(checkout: Path, commit: str) -> Path:
    """letta.js built at `commit`, cached by commit under the cache root (built once)."""
    dest = cache_root() / "checkout-builds" / commit
    bundle = dest / "letta.js"
    if bundle.exists():
        return bundle
    with tempfile.TemporaryDirectory(prefix="bisect-") as tmp:
        worktree = Path(tmp) / "src"
        subprocess.run(["git", "-C", str(checkout), "worktree", "add", "--detach", str(worktree), commit],
                       capture_output=True, text=True, check=True)  # fmt: skip
        try:
            built = build_checkout(worktree, ensure_bun())
            dest.mkdir(parents=True, exist_ok=True)
            shutil.copy(built, bundle)
            if (worktree / "package.json").exists():
                shutil.copy(worktree / "package.json", dest / "package.json")
        finally:
            subprocess.run(["git", "-C", str(checkout), "worktree", "remove", "--force", str(worktree)],
                           capture_output=True, check=False)  # fmt: skip
    return bundle


def reference_outcome(scenario: Scenario, spec: ReferenceSpec, timeout: float) -> Outcome:
    with Session([spec], timeout=timeout) as session:
        results = session.run_case(scenario)
    if not results or results[0].reference_outcome is None:
        raise BisectError(f"{spec.label}: {'; '.join(results[0].reasons) if results else 'the case does not apply'}")
    return results[0].reference_outcome


def cmd_bisect(args: argparse.Namespace) -> int:
    loaded = load_scenarios(args.paths or [Path("cases")])
    matches = [s for s in loaded.scenarios if s.id == args.case]
    if not matches:
        print(f"error: no case with id {args.case!r}", file=sys.stderr)
        return 2
    scenario = matches[0]
    try:
        if args.checkout:
            checkout = Path(args.checkout).resolve()
            candidates = commit_range(checkout, args.start, args.end)

            def outcome_of(commit: str) -> Outcome:
                try:
                    bundle = checkout_bundle(checkout, commit)
                except (ReferenceUnavailable, subprocess.CalledProcessError) as error:
                    raise BisectError(f"building {commit[:12]}: {error}") from None
                return reference_outcome(scenario, ReferenceSpec("bundle", str(bundle), args.runtime), args.timeout)
        else:
            candidates = release_range(args.start, args.end)

            def outcome_of(commit: str) -> Outcome:  # a release version here
                return reference_outcome(scenario, ReferenceSpec("npm", commit, args.runtime), args.timeout)

        result = first_change(candidates, outcome_of, tuple(args.field or ()))
    except (ValueError, BisectError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(f"tested: {', '.join(result.tested)}")
    if result.first_changed is None:
        print(f"{scenario.id}: the reference output is the same at {candidates[0]} and {candidates[-1]}")
        return 1
    print(
        f"{scenario.id}: first changed at {result.first_changed} (after {result.last_same}): {', '.join(result.what)}"
    )
    return 0


def add_parser(commands: Any) -> None:
    bisect = commands.add_parser("bisect", help="the first release (or commit) where a case's reference output changes")
    bisect.add_argument("case", help="case id")
    bisect.add_argument("--from", dest="start", required=True, help="pinned release (or, with --checkout, a commit)")
    bisect.add_argument("--to", dest="end", required=True, help="pinned release (or, with --checkout, a commit)")
    bisect.add_argument("--checkout", help="an upstream letta-code checkout: bisect its commits, building each")
    bisect.add_argument("--runtime", choices=("bun", "node"), default="bun")
    bisect.add_argument(
        "--field", action="append", choices=COMPARED_FIELDS,
        help="only a change of this field counts (repeatable); e.g. content, to look past coreMemory's arrival",
    )  # fmt: skip
    bisect.add_argument("--timeout", type=float, default=60.0)
    bisect.add_argument("--cases", dest="paths", action="append", type=Path,
                        help="scenario file or directory holding the case (default: cases/)")  # fmt: skip
    bisect.set_defaults(func=cmd_bisect)
