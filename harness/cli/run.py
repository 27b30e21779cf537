"""`conformance run`: the corpus (or some cases): the implementations under test against the references; reports."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from harness.acquire.releases import cache_root
from harness.cli.common import (
    OK,
    USAGE,
    Commands,
    UsageError,
    add_expectations,
    add_impl,
    add_jobs,
    add_no_cache,
    add_no_timing,
    add_paths,
    add_profile,
    add_reference,
    add_report,
    add_run_control,
    add_run_timeout,
    add_runtime_options,
    add_select,
    add_timeout,
    exit_code,
    impl_specs,
    load_selected,
    maxfail,
    reference_specs,
    select,
    writing,
)
from harness.cli.impl_options import add_impl_env, corpus_options, expectations_of
from harness.cli.terminal import Progress, cached_text, print_results, reports_line
from harness.core import stopping
from harness.core.model import RunReport, Scenario, ScenarioError, Status
from harness.core.plural import counted
from harness.core.reference import ReferenceSpec
from harness.report.explained import name_rules
from harness.report.merge import merge_rerun
from harness.report.writers import write_reports
from harness.run.corpus import not_run, run_corpus
from harness.tools.keep import keep_run
from harness.tools.releases.shard import Shard


def last_failed(report_dir: str | None) -> set[str]:
    """The ids of the cases that failed in the previous report in `--report DIR` (for --lf)."""
    if not report_dir:
        raise UsageError("--lf reads the previous run's report: give --report DIR (the directory it wrote)")
    path = Path(report_dir) / "report.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UsageError(f"--lf: no previous report at {path}") from None
    except OSError as error:
        raise UsageError(f"--lf: cannot read {path} ({error.strerror or error})") from None
    except ValueError as error:
        raise UsageError(f"--lf: {path} is not a report ({error})") from None
    try:
        return {r["case"] for r in data.get("results", []) if Status(r["status"]).failing}
    except (AttributeError, KeyError, TypeError, ValueError) as bad:  # JSON, but not a report's results
        raise UsageError(f"--lf: {path} is not a report ({type(bad).__name__}: {bad})") from None


def keep_directory(text: str) -> Path:
    """`--keep DIR`: a new or empty directory (checked before anything runs: nothing kept is ever mixed)."""
    directory = Path(text)
    if directory.exists() and (not directory.is_dir() or any(directory.iterdir())):
        raise UsageError(
            f"--keep {text}: {'not a directory' if not directory.is_dir() else 'not empty'}; "
            "give a new or empty directory"
        )
    return directory


def cmd_run(args: argparse.Namespace) -> int:
    stopping.deadline(getattr(args, "run_timeout", None))  # --run-timeout counts from here
    with stopping.cooperative():  # from here a signal ends the run with a partial report (harness.core.stopping)
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    specs = apply_runtime(reference_specs(args), args)  # every reference checked before a case loads
    args.impls = impl_specs(args)
    args.loaded_expectations = expectations_of(args, args.impls)
    try:
        shard = Shard.parse(args.shard) if args.shard else None
    except ValueError as bad:  # the message shows the form to use
        raise UsageError(str(bad)) from None
    rerun = last_failed(args.report) if args.last_failed else None
    keep = keep_directory(args.keep) if args.keep else None
    everything, load_errors = load_selected(args.paths, None)
    chosen_files = any(path.is_file() for path in args.paths)
    if not chosen_files:  # a corpus, not chosen files: stale entries are errors
        for expectations in args.loaded_expectations:
            load_errors += expectations.check_corpus(everything)
    for error in load_errors:
        print(f"error: {error}", file=sys.stderr)
    scenarios = _selected(select(everything, args.k), rerun, shard, args.k, bool(load_errors))
    if isinstance(scenarios, int):
        return scenarios  # nothing to run: the exit code
    report, seconds = run_cases(scenarios, specs, load_errors, args, shard)
    if problem := name_rules(report, scenarios):
        print(f"error: {problem}", file=sys.stderr)
    if not args.k and rerun is None and not shard and not chosen_files:
        for expectations in args.loaded_expectations:  # a broad entry is stale when it explained nothing
            for stale in expectations.explaining_nothing(everything, report.results):
                report.load_errors.append(stale)
                print(f"error: {stale}", file=sys.stderr)
    _print_run(report, seconds, args)
    if keep is not None:
        kept = keep_run(keep, scenarios, report.results, cache_root())
        print(f"kept: {counted(kept, 'case')} (repositories, both sides' outputs) in {keep} (docs/keep.md)")
    if args.report:
        _write(report, args.report, rerun is not None)
    if stopping.requested():
        return stopping.exit_code()  # 130 (SIGINT) or 143 (SIGTERM, --run-timeout): the report is partial
    if shard and not scenarios and not load_errors:
        return OK  # an empty shard has nothing to fail
    return exit_code(report.ok)


def _selected(
    scenarios: list[Scenario], rerun: set[str] | None, shard: Shard | None, keyword: str | None, load_errors: bool
) -> list[Scenario] | int:
    """The cases `--lf` and `--shard` leave of those selected, or the exit code when there is nothing to run."""
    if rerun is not None:
        scenarios = [s for s in scenarios if s.id in rerun]
        print(f"--lf: {counted(len(scenarios), 'case')} failed in the previous report", file=sys.stderr)
        if not scenarios and not load_errors:
            print("nothing failed last time: nothing to rerun", file=sys.stderr)
            return OK
    if not scenarios and not load_errors:
        print(f"no scenarios selected{f' by -k {keyword}' if keyword else ''}", file=sys.stderr)
        return USAGE
    if shard:
        selected = len(scenarios)
        scenarios = shard.select(scenarios)
        print(f"shard {shard}: {len(scenarios)} of {selected} selected cases", file=sys.stderr)
    return scenarios


def _print_run(report: RunReport, seconds: float, args: argparse.Namespace) -> None:
    print_results(report, verbose=args.verbose, durations=args.durations)
    results = report.results
    summary = ", ".join(f"{n} {status}" for status, n in report.counts.items() if n) + cached_text(results)
    print(f"{counted(len(results), 'result')}: {summary} in {seconds:.1f} s")


def _write(report: RunReport, directory_text: str, rerun: bool) -> None:
    """The report files in `--report DIR`; a `--lf` re-run merged into the report it re-ran."""
    written = merge_rerun(Path(directory_text), report) if rerun else report
    with writing(directory_text, "--report") as directory:
        paths = write_reports(written, directory)
    results = report.results
    merged = f" ({counted(len(results), 'result')} re-run, the other {len(written.results) - len(results)} kept)"
    print(reports_line(paths) + (merged if rerun else ""))


def run_cases(
    scenarios: list[Scenario],
    specs: list[ReferenceSpec],
    load_errors: list[ScenarioError],
    args: argparse.Namespace,
    shard: Shard | None,
) -> tuple[RunReport, float]:
    """Run with progress, -x/--maxfail; the report with its `run` metadata, and the wall seconds."""
    impls = getattr(args, "impls", None) or impl_specs(args)
    cases_per_run = len(impls) * sum(1 if s.runs_port_alone else len(specs) for s in scenarios)
    progress = Progress(cases_per_run, maxfail=maxfail(args), failures=len(load_errors))  # a load error counts
    started = time.perf_counter()
    options = corpus_options(
        args,
        specs,
        scenarios,
        impls,
        getattr(args, "loaded_expectations", []),
        profile_override=args.profile,
        shard=str(shard) if shard else None,
        progress=progress,
        stop=progress.stop,
    )
    report = run_corpus(scenarios, options, load_errors)
    progress.finish()
    seconds = time.perf_counter() - started
    if progress.stop():
        failing = progress.failures - len(load_errors)
        loading = f"{counted(len(load_errors), 'load error')} and " if load_errors else ""
        ran = "" if report.results else ": no case ran"
        print(f"stopped after {loading}{counted(failing, 'failing result')} (-x/--maxfail){ran}", file=sys.stderr)
    if (stop := stopping.reason()) is not None:
        print(
            f"interrupted ({stop.why}): {counted(len(report.results), 'result')} kept, "
            f"{counted(not_run(report), 'case')} not run",
            file=sys.stderr,
        )
    return report, seconds


def apply_runtime(specs: list[ReferenceSpec], args: argparse.Namespace) -> list[ReferenceSpec]:
    """`--runtime`/`--locale` apply to every reference that names no runtime of its own."""
    runtime, locale = getattr(args, "runtime", None), getattr(args, "locale", None)
    if not runtime and not locale:
        return specs
    try:
        return [s if s.is_variant else s.with_runtime(runtime or s.runtime, locale) for s in specs]
    except ValueError as error:  # the Letta server has no runtime variants
        raise UsageError(f"--runtime/--locale: {error}") from None


def register(commands: Commands) -> None:
    run = commands.add_parser("run", help="run scenarios: the implementations under test against the references")
    add_paths(run)
    add_reference(run, many=True)
    add_impl(run, many=True)
    add_impl_env(run)
    add_expectations(run)
    add_profile(run)
    add_report(run)
    add_select(run)
    add_jobs(run)
    run.add_argument(
        "--keep",
        metavar="DIR",
        help="keep each case's repository and both sides' outputs, passing "
        "results included, in DIR (new or empty; layout: docs/keep.md)",
    )
    run.add_argument("--shard", help="run only shard K of N (K/N; split by a hash of the case id, docs/scale.md)")
    add_timeout(run)
    add_run_timeout(run)
    add_no_timing(run)
    add_no_cache(run)
    add_runtime_options(run)
    add_run_control(run)
    run.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="list every failing result and every rule it breaks (default: the rules, most explaining "
        "first, and each result only when at most 10 fail)",
    )
    run.set_defaults(func=cmd_run)
