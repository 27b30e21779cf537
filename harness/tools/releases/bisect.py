"""`conformance bisect CASE --from A --to B`: the first reference where a case's upstream output changes.

Candidates are the pinned releases from A to B (manifest order), or, with `--checkout PATH`, the
first-parent commits of an upstream checkout from A to B, each run as `git:CHECKOUT@COMMIT` (its modules
built from source by harness.acquire.revision_build, cached by commit; nothing is written in the checkout).
The search is a binary search for the first candidate whose output differs from A's: exact when
the output changes once between A and B; when it changes and changes back, it finds *a* change.
By default only the reference's own output is compared. With an implementation under test
(`--impl`), what is bisected is its verdict against each candidate instead (`verdict_outcome`): the
first release where it starts (or stops) agreeing with upstream.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.core.fields import COMPARED_FIELDS
from harness.core.model import Outcome, Scenario
from harness.core.reference import ReferenceSpec, pinned_references
from harness.run.corpus import RunOptions, open_session
from harness.runners.implementations import ImplSpec
from harness.tools.releases.drift import changes
from harness.verdict.diff import outcome_diff


class BisectError(Exception):
    """A candidate could not be run; bisecting cannot go on."""


def same_output(first: Outcome, other: Outcome, fields: tuple[str, ...] = ()) -> bool:
    """What counts as "the same output": no outcome_diff over the whole record (over `fields` only, when
    given), a throw on both sides being the same (upstream's message aside)."""
    for outcome in (first, other):
        if outcome.status == "error":
            raise BisectError(outcome.error or "the reference could not run")
    return not outcome_diff(first, other, fields or None)


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

    def outcome(index: int) -> Outcome:
        name = candidates[index]
        if name not in seen:
            seen[name] = outcome_of(name)
            tested.append(name)
        return seen[name]

    start = outcome(0)
    if same_output(start, outcome(len(candidates) - 1), fields):
        return BisectResult(candidates, None, None, tested)
    low, high = 0, len(candidates) - 1  # low is the same as start, high is not
    while high - low > 1:
        middle = (low + high) // 2
        if same_output(start, outcome(middle), fields):
            low = middle
        else:
            high = middle
    before, after = seen[candidates[low]], seen[candidates[high]]
    what = changes(before, after, fields or COMPARED_FIELDS)
    return BisectResult(candidates, candidates[high], candidates[low], tested, what)


def release_range(start: str, end: str, order: list[str] | None = None) -> list[str]:
    order = order if order is not None else [spec.label for spec in pinned_references()]  # npm and PyPI
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


def reference_outcome(scenario: Scenario, spec: ReferenceSpec, timeout: float) -> Outcome:
    with open_session(RunOptions([spec], timeout=timeout)) as session:
        results = session.run_case(scenario)
    if not results or results[0].reference_outcome is None:
        raise BisectError(f"{spec.label}: {'; '.join(results[0].reasons) if results else 'the case does not apply'}")
    return results[0].reference_outcome


#: the fields of a verdict outcome (`verdict_outcome`), bisected with --impl
VERDICT_FIELDS = ("verdict", "differs")


def verdict_outcome(
    scenario: Scenario, spec: ReferenceSpec, impl: ImplSpec, timeout: float, impl_env: dict[str, str] | None = None
) -> Outcome:
    """The implementation's verdict against `spec` on `scenario`, as an outcome whose record is
    {verdict: status, differs: [fields]}: two candidates differ when the verdict or its fields do."""
    with open_session(RunOptions([spec], implementations=[impl], timeout=timeout, impl_env=impl_env)) as session:
        results = session.run_case(scenario)
    if not results:
        raise BisectError(f"{spec.label}: the case does not apply")
    result = results[0]
    return Outcome("ok", record={"verdict": str(result.status), "differs": sorted({d.field for d in result.diffs})})
