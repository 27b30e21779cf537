"""Upstream's history as references: the history table, commit bisect, and corpus equality.

- `scan`: every first-parent commit from A to B, each commit's compiler module built from source
  (harness.revision_build) and identified by its sha256. A commit whose build inputs (the source
  files bun read for the previous build, with the names beside them, plus tsconfig.json, build.js
  and the release build entry) carry the same blobs as the previous commit's has the same module
  and is not built again; `--exhaustive` builds every commit.
- `history`: the scan, then the corpus once per distinct module, then the table of
  output-changing commits: where the module changed and at least one case's reference output
  changed with it (commit, date, subject, what changed in which cases, the first release tag that
  contains the commit). A module change with no output change is listed separately.
- `bisect`: the first first-parent commit from A to B where one case's reference output changes,
  building each candidate's module (well under a second from the incremental source tree).
- `equal`: the corpus against a revision and a release side by side, case by case, comparing
  only the two references' own outputs (the port is not involved).

Runnable now as `python -m harness.history {scan,history,bisect,equal}`; the same functions back
`conformance history` and `conformance bisect --git` once wired into the CLI.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .bisect import BisectError, first_change, output_key
from .drift import changes
from .releases import ReferenceSpec, cache_root, ensure_bun
from .revision_build import (
    BuildError,
    RevisionBuild,
    SourceTree,
    build_in_tree,
    build_revision,
    cached_build,
    git,
    list_tree,
    repository_tree,
    resolve_commit,
)
from .revision_reference import GitReference, UnknownRevisionProfile, profile_of, runner_factory
from .run import Session
from .runners.base import Outcome
from .scenario import Scenario, load_scenarios

DEFAULT_PROFILE = "letta-code@0.32.14"  # only the references' outputs are compared; the port's profile is moot


@dataclass
class Commit:
    commit: str
    date: str
    subject: str


def first_parent_commits(repo: Path, start: str, end: str = "HEAD") -> list[Commit]:
    """`start`, then every first-parent commit after it up to `end`, oldest first."""
    first = resolve_commit(repo, start)
    last = resolve_commit(repo, end)
    fmt = "--format=%H%x1f%aI%x1f%s"
    head = git(repo, "log", "-1", fmt, first).decode("utf-8", "replace").strip()
    rest = git(repo, "log", "--first-parent", "--reverse", fmt, f"{first}..{last}").decode("utf-8", "replace")
    rows = [Commit(*line.split("\x1f", 2)) for line in [head, *rest.splitlines()] if line]
    if rows[-1].commit != last:
        raise ValueError(f"{end} is not a first-parent descendant of {start}")
    return rows


@dataclass
class ScanRow:
    commit: str
    date: str
    subject: str
    version: str | None
    module: str | None  # compiler module sha256; None when the build failed
    error: str | None = None
    built: bool = True  # False: same build inputs as the previous commit, module reused
    pragma: bool | None = None
    release_entry: str | None = None


def _fingerprint(tree_entries: dict[str, Any], build: RevisionBuild) -> tuple[Any, ...]:
    """What a commit's module depends on: the blobs bun read, the names next to them (a new file
    can change how an import resolves), tsconfig.json, build.js and the release entry."""
    paths = set(build.compiler.inputs) | {"tsconfig.json", "build.js", "bunfig.toml"}
    if build.release_entry:
        paths.add(build.release_entry)
    dirs = {str(Path(p).parent) for p in build.compiler.inputs}
    neighbours = sorted(p for p in tree_entries if str(Path(p).parent) in dirs)
    blobs = tuple((p, tree_entries[p].blob if p in tree_entries else None) for p in sorted(paths))
    return blobs, tuple(neighbours)


def scan(
    repo: Path,
    commits: list[Commit],
    *,
    exhaustive: bool = False,
    progress: Callable[[int, ScanRow], None] | None = None,
) -> list[ScanRow]:
    """Build (or reuse) every commit's compiler module; one row per commit, in order."""
    repo = repo.expanduser().resolve()
    bun = ensure_bun()
    rows: list[ScanRow] = []
    previous: tuple[tuple[Any, ...], RevisionBuild] | None = None
    with repository_tree(repo) as tree:
        for index, item in enumerate(commits):
            entries = list_tree(repo, item.commit)
            row: ScanRow
            if not exhaustive and previous is not None and _fingerprint(entries, previous[1]) == previous[0]:
                build = previous[1]
                version = _version_at(repo, item.commit)
                row = ScanRow(item.commit, item.date, item.subject, version, build.module_key, None, False,
                              build.pragma, build.release_entry)  # fmt: skip
            else:
                try:
                    build = _cached_or_built(tree, item.commit, bun)
                except BuildError as error:
                    rows.append(ScanRow(item.commit, item.date, item.subject, _version_at(repo, item.commit), None,
                                        str(error)))  # fmt: skip
                    previous = None
                    if progress:
                        progress(index, rows[-1])
                    continue
                previous = (_fingerprint(entries, build), build)
                row = ScanRow(item.commit, item.date, item.subject, build.version, build.module_key, None, True,
                              build.pragma, build.release_entry)  # fmt: skip
            rows.append(row)
            if progress:
                progress(index, row)
    return rows


def _cached_or_built(tree: SourceTree, commit: str, bun: Path) -> RevisionBuild:
    found = cached_build(commit)
    return found if found is not None else build_in_tree(tree, commit, bun)


def _version_at(repo: Path, commit: str) -> str | None:
    try:
        return json.loads(git(repo, "show", f"{commit}:package.json")).get("version")
    except (BuildError, ValueError):
        return None


def first_release_with(repo: Path, commit: str) -> str | None:
    """The oldest release tag (`v*`, by version) whose history holds `commit`."""
    tags = git(repo, "tag", "--contains", commit, "--list", "v[0-9]*").decode().split()
    releases = [t for t in tags if "-" not in t]  # not prereleases (v0.7.4-next.1)

    def key(tag: str) -> tuple[int, ...]:
        return tuple(int(part) if part.isdigit() else -1 for part in tag.removeprefix("v").split("."))

    return min(releases, key=key).removeprefix("v") if releases else None


def load_cases(paths: list[Path] | None, only: str | None = None) -> list[Scenario]:
    loaded = load_scenarios(paths or [Path("cases")])
    for error in loaded.errors:
        print(f"error: {error}", file=sys.stderr)
    scenarios = [s for s in loaded.scenarios if not (s.expect or s.raw.get("golden"))]  # reference-run cases only
    if only:
        words = [w for w in only.split(",") if w]
        scenarios = [s for s in scenarios if any(w in s.id or w in s.tags for w in words)]
    return scenarios


def _is_lifecycle(scenario: Scenario) -> bool:
    return "lifecycle" in scenario.path.parts or bool(scenario.raw.get("steps"))


def case_key(outcome: Outcome | None, turns: list[dict[str, Any]]) -> str:
    """A case's reference output as one comparable string (a lifecycle case: every step's observation)."""
    if turns:
        return json.dumps([row.get("reference") for row in turns], sort_keys=True)
    if outcome is None:
        return "<none>"
    if outcome.status == "error":
        return "error: " + (outcome.error or "")
    return output_key(outcome)


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
) -> dict[str, CorpusRun]:
    """Run the corpus against references (npm/bundle specs and git references) in one session; each
    reference's own outputs by case."""
    lifecycle = any(_is_lifecycle(s) for s in scenarios)
    started = time.perf_counter()
    cache = cache_root()  # Session's own home and ceiling
    factory = runner_factory(gits, cache / "home", cache / "repos", timeout, lifecycle)
    session = Session(specs, profile_override=DEFAULT_PROFILE, timeout=timeout, runner_factory=factory, jobs=jobs)
    with session:
        results = session.run(scenarios)
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


# --- the history table ---------------------------------------------------------------------------


@dataclass
class Change:
    commit: str
    date: str
    subject: str
    version: str | None
    first_release: str | None
    module_before: str | None
    module_after: str | None
    pragma_before: bool | None
    pragma_after: bool | None
    cases: dict[str, list[str]] = field(default_factory=dict)  # change key -> case ids

    @property
    def output_changing(self) -> bool:
        return bool(self.cases)


def history_table(
    repo: Path, rows: list[ScanRow], scenarios: list[Scenario], *, timeout: float = 60.0
) -> tuple[list[Change], dict[str, CorpusRun]]:
    """Run the corpus once per distinct module; every commit where the module changes, with the cases
    whose reference output changed there."""
    first_commit: dict[str, str] = {}
    for row in rows:
        if row.module and row.module not in first_commit:
            first_commit[row.module] = row.commit
    runs: dict[str, CorpusRun] = {}
    for module, commit in first_commit.items():
        spec, gits = git_spec(repo, commit)
        runs[module] = run_references([spec], gits, scenarios, timeout=timeout)[spec.label]
        print(f"  corpus against {commit[:10]} (module {module[:12]}): {runs[module].seconds:.1f} s", file=sys.stderr)
    found: list[Change] = []
    previous: ScanRow | None = None
    for row in rows:
        if previous is not None and row.module != previous.module:
            change = Change(row.commit, row.date, row.subject, row.version, first_release_with(repo, row.commit),
                            previous.module, row.module, previous.pragma, row.pragma)  # fmt: skip
            if row.module and previous.module:
                before, after = runs[previous.module], runs[row.module]
                for case_id in sorted(set(before.keys) | set(after.keys)):
                    if before.keys.get(case_id) == after.keys.get(case_id):
                        continue
                    if case_id in before.outcomes and case_id in after.outcomes:
                        keys = changes(before.outcomes[case_id], after.outcomes[case_id]) or ["output"]
                    else:
                        keys = ["lifecycle"]
                    for key in keys:
                        change.cases.setdefault(key, []).append(case_id)
            else:
                change.cases.setdefault("build " + ("fails" if not row.module else "works again"), []).append("*")
            found.append(change)
        previous = row
    return found, runs


@dataclass
class LifecycleChange:
    commit: str
    date: str
    subject: str
    version: str | None
    first_release: str | None
    cases: list[str]
    attributed_to: str  # the compiler-module change point whose range held it
    candidates: int
    tested: int


def change_positions(count: int, cases: list[str], key: Callable[[int, str], str]) -> dict[int, list[str]]:
    """Where along `count` candidates each case's output changes: from a stretch's start, a binary
    search for the first candidate whose key differs from it, then again from there while the last
    candidate's key still differs. A change undone within one stretch is not seen."""
    changed_at: dict[int, list[str]] = {}
    last = count - 1
    for case_id in cases:
        low = 0
        while key(low, case_id) != key(last, case_id):
            start_key, lo, high = key(low, case_id), low, last
            while high - lo > 1:
                middle = (lo + high) // 2
                if key(middle, case_id) == start_key:
                    lo = middle
                else:
                    high = middle
            changed_at.setdefault(high, []).append(case_id)
            low = high
    return changed_at


def locate_lifecycle_changes(
    repo: Path, rows: list[ScanRow], found: list[Change], scenarios: list[Scenario], *, timeout: float = 60.0
) -> list[LifecycleChange]:
    """The compiler-module scan sees the lifecycle cases change only at its own change points; the
    LocalBackend module can change anywhere between them. For each change point whose lifecycle cases
    changed, bisect the commits since the previous change point (lifecycle module built at each,
    every lifecycle case of the change run once per commit) until each changed case has the commit
    where it changed: from the range's start, the first commit whose output differs, then again from
    there while the output at the range's end still differs. A change undone within the same
    stretch is not seen."""
    by_id = {s.id: s for s in scenarios}
    index = {row.commit: i for i, row in enumerate(rows)}
    points = [rows[0].commit] + [c.commit for c in found]
    located: list[LifecycleChange] = []
    for change in found:
        cases = [c for c in change.cases.get("lifecycle", []) if c in by_id]
        if not cases:
            continue
        start = points[points.index(change.commit) - 1]
        candidates = [r.commit for r in rows[index[start] : index[change.commit] + 1]]
        keys: dict[str, dict[str, str]] = {}

        def keys_at(commit: str, cases: list[str] = cases, keys: dict[str, dict[str, str]] = keys) -> dict[str, str]:
            if commit not in keys:
                try:
                    build_revision(repo, commit, lifecycle=True)
                except BuildError as error:  # the lifecycle cases cannot run there: a state of its own
                    keys[commit] = {c: f"error: {error}" for c in cases}
                    return keys[commit]
                spec, gits = git_spec(repo, commit)
                run = run_references([spec], gits, [by_id[c] for c in cases], timeout=timeout)[spec.label]
                keys[commit] = run.keys
            return keys[commit]

        def key(position: int, case_id: str, at: list[str] = candidates) -> str:
            return keys_at(at[position])[case_id]

        changed_at = change_positions(len(candidates), cases, key)
        for position, ids in sorted(changed_at.items()):
            row = rows[index[candidates[position]]]
            located.append(
                LifecycleChange(row.commit, row.date, row.subject, row.version, first_release_with(repo, row.commit),
                                sorted(ids), change.commit, len(candidates), len(keys))
            )  # fmt: skip
    located.sort(key=lambda c: index[c.commit])
    return located


def lifecycle_markdown(located: list[LifecycleChange]) -> str:
    out = [
        "| commit | date | subject | version | first release with it | lifecycle cases that change |",
        "|---|---|---|---|---|---|",
    ]
    for c in located:
        shown = ", ".join(c.cases[:4]) + (", …" if len(c.cases) > 4 else "")
        subject = c.subject.replace("|", "\\|")
        out.append(f"| {c.commit[:9]} | {c.date[:10]} | {subject} | {c.version} | {c.first_release or '-'} | "
                   f"{len(c.cases)} ({shown}) |")  # fmt: skip
    return "\n".join(out) + "\n"


def table_markdown(changes_found: list[Change], rows: list[ScanRow], seconds: float, command: str) -> str:
    distinct = len({r.module for r in rows if r.module})
    built = sum(1 for r in rows if r.built and r.module)
    failed = sum(1 for r in rows if r.module is None)
    out = [
        f"`{command}`: {len(rows)} first-parent commits, {built} built, {failed} failed to build, "
        f"{distinct} distinct compiler modules, {sum(c.output_changing for c in changes_found)} output-changing "
        f"commits ({seconds:.0f} s).",
        "",
        "| commit | date | subject | version | first release with it | what changes (cases) |",
        "|---|---|---|---|---|---|",
    ]
    for change in changes_found:
        if not change.output_changing:
            continue
        what = "; ".join(f"{key}: {len(ids)} ({', '.join(ids[:3])}{', …' if len(ids) > 3 else ''})"
                         for key, ids in sorted(change.cases.items()))  # fmt: skip
        if change.pragma_before != change.pragma_after:
            what = f"`// @bun` pragma {'added' if change.pragma_after else 'dropped'} (build entry); " + what
        subject = change.subject.replace("|", "\\|")
        out.append(f"| {change.commit[:9]} | {change.date[:10]} | {subject} | {change.version} | "
                   f"{change.first_release or '-'} | {what} |")  # fmt: skip
    quiet = [c for c in changes_found if not c.output_changing]
    if quiet:
        out += ["", "Module changes with no output change on the corpus:", ""]
        out += [f"- {c.commit[:9]} {c.date[:10]} {c.subject}" for c in quiet]
    return "\n".join(out) + "\n"


# --- commit bisect -------------------------------------------------------------------------------


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


# --- command line --------------------------------------------------------------------------------


def _scan_progress(total: int) -> Callable[[int, ScanRow], None]:
    def report(index: int, row: ScanRow) -> None:
        if sys.stderr.isatty() or (index + 1) % 100 == 0 or index + 1 == total:
            print(f"\r  scanned {index + 1}/{total}", end="" if sys.stderr.isatty() else "\n", file=sys.stderr)

    return report


def cmd_history(args: argparse.Namespace) -> int:
    started = time.perf_counter()
    repo = Path(args.git).expanduser().resolve()
    commits = first_parent_commits(repo, args.start, args.end)
    rows = scan(repo, commits, exhaustive=args.exhaustive, progress=_scan_progress(len(commits)))
    scanned = time.perf_counter() - started
    print(f"scan: {len(commits)} commits in {scanned:.1f} s", file=sys.stderr)
    scenarios = load_cases(args.paths, args.k)
    found, runs = history_table(repo, rows, scenarios, timeout=args.timeout)
    seconds = time.perf_counter() - started
    command = "conformance history --git " + " ".join(sys.argv[sys.argv.index("--git") + 1 :]) if "--git" in sys.argv \
        else "conformance history"  # fmt: skip
    located: list[LifecycleChange] = []
    if any(_is_lifecycle(s) for s in scenarios):
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
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "history.md").write_text(text, encoding="utf-8")
        data = {
            "repo": str(repo), "from": args.start, "to": args.end, "seconds": round(seconds, 1),
            "scan_seconds": round(scanned, 1), "rows": [asdict(r) for r in rows],
            "changes": [{**asdict(c), "output_changing": c.output_changing} for c in found],
            "lifecycle_changes": [asdict(c) for c in located],
            "corpus_seconds": {m: round(r.seconds, 1) for m, r in runs.items()},
            "errors": {m: r.errors for m, r in runs.items() if r.errors},
        }  # fmt: skip
        (out / "history.json").write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    return 0


def cmd_scan(args: argparse.Namespace) -> int:
    started = time.perf_counter()
    repo = Path(args.git).expanduser().resolve()
    commits = first_parent_commits(repo, args.start, args.end)
    rows = scan(repo, commits, exhaustive=args.exhaustive, progress=_scan_progress(len(commits)))
    previous = None
    for row in rows:
        if row.module != previous:
            state = row.module[:12] if row.module else f"build failed: {(row.error or '')[:100]}"
            print(f"{row.commit[:10]} {row.date[:10]} {row.version} {state} {row.subject[:70]}")
        previous = row.module
    distinct = len({r.module for r in rows if r.module})
    print(f"{len(rows)} commits, {sum(r.built for r in rows)} built, {distinct} distinct modules, "
          f"{time.perf_counter() - started:.1f} s")  # fmt: skip
    return 0


def cmd_bisect(args: argparse.Namespace) -> int:
    scenarios = [s for s in load_cases(args.paths) if s.id == args.case]
    if not scenarios:
        print(f"error: no case with id {args.case!r}", file=sys.stderr)
        return 2
    started = time.perf_counter()
    try:
        result = bisect_commits(Path(args.git), scenarios[0], args.start, args.end, timeout=args.timeout,
                                fields=tuple(args.field or ()))  # fmt: skip
    except (ValueError, BisectError, BuildError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    seconds = time.perf_counter() - started
    print(
        f"{len(result.candidates)} candidates, tested {len(result.tested)}: {', '.join(c[:10] for c in result.tested)}"
    )
    if result.first_changed is None:
        print(f"{args.case}: the reference output is the same at both ends ({seconds:.1f} s)")
        return 1
    repo = Path(args.git).expanduser().resolve()
    subject = git(repo, "log", "-1", "--format=%h %aI %s", result.first_changed).decode().strip()
    print(f"{args.case}: first changed at {subject} (after {result.last_same[:10]}): {', '.join(result.what)} "
          f"({seconds:.1f} s)")  # fmt: skip
    return 0


def cmd_equal(args: argparse.Namespace) -> int:
    """The corpus against `git:PATH@REV` and `npm:VERSION`: do the references' own outputs agree?"""
    started = time.perf_counter()
    reference = GitReference(Path(args.git).expanduser().resolve(), args.rev)
    spec = reference.spec()
    npm = ReferenceSpec("npm", args.npm)
    scenarios = load_cases(args.paths, args.k)
    runs = run_references([npm, spec], {spec.value: reference}, scenarios, timeout=args.timeout)
    built, released = runs[spec.label], runs[npm.label]
    same = [c for c in built.keys if c in released.keys and built.keys[c] == released.keys[c]]
    differ = sorted(set(built.keys) ^ set(released.keys) | {c for c in built.keys if c not in same})
    errors = sorted(set(built.errors) | set(released.errors))
    seconds = time.perf_counter() - started
    print(f"git:{args.git}@{args.rev} vs npm:{args.npm}: {len(same)} of {len(set(built.keys) | set(released.keys))} "
          f"cases equal, {len(differ)} differ, {len(errors)} errors ({seconds:.1f} s)")  # fmt: skip
    for case_id in differ[:20]:
        print(f"  differs: {case_id}")
    for case_id in errors[:5]:
        print(f"  error: {case_id}: {(built.errors.get(case_id) or released.errors.get(case_id) or '')[:300]}")
    return 0 if not differ and not errors else 1


def cmd_run(args: argparse.Namespace) -> int:
    """The corpus against `git:PATH@REV`, judged with the revision's profile (the rule in
    harness.revision_reference): what `conformance run --reference git:PATH@REV` will do."""
    started = time.perf_counter()
    reference = GitReference.parse(f"git:{args.git}@{args.rev}")
    try:
        profile, build = profile_of(reference, args.profile)
    except (UnknownRevisionProfile, BuildError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    built = time.perf_counter() - started
    scenarios = load_cases(args.paths, args.k)
    cache = cache_root()
    lifecycle = any(_is_lifecycle(s) for s in scenarios)
    spec = reference.spec()
    factory = runner_factory({spec.value: reference}, cache / "home", cache / "repos", args.timeout, lifecycle)
    with Session([spec], profile_override=profile.name, timeout=args.timeout, runner_factory=factory,
                 jobs=args.jobs) as session:  # fmt: skip
        results = session.run(scenarios)
    counts: dict[str, int] = {}
    for result in results:
        counts[result.status] = counts.get(result.status, 0) + 1
    seconds = time.perf_counter() - started
    print(f"{reference.label} = {build.commit[:12]} (letta-code {build.version}, profile {profile.name}, "
          f"compiler module {build.module_key[:12]}, built in {built:.1f} s): "
          f"{', '.join(f'{n} {s}' for s, n in sorted(counts.items()))} ({seconds:.1f} s)")  # fmt: skip
    for result in results:
        if result.failed:
            print(f"  {result.status}: {result.case_id}: {'; '.join(result.reasons)[:200]}")
    return 0 if not any(r.failed for r in results) else 1


def head_gate(
    repo: Path, rev: str, release: str, scenarios: list[Scenario], *, timeout: float = 60.0
) -> tuple[dict[str, list[str]], list[str], CorpusRun, CorpusRun]:
    """Upstream's HEAD beside the newest pinned release: the cases whose reference output differs
    (grouped by what changed, as drift does) and the cases that could not run."""
    reference = GitReference(repo, rev)
    spec, npm = reference.spec(), ReferenceSpec("npm", release)
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


def cmd_head(args: argparse.Namespace) -> int:
    """The weekly gate on upstream's HEAD: fail when HEAD's output differs from the newest release's
    (behaviour the port, which follows releases, does not follow yet) or when HEAD could not be built."""
    from .releases import load_manifest

    started = time.perf_counter()
    repo = Path(args.git).expanduser().resolve()
    release = args.release or load_manifest()["default"]
    try:
        build = build_revision(repo, args.rev, lifecycle=True)
    except BuildError as error:
        print(f"FAIL: upstream {args.rev} does not build: {error}")
        return 1
    scenarios = load_cases(args.paths, args.k)
    groups, errors, _head, _released = head_gate(repo, args.rev, release, scenarios, timeout=args.timeout)
    seconds = time.perf_counter() - started
    lines = [f"# Upstream {args.rev} ({build.commit[:12]}, version {build.version}) against npm {release}", ""]
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
        Path(args.out).mkdir(parents=True, exist_ok=True)
        (Path(args.out) / "upstream-head.md").write_text(text, encoding="utf-8")
    return 0 if verdict == "ok" else 1


def add_arguments(parser: argparse.ArgumentParser, bisect: bool = False) -> None:
    parser.add_argument("--git", required=True, help="a local clone of letta-code (read only; nothing is written)")
    parser.add_argument("--from", dest="start", required=True, help="first commit (any commit-ish)")
    parser.add_argument("--to", dest="end", default="HEAD", help="last commit (default HEAD)")
    parser.add_argument("--timeout", type=float, default=60.0)
    parser.add_argument("--cases", dest="paths", action="append", type=Path, help="scenario file or directory")


def main(argv: Iterable[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m harness.history", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    history = commands.add_parser("history", help="the table of output-changing commits")
    add_arguments(history)
    history.add_argument("--exhaustive", action="store_true", help="build every commit (no input fingerprints)")
    history.add_argument("-k", help="only cases whose id or tags contain one of these words")
    history.add_argument("--out", help="directory for history.md and history.json")
    history.set_defaults(func=cmd_history)
    scan_parser = commands.add_parser("scan", help="build every first-parent commit's compiler module")
    add_arguments(scan_parser)
    scan_parser.add_argument("--exhaustive", action="store_true")
    scan_parser.set_defaults(func=cmd_scan)
    bisect = commands.add_parser("bisect", help="the first commit where a case's reference output changes")
    bisect.add_argument("case")
    add_arguments(bisect)
    bisect.add_argument("--field", action="append", help="only a change of this field counts (repeatable)")
    bisect.set_defaults(func=cmd_bisect)
    run = commands.add_parser("run", help="the corpus against a revision, judged with its profile")
    run.add_argument("--git", required=True)
    run.add_argument("--rev", default="HEAD")
    run.add_argument("--profile", help="override the profile the revision's version maps to")
    run.add_argument("--timeout", type=float, default=60.0)
    run.add_argument("-j", "--jobs", type=int, default=1)
    run.add_argument("-k")
    run.add_argument("--cases", dest="paths", action="append", type=Path)
    run.set_defaults(func=cmd_run)
    head = commands.add_parser("head", help="gate: upstream's HEAD against the newest pinned release")
    head.add_argument("--git", required=True)
    head.add_argument("--rev", default="HEAD")
    head.add_argument("--release", help="pinned release to compare with (default: the manifest's default)")
    head.add_argument("--timeout", type=float, default=60.0)
    head.add_argument("-k")
    head.add_argument("--cases", dest="paths", action="append", type=Path)
    head.add_argument("--out", help="directory for upstream-head.md")
    head.set_defaults(func=cmd_head)
    equal = commands.add_parser("equal", help="the corpus against a revision and a release: equal outputs?")
    equal.add_argument("--git", required=True)
    equal.add_argument("--rev", default="HEAD")
    equal.add_argument("--npm", required=True, help="pinned release version")
    equal.add_argument("--timeout", type=float, default=60.0)
    equal.add_argument("-k")
    equal.add_argument("--cases", dest="paths", action="append", type=Path)
    equal.set_defaults(func=cmd_equal)
    args = parser.parse_args(list(argv) if argv is not None else None)
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
