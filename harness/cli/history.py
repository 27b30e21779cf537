"""`conformance history`, `history-scan`, `revision-run`, `revision-equal`, `upstream-head` and `bisect --git`:
upstream's own history, built from source (harness.tools.history).

- `history --git PATH --from A --to B`: the table of output-changing commits (harness.tools.history.table).
- `history-scan --git PATH --from A --to B`: every first-parent commit's compiler module, grouped by hash.
- `bisect CASE --git PATH --from A --to B` (cli.bisect calls `cmd_bisect`): the first commit where a case's
  reference output changes.
- `revision-run --git PATH --rev REV`: the corpus against a revision, judged with its profile (the rule in
  harness.runners.git_reference); what `conformance run --reference git:PATH@REV` will do.
- `revision-equal --git PATH --rev REV --release npm:X`: a revision and a pinned release, case by case.
- `upstream-head --git PATH`: the weekly gate on upstream's HEAD beside the newest pinned release.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path

from harness.acquire.releases import cache_root
from harness.acquire.revision_build import build_revision
from harness.acquire.revision_source import BuildError, git
from harness.cli.common import (
    FAILED,
    OK,
    Commands,
    UsageError,
    add_jobs,
    add_no_cache,
    add_select,
    add_timeout,
    case_paths,
    exit_code,
    writing,
)
from harness.core.reference import ReferenceSpec, default_reference
from harness.run.corpus import RunOptions, run_corpus
from harness.runners.git_reference import GitReference, UnknownRevisionProfile, profile_of
from harness.tools.history.revision_corpus import (
    bisect_commits,
    head_gate,
    is_lifecycle,
    load_cases,
    run_references,
    runner_factory,
)
from harness.tools.history.scan import Commit, ScanRow, first_parent_commits, scan
from harness.tools.history.table import (
    LifecycleChange,
    history_table,
    lifecycle_markdown,
    locate_lifecycle_changes,
    table_markdown,
)
from harness.tools.releases.bisect import BisectError


def _scan_progress(total: int) -> Callable[[int, ScanRow], None]:
    def report(index: int, row: ScanRow) -> None:
        if sys.stderr.isatty() or (index + 1) % 100 == 0 or index + 1 == total:
            print(f"\r  scanned {index + 1}/{total}", end="" if sys.stderr.isatty() else "\n", file=sys.stderr)

    return report


def _commits(repo: Path, start: str, end: str) -> list[Commit]:
    """first_parent_commits, a repository or range git cannot give being the command line's UsageError."""
    try:
        return first_parent_commits(repo, start, end)
    except (ValueError, BuildError) as error:  # not a clone, a revision it lacks, --to not after --from
        raise UsageError(f"--git {repo}: {error}") from None


def _release(text: str) -> ReferenceSpec:
    try:
        return ReferenceSpec.parse(text)
    except ValueError as error:
        raise UsageError(str(error)) from None


def cmd_history(args: argparse.Namespace) -> int:
    started = time.perf_counter()
    repo = Path(args.git).expanduser().resolve()
    commits = _commits(repo, args.start, args.end)
    rows = scan(repo, commits, exhaustive=args.exhaustive, progress=_scan_progress(len(commits)))
    scanned = time.perf_counter() - started
    print(f"scan: {len(commits)} commits in {scanned:.1f} s", file=sys.stderr)
    scenarios = load_cases(case_paths(args.paths or []), args.k)
    found, runs = history_table(repo, rows, scenarios, timeout=args.timeout)
    seconds = time.perf_counter() - started
    command = (
        "conformance history --git " + " ".join(sys.argv[sys.argv.index("--git") + 1 :])
        if "--git" in sys.argv
        else "conformance history"
    )
    located: list[LifecycleChange] = []
    if any(is_lifecycle(s) for s in scenarios):
        located = locate_lifecycle_changes(repo, rows, found, scenarios, timeout=args.timeout)
        seconds = time.perf_counter() - started
        for change in found:  # the table of compiler-module changes keeps only what they change themselves
            change.cases.pop("lifecycle", None)
    text = table_markdown(found, rows, seconds, command)
    if located:
        text += "\nWhere the lifecycle cases change (bisected between the compiler-module change points):\n\n"
        text += lifecycle_markdown(located)
    print(text)
    if args.out:
        with writing(args.out, "--out") as out:
            out.mkdir(parents=True, exist_ok=True)
            (out / "history.md").write_text(text, encoding="utf-8")
            data = {
                "repo": str(repo),
                "from": args.start,
                "to": args.end,
                "seconds": round(seconds, 1),
                "scan_seconds": round(scanned, 1),
                "rows": [asdict(r) for r in rows],
                "changes": [{**asdict(c), "output_changing": c.output_changing} for c in found],
                "lifecycle_changes": [asdict(c) for c in located],
                "corpus_seconds": round(next(iter(runs.values())).seconds, 1) if runs else 0.0,  # one run, every module
                "errors": {m: r.errors for m, r in runs.items() if r.errors},
            }
            (out / "history.json").write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    return 0


def cmd_scan(args: argparse.Namespace) -> int:
    started = time.perf_counter()
    repo = Path(args.git).expanduser().resolve()
    commits = _commits(repo, args.start, args.end)
    rows = scan(repo, commits, exhaustive=args.exhaustive, progress=_scan_progress(len(commits)))
    previous = None
    for row in rows:
        if row.module != previous:
            state = row.module[:12] if row.module else f"build failed: {(row.error or '')[:100]}"
            print(f"{row.commit[:10]} {row.date[:10]} {row.version} {state} {row.subject[:70]}")
        previous = row.module
    distinct = len({r.module for r in rows if r.module})
    print(
        f"{len(rows)} commits, {sum(r.built for r in rows)} built, {distinct} distinct modules, "
        f"{time.perf_counter() - started:.1f} s"
    )
    return 0


def cmd_bisect(args: argparse.Namespace) -> int:
    scenarios = [s for s in load_cases(case_paths(args.paths or [])) if s.id == args.case]
    if not scenarios:
        raise UsageError(f"no case with id {args.case!r}")
    started = time.perf_counter()
    try:
        result = bisect_commits(
            Path(args.git), scenarios[0], args.start, args.end, timeout=args.timeout, fields=tuple(args.field or ())
        )
    except (ValueError, BisectError, BuildError) as error:
        raise UsageError(str(error)) from None
    seconds = time.perf_counter() - started
    print(
        f"{len(result.candidates)} candidates, tested {len(result.tested)}: {', '.join(c[:10] for c in result.tested)}"
    )
    if result.first_changed is None:
        print(f"{args.case}: the reference output is the same at both ends ({seconds:.1f} s)")
        return FAILED
    repo = Path(args.git).expanduser().resolve()
    subject = git(repo, "log", "-1", "--format=%h %aI %s", result.first_changed).decode().strip()
    print(
        f"{args.case}: first changed at {subject} (after {result.last_same[:10]}): {', '.join(result.what)} "
        f"({seconds:.1f} s)"
    )
    return OK


def cmd_equal(args: argparse.Namespace) -> int:
    """The corpus against `git:PATH@REV` and a pinned release: do the references' own outputs agree?"""
    started = time.perf_counter()
    reference = GitReference(Path(args.git).expanduser().resolve(), args.rev)
    spec = reference.spec()
    npm = _release(args.release)
    scenarios = load_cases(case_paths(args.paths or []), args.k)
    runs = run_references([npm, spec], {spec.value: reference}, scenarios, timeout=args.timeout)
    built, released = runs[spec.label], runs[npm.label]
    same = [c for c in built.keys if c in released.keys and built.keys[c] == released.keys[c]]
    differ = sorted(set(built.keys) ^ set(released.keys) | {c for c in built.keys if c not in same})
    errors = sorted(set(built.errors) | set(released.errors))
    seconds = time.perf_counter() - started
    print(
        f"git:{args.git}@{args.rev} vs {npm.cli}: {len(same)} of {len(set(built.keys) | set(released.keys))} "
        f"cases equal, {len(differ)} differ, {len(errors)} errors ({seconds:.1f} s)"
    )
    for case_id in differ[:20]:
        print(f"  differs: {case_id}")
    for case_id in errors[:5]:
        print(f"  error: {case_id}: {(built.errors.get(case_id) or released.errors.get(case_id) or '')[:300]}")
    return exit_code(not differ and not errors)


def cmd_run(args: argparse.Namespace) -> int:
    """The corpus against `git:PATH@REV`, judged with the revision's profile (the rule in
    harness.runners.git_reference): what `conformance run --reference git:PATH@REV` will do."""
    started = time.perf_counter()
    reference = GitReference.parse(f"git:{args.git}@{args.rev}")
    try:
        profile, _commit, _version = profile_of(reference, args.profile)
        build = build_revision(reference.repo, reference.rev)
    except (UnknownRevisionProfile, BuildError) as error:
        raise UsageError(str(error)) from None
    built = time.perf_counter() - started
    scenarios = load_cases(case_paths(args.paths or []), args.k)
    cache = cache_root()
    lifecycle = any(is_lifecycle(s) for s in scenarios)
    spec = reference.spec()
    factory = runner_factory({spec.value: reference}, cache / "home", cache / "repos", args.timeout, lifecycle)
    options = RunOptions([spec], profile_override=profile, timeout=args.timeout, runner_factory=factory, jobs=args.jobs)
    results = run_corpus(scenarios, options).results
    counts: dict[str, int] = {}
    for result in results:
        counts[result.status] = counts.get(result.status, 0) + 1
    seconds = time.perf_counter() - started
    print(
        f"{reference.label} = {build.commit[:12]} (letta-code {build.version}, profile {profile}, "
        f"compiler module {build.module_key[:12]}, built in {built:.1f} s): "
        f"{', '.join(f'{n} {s}' for s, n in sorted(counts.items()))} ({seconds:.1f} s)"
    )
    for result in results:
        if result.failed:
            print(f"  {result.status}: {result.case_id}: {'; '.join(result.reasons)[:200]}")
    return exit_code(not any(r.failed for r in results))


def cmd_head(args: argparse.Namespace) -> int:
    """The weekly gate on upstream's HEAD: fail when HEAD's output differs from the newest release's
    (behaviour the port, which follows releases, does not follow yet) or when HEAD could not be built."""
    started = time.perf_counter()
    repo = Path(args.git).expanduser().resolve()
    release = _release(args.release or default_reference())
    try:
        build = build_revision(repo, args.rev, lifecycle=True)
    except BuildError as error:
        print(f"FAIL: upstream {args.rev} does not build: {error}")
        return FAILED
    scenarios = load_cases(case_paths(args.paths or []), args.k)
    groups, errors, _head, _released = head_gate(repo, args.rev, release, scenarios, timeout=args.timeout)
    seconds = time.perf_counter() - started
    lines = [f"# Upstream {args.rev} ({build.commit[:12]}, version {build.version}) against {release.cli}", ""]
    for key, ids in sorted(groups.items()):
        lines.append(f"- **{key}** in {len(ids)} case(s): {', '.join(ids[:12])}{', …' if len(ids) > 12 else ''}")
    if errors:
        lines.append(f"- could not run: {', '.join(errors[:12])}")
    changed = sorted({c for ids in groups.values() for c in ids})
    verdict = "ok" if not changed and not errors else "FAIL"
    lines += ["", f"{verdict}: {len(changed)} case(s) changed, {len(errors)} error(s) ({seconds:.0f} s)."]
    if changed:
        lines.append(
            "Upstream's HEAD changed behaviour the port does not follow yet: add or update cases that pin each "
            "change (`explains`), and a profile for it when it is released."
        )
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        with writing(args.out, "--out") as out:
            out.mkdir(parents=True, exist_ok=True)
            (out / "upstream-head.md").write_text(text, encoding="utf-8")
    return exit_code(verdict == "ok")


def add_cases(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--cases", dest="paths", action="append", type=Path, help="scenario file or directory")


def add_revision_range(parser: argparse.ArgumentParser) -> None:
    """--git, --from, --to, --timeout and --cases: what every command over a range of upstream commits takes."""
    parser.add_argument("--git", required=True, help="a local clone of letta-code (read only; nothing is written)")
    parser.add_argument("--from", dest="start", required=True, help="first commit (any commit-ish)")
    parser.add_argument("--to", dest="end", default="HEAD", help="last commit (default HEAD)")
    add_timeout(parser)
    add_cases(parser)


def add_revision(parser: argparse.ArgumentParser) -> None:
    """--git and --rev: one upstream revision, and the --timeout, -k and --cases of its corpus run."""
    parser.add_argument("--git", required=True, help="a local clone of letta-code (read only; nothing is written)")
    parser.add_argument("--rev", default="HEAD", help="the revision (any commit-ish; default HEAD)")
    add_timeout(parser)
    add_select(parser)
    add_cases(parser)


def register(commands: Commands) -> None:
    """The history commands of `conformance`; `conformance bisect --git` calls cmd_bisect here."""
    history = commands.add_parser("history", help="the table of output-changing commits of an upstream clone")
    add_revision_range(history)
    history.add_argument("--exhaustive", action="store_true", help="build every commit (no input fingerprints)")
    add_select(history)
    history.add_argument("--out", help="directory for history.md and history.json")
    add_no_cache(history)
    history.set_defaults(func=cmd_history)
    scan_parser = commands.add_parser("history-scan", help="build every first-parent commit's compiler module")
    add_revision_range(scan_parser)
    scan_parser.add_argument("--exhaustive", action="store_true", help="build every commit (no input fingerprints)")
    scan_parser.set_defaults(func=cmd_scan)
    run = commands.add_parser("revision-run", help="the corpus against an upstream revision, judged with its profile")
    add_revision(run)
    run.add_argument("--profile", help="override the profile the revision's version maps to")
    add_jobs(run)
    run.set_defaults(func=cmd_run)
    equal = commands.add_parser("revision-equal", help="the corpus against a revision and a release: equal outputs?")
    add_revision(equal)
    equal.add_argument("--release", required=True, help="pinned release: npm:X, pypi:X or a bare version")
    equal.set_defaults(func=cmd_equal)
    head = commands.add_parser("upstream-head", help="gate: upstream's HEAD against the newest pinned release")
    add_revision(head)
    head.add_argument("--release", help="pinned release to compare with (default: the default reference)")
    head.add_argument("--out", help="directory for upstream-head.md")
    add_no_cache(head)
    head.set_defaults(func=cmd_head)
