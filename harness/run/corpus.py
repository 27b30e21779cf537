"""The one library entry of a run: `run_corpus(scenarios, options) -> RunReport`.

Owns how a run is wired: which Session a run's options make (`open_session`: references, implementations,
expectations, profile, timeout, jobs, the implementations' environment, the corpus's rules), whether cases run
case by case (harness.run.schedule) or reference by reference (harness.run.by_reference, a matrix), and the
report record a run returns with its `run` metadata (harness.run.meta). `conformance run`, `matrix`,
`history`, `mutation`, the pytest plugin and the benchmarks run cases through here; a command module only
parses its arguments, calls this and prints.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.cases.rules import Rule
from harness.core import stopping
from harness.core.model import CaseResult, RunReport, Scenario, ScenarioError
from harness.core.reference import ReferenceSpec
from harness.run.by_reference import ComputedOnce, run_by_reference
from harness.run.meta import interrupted, run_metadata
from harness.run.session import ExpectationSource, ImplFactory, Session
from harness.runners.base import Runner
from harness.runners.implementations import DEFAULT, ImplSpec

#: What a report.json's `run` keeps of an implementation as its runner describes itself.
BRIEF = ("implementation", "profile", "name", "info", "argv", "version", "starts", "start_error", "passed_env")


@dataclass(frozen=True)
class RunOptions:
    """What one run is: the references and implementations under test and how the cases are run and reported."""

    references: Sequence[ReferenceSpec]
    implementations: Sequence[ImplSpec] = (DEFAULT,)
    expectations: Sequence[ExpectationSource] = ()  # harness.run.expectations.Expectations, one per implementation
    profile_override: str | None = None  # `--profile`: every reference compared under this one
    timeout: float = 60.0
    jobs: int = 1
    rules: Mapping[str, Rule] | None = None  # the corpus's rules: which features a case needs
    impl_env: Mapping[str, str] | None = None  # `--impl-env`
    by_reference: bool = False  # a matrix: one process per reference at a time (harness.run.by_reference)
    lifecycle_sides: ComputedOnce | None = None  # by reference: the port's lifecycle sides, kept across runs
    command: Sequence[str] = ("conformance",)  # as report.json's `run.command` records it
    timing: bool = True  # False: nothing in the report changes between two runs (`--no-timing`)
    shard: str | None = None  # `run --shard K/N`, recorded in `run.shard`
    cache: Path | None = None
    memoize: bool | None = None  # None: the result store's own default (harness.runners.result_store)
    runner_factory: Callable[[ReferenceSpec, Path], Runner] | None = None
    impl_factory: ImplFactory | None = None
    progress: Callable[[CaseResult], None] | None = field(default=None, compare=False)
    stop: Callable[[], bool] | None = field(default=None, compare=False)  # -x/--maxfail: asked after each case


def open_session(options: RunOptions) -> Session:
    """The Session `options` describe (the caller closes it; `run_corpus` does for a whole run)."""
    return Session(
        list(options.references),
        implementations=options.implementations,
        expectations=options.expectations,
        profile_override=options.profile_override,
        cache=options.cache,
        timeout=options.timeout,
        runner_factory=options.runner_factory,
        impl_factory=options.impl_factory,
        jobs=options.jobs,
        memoize=options.memoize,
        rules=options.rules,
        impl_env=options.impl_env,
    )


def run_corpus(scenarios: list[Scenario], options: RunOptions, load_errors: Sequence[ScenarioError] = ()) -> RunReport:
    """Every scenario against every reference and implementation of `options`, with its expectations applied and
    lifecycle probes replayed; the report record, its `run` section included (`load_errors`: the files that did
    not load, reported with the results). A run told to stop (harness.core.stopping) returns what ran, marked
    `interrupted` with the cases that did not."""
    started_at, started = time.time(), time.perf_counter()
    stop = options.stop or (lambda: False)
    with open_session(options) as session:
        if stop():
            results: list[CaseResult] = []
        elif options.by_reference:
            results = run_by_reference(session, scenarios, options.lifecycle_sides)
        else:
            results = session.run(scenarios, options.progress, stop=stop)
        references = session.describe_references()
        meta = _run_section(session, options, time.perf_counter() - started, started_at)
    report = RunReport(results, references, list(load_errors), list(options.command), timing=options.timing)
    report.extra["run"] = meta
    return report


def _run_section(session: Session, options: RunOptions, seconds: float, started_at: float) -> dict[str, Any]:
    """report.json's `run`: the command, the references with their profile and runtime, the implementations as
    their runners describe themselves, the expectations files, the shard and a stop's mark."""
    described = [
        {"reference": r.label, "profile": r.profile, "runtime": r.spec.runtime if r.spec else None}
        for r in session.references
    ]
    timing = options.timing
    meta = run_metadata(list(options.command), described, seconds if timing else None, started_at if timing else None)
    meta["implementations"] = [
        {k: entry[k] for k in BRIEF if k in entry} for entry in session.describe_implementations()
    ]
    meta["expectations"] = [str(e.path) for e in options.expectations]
    if options.shard:
        meta["shard"] = options.shard
    if (stop := stopping.reason()) is not None:
        meta["interrupted"] = interrupted(stop.why, session.not_run)
    return meta


def not_run(report: RunReport) -> int:
    """How many cases a stopped run did not run (or, by reference, not against every reference)."""
    return len(report.extra.get("run", {}).get("interrupted", {}).get("not_run", []))
