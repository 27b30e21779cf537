"""`conformance run`: the corpus (or some cases) against the Python port and the references; reports."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from harness.cli.common import (
    Commands,
    add_jobs,
    add_no_timing,
    add_paths,
    add_profile,
    add_reference,
    add_report,
    add_runtime_options,
    add_select,
    add_timeout,
    load_selected,
    reference_specs,
)
from harness.engine import Session
from harness.model import CaseResult, RunReport
from harness.report.write import write_reports
from harness.runners.manifest import ReferenceSpec
from harness.tools.shard import Shard
from harness.verdict.diff import render_field_diff


class Progress:
    """`[done/total] failures` on a terminal; silent otherwise."""

    def __init__(self, total: int, stream=sys.stderr) -> None:  # type: ignore[no-untyped-def]
        self.total, self.done, self.failures, self.stream = total, 0, 0, stream
        self.enabled = stream.isatty()

    def __call__(self, result: CaseResult) -> None:
        self.done += 1
        if result.status.failing:
            self.failures += 1
        if self.enabled:
            self.stream.write(f"\r[{self.done}/{self.total}] failures: {self.failures}  {result.case_id[:40]:<40}")
            self.stream.flush()

    def finish(self) -> None:
        if self.enabled:
            self.stream.write("\n")


def cmd_run(args: argparse.Namespace) -> int:
    scenarios, load_errors = load_selected(args.paths, args.k)
    for error in load_errors:
        print(f"error: {error}", file=sys.stderr)
    if not scenarios and not load_errors:
        print("no scenarios selected", file=sys.stderr)
        return 2
    shard = Shard.parse(args.shard) if args.shard else None
    if shard:
        selected = len(scenarios)
        scenarios = shard.select(scenarios)
        print(f"shard {shard}: {len(scenarios)} of {selected} selected cases", file=sys.stderr)
    specs = apply_runtime(reference_specs(args), args)
    cases_per_run = sum(1 if s.runs_port_alone else len(specs) for s in scenarios)
    progress = Progress(cases_per_run)
    with Session(specs, profile_override=args.profile, timeout=args.timeout, jobs=args.jobs) as session:
        results = session.run(scenarios, progress)
        progress.finish()
        references = session.describe_references()
    report = RunReport(results, references, load_errors, ["conformance", *sys.argv[1:]], timing=not args.no_timing)
    for result in results:
        if result.failed:
            print(f"{result.status.upper()}: {result.case_id} [{result.reference}] ({result.path})", file=sys.stderr)
            for reason in result.reasons:
                print(f"  {reason}", file=sys.stderr)
            for diff in result.diffs[:3]:
                print("  " + render_field_diff(diff).replace("\n", "\n  "), file=sys.stderr)
    counts = report.counts
    summary = ", ".join(f"{n} {status}" for status, n in counts.items() if n)
    print(f"{len(results)} results: {summary}")
    if args.report:
        paths = write_reports(report, Path(args.report))
        print(f"reports: {paths['html']} {paths['json']} {paths['junit']}")
    if shard and not scenarios and not load_errors:
        return 0  # an empty shard has nothing to fail
    return 0 if report.ok else 1


def apply_runtime(specs: list[ReferenceSpec], args: argparse.Namespace) -> list[ReferenceSpec]:
    """`--runtime`/`--locale` apply to every reference that names no runtime of its own."""
    runtime, locale = getattr(args, "runtime", None), getattr(args, "locale", None)
    if not runtime and not locale:
        return specs
    return [s if s.is_variant else s.with_runtime(runtime or s.runtime, locale) for s in specs]


def register(commands: Commands) -> None:
    run = commands.add_parser("run", help="run scenarios against the Python port and references")
    add_paths(run)
    add_reference(run, many=True)
    add_profile(run)
    add_report(run)
    add_select(run)
    add_jobs(run)
    run.add_argument("--shard", help="run only shard K of N (K/N; split by a hash of the case id, docs/scale.md)")
    add_timeout(run)
    add_no_timing(run)
    add_runtime_options(run)
    run.set_defaults(func=cmd_run)
