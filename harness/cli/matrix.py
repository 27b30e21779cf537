"""`conformance matrix`: the corpus against every pinned release (and any other reference, runtime or
locale) in one run, the drift report and the optional gate (harness.tools.releases.matrix, drift, gate)."""

from __future__ import annotations

import argparse
import sys

from harness.acquire.releases import ReferenceUnavailable
from harness.cli.common import (
    Commands,
    UsageError,
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
    exit_code,
    impl_specs,
    load_selected,
    reference_specs,
    select,
    writing,
)
from harness.cli.impl_options import add_impl_env, corpus_options, expectations_of
from harness.cli.terminal import cached_text, print_results, reports_line
from harness.core import stopping
from harness.core.plural import counted
from harness.core.reference import RUNTIMES, ReferenceSpec
from harness.core.registries import pin_on_demand
from harness.report.drift import drift_markdown
from harness.report.explained import name_rules
from harness.report.writers import MATRIX, write_reports
from harness.run.corpus import not_run
from harness.tools.releases.gate import render as render_gate
from harness.tools.releases.matrix import discover_latest, matrix_specs, run_matrix, with_explainers


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
    if args.k:  # drift is judged on what runs: the cases that explain a drift run too
        scenarios, explaining = with_explainers(everything, scenarios)
        if explaining:
            print(f"-k: also running {explaining} case(s) that explain drift between releases", file=sys.stderr)
    for error in load_errors:
        print(f"error: {error}", file=sys.stderr)
    latest, discovered = _latest() if args.latest else (None, None)
    specs = matrix_specs(args.reference or [], args.runtime or ["bun"], args.locale or [], latest)
    shape = f"{counted(len(scenarios), 'case')} x {counted(len(specs), 'reference')}"
    print(f"{shape}: {', '.join(s.label for s in specs)}", file=sys.stderr)
    options = corpus_options(args, specs, scenarios, impls, expectations)
    matrix = run_matrix(scenarios, options, load_errors, gate=args.gate, latest=latest, discovered=discovered)
    report = matrix.report
    if (stop := stopping.reason()) is not None:  # a partial matrix: drift and gate judge only what ran
        kept, missed = counted(len(report.results), "result"), counted(not_run(report), "case")
        print(
            f"interrupted ({stop.why}): {kept} kept, {missed} not run (or not against every reference)", file=sys.stderr
        )
    if problem := name_rules(report, scenarios):
        print(f"error: {problem}", file=sys.stderr)
    print_results(report, verbose=args.verbose, durations=None)  # the failures by rule, as `conformance run`
    summary = ", ".join(f"{n} {status}" for status, n in report.counts.items() if n) + cached_text(report.results)
    shape += f" = {counted(len(report.results), 'result')}"
    print(f"matrix: {shape}: {summary} in {matrix.seconds:.1f} s")
    print(drift_markdown(report.extra["drift"]).splitlines()[-1])
    if args.report:
        with writing(args.report, "--report") as directory:
            paths = write_reports(report, directory, MATRIX)
        print(reports_line(paths))
    if stopping.requested():
        return stopping.exit_code()  # 130 (SIGINT) or 143 (SIGTERM, --run-timeout): the report is partial
    if matrix.gate is not None:
        print(render_gate(matrix.gate), end="")
    return exit_code(matrix.ok)


def _latest() -> tuple[ReferenceSpec, dict[str, str]]:
    """`--latest`: the newest release on npm and PyPI (pinned for this run when it is not pinned yet), and what
    the matrix's report records of it."""
    try:
        found = discover_latest()
    except ReferenceUnavailable as error:
        raise UsageError(str(error)) from None
    latest = found.spec
    if not found.pinned:
        pin_on_demand(latest.value, found.digest, latest.kind)
    discovered = {
        "reference": latest.cli,
        "version": latest.value,
        "digest": found.digest,
        "pinned": str(found.pinned).lower(),
    }
    note = "" if found.pinned else " (not pinned: verified against the digest the registry publishes)"
    print(f"newest release on npm and PyPI: {latest.cli}{note}")
    return latest, discovered


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
    matrix.add_argument(
        "--gate",
        action="store_true",
        help="fail when a case that passed against the previous "
        "pinned release fails against the newest one, and say what to do",
    )
    add_report(matrix, MATRIX)
    add_select(matrix)
    add_timeout(matrix)
    add_run_timeout(matrix)
    add_jobs(matrix)
    add_no_timing(matrix)
    add_no_cache(matrix)
    matrix.set_defaults(func=cmd_matrix)
