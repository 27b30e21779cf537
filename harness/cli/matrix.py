"""`conformance matrix`: the corpus against every pinned release (and any other reference, runtime or
locale) in one run, the drift report and the optional gate (harness.tools.releases.matrix, drift, gate)."""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from harness.acquire.manifest import RUNTIMES, ReferenceSpec, pin_on_demand
from harness.acquire.releases import ReferenceUnavailable
from harness.cli.common import (
    Commands,
    add_expectations,
    add_impl,
    add_jobs,
    add_no_cache,
    add_no_timing,
    add_paths,
    add_reference,
    add_report,
    add_run_timeout,
    add_select,
    add_timeout,
    impl_specs,
    load_selected,
    reference_specs,
    rules_of,
    select,
    writing,
)
from harness.cli.impl_options import add_impl_env, expectations_of, impl_env
from harness.cli.terminal import cached_text, print_results, reports_line
from harness.core import stopping
from harness.core.model import RunReport
from harness.core.plural import counted
from harness.report.drift import drift_markdown
from harness.report.explained import name_rules
from harness.report.meta import interrupted, run_metadata
from harness.report.writers import MATRIX, write_reports
from harness.run.by_reference import run_by_reference
from harness.run.session import Session
from harness.tools.releases.drift import drift_report
from harness.tools.releases.gate import GateResult, evaluate
from harness.tools.releases.gate import render as render_gate
from harness.tools.releases.matrix import (
    discover_latest,
    gate_pair,
    matrix_json,
    matrix_specs,
    reference_outcomes,
    release_order,
    spec_version,
)


def cmd_matrix(args: argparse.Namespace) -> int:
    stopping.deadline(getattr(args, "run_timeout", None))  # --run-timeout counts from here
    with stopping.cooperative():  # from here a signal ends the run with a partial report (harness.core.stopping)
        return _matrix(args)


def _matrix(args: argparse.Namespace) -> int:
    if args.reference:
        reference_specs(args)  # every --reference checked before anything runs (UsageError)
    impls = impl_specs(args)
    expectations = expectations_of(args, impls)
    everything, load_errors = load_selected(args.paths, None)  # compile cases and lifecycle probes
    scenarios = select(everything, args.k)
    if args.k:  # drift is judged on what runs: the cases that explain a drift run too, or it reads as unexplained
        chosen = {s.id for s in scenarios}
        explainers = [s for s in everything if s.explains and s.id not in chosen]
        if explainers:
            print(f"-k: also running {len(explainers)} case(s) that explain drift between releases", file=sys.stderr)
            scenarios += explainers
    for error in load_errors:
        print(f"error: {error}", file=sys.stderr)
    latest: ReferenceSpec | None = None
    discovered: dict[str, str] | None = None
    if args.latest:
        try:
            found = discover_latest()
        except ReferenceUnavailable as error:
            print(f"error: {error}", file=sys.stderr)
            return 2
        latest = found.spec
        if not found.pinned:
            pin_on_demand(latest.value, found.digest, latest.kind)
        discovered = {"reference": latest.cli, "version": latest.value, "digest": found.digest,
                      "pinned": str(found.pinned).lower()}  # fmt: skip
        note = "" if found.pinned else " (not pinned: verified against the digest the registry publishes)"
        print(f"newest release on npm and PyPI: {latest.cli}{note}")
    specs = matrix_specs(args.reference or [], args.runtime or ["bun"], args.locale or [], latest)
    shape = f"{counted(len(scenarios), 'case')} x {counted(len(specs), 'reference')}"
    print(f"{shape}: {', '.join(s.label for s in specs)}", file=sys.stderr)
    started_at, started = time.time(), time.perf_counter()
    with Session(specs, implementations=impls, expectations=expectations, timeout=args.timeout,
                 jobs=args.jobs, rules=rules_of(scenarios), impl_env=impl_env(args)) as session:  # fmt: skip
        results = run_by_reference(session, scenarios)  # one process per release at a time (harness.run.by_reference)
        described = session.describe_references()
        profiles = [{"reference": r.label, "profile": r.profile, "runtime": r.spec.runtime if r.spec else None}
                    for r in session.references]  # fmt: skip
        implementations = [entry["implementation"] for entry in session.describe_implementations()]
        not_run = session.not_run
    seconds = time.perf_counter() - started
    drift = drift_report(reference_outcomes(results), scenarios, specs, release_order())
    first_impl = [r for r in results if r.implementation == impls[0].label]  # the matrix and gate: the first --impl
    gate: GateResult | None = None
    if args.gate:
        pair = gate_pair(specs, latest)
        gate = evaluate(first_impl, *pair, new_version=spec_version(specs, pair[1])) if pair else None
    command = ["conformance", *sys.argv[1:]]
    timing = not args.no_timing
    meta = run_metadata(command, profiles, seconds if timing else None, started_at if timing else None)
    meta["implementations"] = sorted(set(implementations), key=implementations.index)
    if (stop := stopping.reason()) is not None:  # a partial matrix: drift and gate judge only what ran
        meta["interrupted"] = interrupted(stop.why, not_run)
        print(f"interrupted ({stop.why}): {counted(len(results), 'result')} kept, "
              f"{counted(len(not_run), 'case')} not run (or not against every reference)", file=sys.stderr)  # fmt: skip
    extra: dict[str, Any] = {
        "run": meta,
        "matrix": matrix_json(first_impl, specs, None if args.no_timing else seconds),
        "drift": drift.to_json(),
    }
    if len(impls) > 1:
        extra["matrix"]["implementations"] = {
            impl.label: matrix_json([r for r in results if r.implementation == impl.label], specs, None)["cases"]
            for impl in impls
        }
    if gate is not None:
        extra["gate"] = gate.to_json()
    if discovered:
        extra["matrix"]["latest"] = discovered
    report = RunReport(results, described, load_errors, ["conformance", *sys.argv[1:]], timing=not args.no_timing,
                       extra=extra)  # fmt: skip
    if problem := name_rules(report, scenarios):
        print(f"error: {problem}", file=sys.stderr)
    print_results(report, verbose=args.verbose, durations=None)  # the failures by rule, as `conformance run`
    summary = ", ".join(f"{n} {status}" for status, n in report.counts.items() if n) + cached_text(results)
    shape += f" = {counted(len(results), 'result')}"
    print(f"matrix: {shape}: {summary} in {seconds:.1f} s")
    print(drift_markdown(extra["drift"]).splitlines()[-1])
    if args.report:
        with writing(args.report, "--report") as directory:
            paths = write_reports(report, directory, MATRIX)
        print(reports_line(paths))
    if stopping.requested():
        return stopping.exit_code()  # 130 (SIGINT) or 143 (SIGTERM, --run-timeout): the report is partial
    if gate is not None:
        print(render_gate(gate), end="")
        return 0 if gate.ok and not load_errors else 1
    return 0 if report.ok and drift.ok else 1


def register(commands: Commands) -> None:
    matrix = commands.add_parser(
        "matrix", help="the corpus against every pinned release (and --reference), drift report, optional gate"
    )
    add_paths(matrix)
    add_reference(matrix, many=True, default="none beyond the pinned releases")
    add_impl(matrix, many=True)
    matrix.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="list every failing result and every rule, not only the failures explained by rule",
    )
    add_impl_env(matrix)
    add_expectations(matrix)
    matrix.add_argument("--runtime", action="append", choices=RUNTIMES, help="bun (default) and/or node; repeatable")
    matrix.add_argument(
        "--locale", action="append", help="with a non-bun runtime: also run under this LANG (repeatable)"
    )
    matrix.add_argument("--latest", action="store_true", help="also the newest release on the npm registry (network)")
    matrix.add_argument("--gate", action="store_true", help="fail when a case that passed against the previous "
                        "pinned release fails against the newest one, and say what to do")  # fmt: skip
    add_report(matrix, MATRIX)
    add_select(matrix)
    add_timeout(matrix)
    add_run_timeout(matrix)
    add_jobs(matrix)
    add_no_timing(matrix)
    add_no_cache(matrix)
    matrix.set_defaults(func=cmd_matrix)
