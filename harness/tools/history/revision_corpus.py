"""The corpus against upstream revisions (`git:` references) and releases side by side, comparing only
the references' own outputs: what the history table, commit bisect, the equality checks and the
gate on upstream's HEAD are built on.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.acquire.releases import cache_root
from harness.acquire.revision_build import build_revision
from harness.acquire.revision_source import BuildError
from harness.cases.load import load_scenarios
from harness.cases.select import Keyword
from harness.core.model import Outcome, Scenario
from harness.core.reference import ReferenceSpec
from harness.run.by_reference import ComputedOnce
from harness.run.corpus import RunOptions, run_corpus
from harness.runners.base import Runner
from harness.runners.git_reference import GitReference, GitReferenceRunner
from harness.runners.references import default_runner
from harness.tools.history.scan import first_parent_commits
from harness.tools.releases.bisect import BisectError, first_change
from harness.tools.releases.drift import changes

DEFAULT_PROFILE = "letta-code@0.32.14"  # only the references' outputs are compared; the port's profile is moot


def runner_factory(
    references: dict[str, GitReference], home: Path, ceiling: Path | None, timeout: float, lifecycle: bool | None = None
) -> Callable[[ReferenceSpec, Path], Runner]:
    """A Session runner_factory: `git` specs (by value) run as GitReferenceRunner, others as usual."""

    def factory(spec: ReferenceSpec, _cache: Path) -> Runner:
        if spec.kind == "git":
            return GitReferenceRunner(references[spec.value], home, ceiling, timeout, lifecycle)
        return default_runner(spec, home, ceiling, timeout)

    return factory


def load_cases(paths: list[Path], only: Keyword | None = None) -> list[Scenario]:
    """The cases under `paths` a reference runs (golden cases run the port alone), optionally those `-k` selects."""
    loaded = load_scenarios(paths)
    for error in loaded.errors:
        print(f"error: {error}", file=sys.stderr)
    scenarios = [s for s in loaded.scenarios if not s.runs_port_alone]
    return only.select(scenarios) if only else scenarios


def is_lifecycle(scenario: Scenario) -> bool:
    return scenario.kind == "lifecycle"


def case_key(outcome: Outcome | None, turns: list[dict[str, Any]]) -> str:
    """A case's reference output as one comparable string (a lifecycle case: every step's observation)."""
    if turns:
        return json.dumps([row.get("reference") for row in turns], sort_keys=True)
    if outcome is None:
        return "<none>"
    if outcome.status == "error":
        return "error: " + (outcome.error or "")
    if outcome.status == "thrown":
        return "thrown"  # upstream's message aside, as bisect's same_output
    return json.dumps(outcome.record, sort_keys=True, ensure_ascii=True)


@dataclass
class CorpusRun:
    label: str
    keys: dict[str, str]  # case id -> output key
    outcomes: dict[str, Outcome]  # compile cases only
    errors: dict[str, str]
    seconds: float


def run_references(
    specs: list[ReferenceSpec],
    gits: dict[str, GitReference],
    scenarios: list[Scenario],
    *,
    timeout: float = 60.0,
    jobs: int = 1,
    sides: ComputedOnce | None = None,
) -> dict[str, CorpusRun]:
    """Run the corpus against references (npm/bundle specs and git references) in one session, `jobs` columns
    at a time (harness.run.by_reference); each reference's own outputs by case. `sides`: the port's lifecycle sides,
    kept from one call to the next (the same probe against another commit hands the port the same ids)."""
    lifecycle = any(is_lifecycle(s) for s in scenarios)
    started = time.perf_counter()
    cache = cache_root()  # Session's own home and ceiling
    factory = runner_factory(gits, cache / "home", cache / "repos", timeout, lifecycle)
    options = RunOptions(  # reference by reference: each starts once, the port's outcomes shared by every column
        specs,
        profile_override=DEFAULT_PROFILE,
        timeout=timeout,
        runner_factory=factory,
        jobs=jobs,
        by_reference=True,
        lifecycle_sides=sides,
    )
    results = run_corpus(scenarios, options).results
    seconds = time.perf_counter() - started
    runs = {spec.label: CorpusRun(spec.label, {}, {}, {}, seconds) for spec in specs}
    for result in results:
        run = runs.get(result.reference)
        if run is None:
            continue
        run.keys[result.case_id] = case_key(result.reference_outcome, result.turns)
        if result.reference_outcome is not None and not result.turns:
            run.outcomes[result.case_id] = result.reference_outcome
        if result.reference_outcome is not None and result.reference_outcome.status == "error":
            run.errors[result.case_id] = result.reference_outcome.error or ""
    return runs


def git_spec(repo: Path, commit: str) -> tuple[ReferenceSpec, dict[str, GitReference]]:
    reference = GitReference(repo, commit)
    spec = reference.spec()
    return spec, {spec.value: reference}


def bisect_commits(
    repo: Path, scenario: Scenario, start: str, end: str, *, timeout: float = 60.0, fields: tuple[str, ...] = ()
) -> Any:
    """The first first-parent commit from start to end where `scenario`'s reference output changes."""
    repo = repo.expanduser().resolve()
    candidates = [c.commit for c in first_parent_commits(repo, start, end)]

    by_module: dict[str, Outcome] = {}  # commits with the same module share one run

    def outcome_of(commit: str) -> Outcome:
        try:
            build = build_revision(repo, commit)
        except BuildError as error:
            raise BisectError(f"building {commit[:12]}: {error}") from None
        if build.module_key in by_module:
            return by_module[build.module_key]
        spec, gits = git_spec(repo, commit)
        run = run_references([spec], gits, [scenario], timeout=timeout)[spec.label]
        outcome = run.outcomes.get(scenario.id)
        if outcome is None:
            raise BisectError(f"{commit[:12]}: {run.errors.get(scenario.id, 'the case did not run')}")
        by_module[build.module_key] = outcome
        return outcome

    return first_change(candidates, outcome_of, fields)


def head_gate(
    repo: Path, rev: str, release: ReferenceSpec, scenarios: list[Scenario], *, timeout: float = 60.0
) -> tuple[dict[str, list[str]], list[str], CorpusRun, CorpusRun]:
    """Upstream's HEAD beside the newest pinned release: the cases whose reference output differs
    (grouped by what changed, as drift does) and the cases that could not run."""
    reference = GitReference(repo, rev)
    spec, npm = reference.spec(), release
    runs = run_references([npm, spec], {spec.value: reference}, scenarios, timeout=timeout)
    head, released = runs[spec.label], runs[npm.label]
    groups: dict[str, list[str]] = {}
    for case_id in sorted(set(head.keys) | set(released.keys)):
        if head.keys.get(case_id) == released.keys.get(case_id):
            continue
        if case_id in head.outcomes and case_id in released.outcomes:
            keys = changes(released.outcomes[case_id], head.outcomes[case_id]) or ["output"]
        else:
            keys = ["lifecycle"]
        for key in keys:
            groups.setdefault(key, []).append(case_id)
    errors = sorted(set(head.errors) | set(released.errors))
    return groups, errors, head, released
