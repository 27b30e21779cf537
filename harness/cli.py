"""`conformance`: run the corpus, diff one repository, list cases."""

from __future__ import annotations

import argparse
import os
import signal
import sys
from pathlib import Path

from memfs_prompt.cli import DEFAULT_AGENT_ID, DEFAULT_CONVERSATION_ID, DEFAULT_SYSTEM, parse_now

from . import fuzz, reduce, snapshot
from .compare import render_field_diff
from .merge import MergeError, merge_reports
from .releases import ReferenceSpec, load_manifest
from .report import RunReport, write_reports
from .run import FAILING, CaseResult, Session, judge
from .runners.base import CompileRequest
from .scenario import Scenario, load_scenarios
from .shard import Shard

DEFAULT_CASES = Path("cases")


def default_reference() -> str:
    return f"npm:{load_manifest()['default']}"


def select(scenarios: list[Scenario], expression: str | None) -> list[Scenario]:
    """`-k`: keep cases whose id or a tag contains any of the comma-separated words."""
    if not expression:
        return scenarios
    words = [w.strip() for w in expression.split(",") if w.strip()]
    return [s for s in scenarios if any(w in s.id or w in s.tags for w in words)]


class Progress:
    """`[done/total] failures` on a terminal; silent otherwise."""

    def __init__(self, total: int, stream=sys.stderr) -> None:  # type: ignore[no-untyped-def]
        self.total, self.done, self.failures, self.stream = total, 0, 0, stream
        self.enabled = stream.isatty()

    def __call__(self, result: CaseResult) -> None:
        self.done += 1
        if result.status in FAILING:
            self.failures += 1
        if self.enabled:
            self.stream.write(f"\r[{self.done}/{self.total}] failures: {self.failures}  {result.case_id[:40]:<40}")
            self.stream.flush()

    def finish(self) -> None:
        if self.enabled:
            self.stream.write("\n")


def cmd_run(args: argparse.Namespace) -> int:
    loaded = load_scenarios(args.paths or [DEFAULT_CASES])
    for error in loaded.errors:
        print(f"error: {error}", file=sys.stderr)
    scenarios = select(loaded.scenarios, args.k)
    if not scenarios and not loaded.errors:
        print("no scenarios selected", file=sys.stderr)
        return 2
    shard = Shard.parse(args.shard) if args.shard else None
    if shard:
        selected = len(scenarios)
        scenarios = shard.select(scenarios)
        print(f"shard {shard}: {len(scenarios)} of {selected} selected cases", file=sys.stderr)
    specs = apply_runtime([ReferenceSpec.parse(r) for r in (args.reference or [default_reference()])], args)
    cases_per_run = sum(1 if s.expect or s.raw.get("golden") else len(specs) for s in scenarios)
    progress = Progress(cases_per_run)
    with Session(specs, profile_override=args.profile, timeout=args.timeout, jobs=args.jobs) as session:
        results = session.run(scenarios, progress)
        progress.finish()
        references = session.describe_references()
    report = RunReport(results, references, loaded.errors, ["conformance", *sys.argv[1:]], timing=not args.no_timing)
    for result in results:
        if result.status in FAILING:
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
    if shard and not scenarios and not loaded.errors:
        return 0  # an empty shard has nothing to fail
    return 0 if report.ok else 1


def apply_runtime(specs: list[ReferenceSpec], args: argparse.Namespace) -> list[ReferenceSpec]:
    """`--runtime`/`--locale` apply to every reference that names no runtime of its own."""
    runtime, locale = getattr(args, "runtime", None), getattr(args, "locale", None)
    if not runtime and not locale:
        return specs
    return [s if s.is_variant else s.with_runtime(runtime or s.runtime, locale) for s in specs]


def add_runtime_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--runtime", choices=("bun", "node"), help="run the references under bun (default) or node; "
        "a node reference is judged against the same release under bun, and where they differ the case is "
        "runtime-divergence, not a port failure",
    )  # fmt: skip
    parser.add_argument("--locale", help="LANG/LC_ALL for the reference process (node follows it; bun does not)")


def cmd_merge_reports(args: argparse.Namespace) -> int:
    try:
        report = merge_reports(args.reports, ["conformance", *sys.argv[1:]])
    except MergeError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    paths = write_reports(report, Path(args.out))
    summary = ", ".join(f"{n} {status}" for status, n in report.counts.items() if n)
    print(f"{len(report.results)} results from {len(args.reports)} reports: {summary}")
    print(f"reports: {paths['html']} {paths['json']} {paths['junit']}")
    return 0 if report.ok else 1


def jobs_count(text: str) -> int:
    """`-j N` (N >= 1) or `-j auto` (one per core)."""
    if text == "auto":
        return os.cpu_count() or 1
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("-j takes a number of at least 1, or auto")
    return value


def cmd_diff_repo(args: argparse.Namespace) -> int:
    memory_dir = Path(args.memory_dir).resolve()
    request = CompileRequest(
        memory_dir=memory_dir,
        system=args.system,
        agent_id=args.agent_id,
        conversation_id=args.conversation_id,
        now=args.now,
        previous_message_count=args.previous_message_count,
        include_memfs=not args.no_memfs,
    )
    try:
        parse_now(args.now)
    except ValueError:
        print(f"--now {args.now!r} is not ISO 8601", file=sys.stderr)
        return 2
    spec = ReferenceSpec.parse(args.reference or default_reference())
    with Session([spec], profile_override=args.profile) as session:
        session.start()
        ref = session.references[0]
        ref_outcome = ref.runner.compile(request)
        port_outcome = session.port(ref.profile).compile(request)
    scenario = Scenario("diff-repo", "an existing repository", memory_dir, (), {}, {})
    status, diffs, reasons = judge(scenario, ref.label, ref_outcome, port_outcome)
    if status == "error":
        print(f"could not run: {'; '.join(reasons)}", file=sys.stderr)
        if ref_outcome.stderr:
            print(ref_outcome.stderr, file=sys.stderr)
        return 2
    if not diffs:
        print(f"identical: Python port ({ref.profile.name}) and letta-code {ref.label} on {memory_dir}")
        return 0
    print(f"different: Python port ({ref.profile.name}) vs letta-code {ref.label} on {memory_dir}")
    for diff in diffs:
        print(render_field_diff(diff))
    return 1


def cmd_list(args: argparse.Namespace) -> int:
    loaded = load_scenarios(args.paths or [DEFAULT_CASES])
    for scenario in select(loaded.scenarios, args.k):
        print(f"{scenario.id}\t{scenario.kind}\t{','.join(scenario.tags)}\t{scenario.pins or scenario.description}")
    for error in loaded.errors:
        print(f"error: {error}", file=sys.stderr)
    return 1 if loaded.errors else 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="conformance", description="Differential conformance harness for letta-code's memory compiler."
    )
    commands = parser.add_subparsers(dest="command", required=True)

    run = commands.add_parser("run", help="run scenarios against the Python port and references")
    run.add_argument("paths", nargs="*", type=Path, help="scenario files or directories (default: cases/)")
    run.add_argument(
        "--reference",
        action="append",
        help="npm:VERSION, bundle:PATH or checkout:PATH (repeatable; default: the pinned default)",
    )
    run.add_argument("--profile", help="Python profile to compare with (default: the one matching each reference)")
    run.add_argument("--report", help="directory for index.html, report.json and junit.xml")
    run.add_argument("-k", help="only cases whose id or tags contain one of these comma-separated words")
    run.add_argument(
        "-j",
        "--jobs",
        type=jobs_count,
        default=1,
        help="cases at a time, each with its own references (N or auto)",
    )
    run.add_argument("--shard", help="run only shard K of N (K/N; split by a hash of the case id, docs/scale.md)")
    run.add_argument("--timeout", type=float, default=60.0, help="seconds a reference may take per request")
    run.add_argument(
        "--no-timing", action="store_true", help="leave timings out of report.json (byte-identical reruns)"
    )
    add_runtime_options(run)
    run.set_defaults(func=cmd_run)

    diff = commands.add_parser("diff-repo", help="compare the Python port and a reference on an existing repository")
    diff.add_argument("memory_dir")
    diff.add_argument("--reference")
    diff.add_argument("--profile")
    diff.add_argument("--system", default=DEFAULT_SYSTEM)
    diff.add_argument("--agent-id", default=DEFAULT_AGENT_ID)
    diff.add_argument("--conversation-id", default=DEFAULT_CONVERSATION_ID)
    diff.add_argument("--now", default="2026-01-02T03:04:05.678Z")
    diff.add_argument("--previous-message-count", type=int, default=0)
    diff.add_argument("--no-memfs", action="store_true", help="includeMemfs: false")
    diff.set_defaults(func=cmd_diff_repo)

    merge = commands.add_parser("merge-reports", help="merge shard reports (run --shard K/N) into one report")
    merge.add_argument("reports", nargs="+", type=Path, help="report directories (or their report.json)")
    merge.add_argument("--out", required=True, help="directory for the merged index.html, report.json and junit.xml")
    merge.set_defaults(func=cmd_merge_reports)

    lister = commands.add_parser("list", help="list scenarios")
    lister.add_argument("paths", nargs="*", type=Path)
    lister.add_argument("-k")
    lister.set_defaults(func=cmd_list)

    for module in (snapshot, reduce, fuzz):
        module.register(commands)

    from .bisect import add_parser as add_bisect
    from .matrix import add_parsers as add_matrix

    add_matrix(commands)
    add_bisect(commands)
    return parser


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt  # SIGTERM cleans up as Ctrl-C does: reference processes, staging directories


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        return int(args.func(args))
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except (KeyError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except OSError as error:  # e.g. the report directory is not writable, or the disk is full
        print(f"error: {error}", file=sys.stderr)
        return 2
    finally:
        signal.signal(signal.SIGTERM, previous)


if __name__ == "__main__":
    sys.exit(main())
