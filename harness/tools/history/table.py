"""The history table of an upstream repository: the corpus once per distinct compiler module along
the first-parent history (harness.tools.history.scan), every commit where the module changed with
the cases whose reference output changed there, and where between those points the lifecycle cases
changed (LocalBackend changes on its own).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from harness.acquire.revision_build import build_revision
from harness.acquire.revision_source import BuildError
from harness.core.model import Scenario
from harness.run.by_reference import ComputedOnce
from harness.tools.history.revision_corpus import CorpusRun, git_spec, run_references
from harness.tools.history.scan import ScanRow, first_release_with
from harness.tools.releases.drift import changes


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
    specs, gits = [], {}
    for commit in first_commit.values():
        spec, found_gits = git_spec(repo, commit)
        specs.append(spec)
        gits.update(found_gits)
    # one session, a column per module: the port's side (which the table never reads) is made once, not per module
    by_label = run_references(specs, gits, scenarios, timeout=timeout, jobs=os.cpu_count() or 1)
    runs = {module: by_label[spec.label] for module, spec in zip(first_commit, specs, strict=True)}
    if runs:
        seconds = next(iter(runs.values())).seconds
        print(f"  corpus against {len(runs)} modules: {seconds:.1f} s", file=sys.stderr)
    found: list[Change] = []
    previous: ScanRow | None = None
    for row in rows:
        if previous is not None and row.module != previous.module:
            change = Change(
                row.commit,
                row.date,
                row.subject,
                row.version,
                first_release_with(repo, row.commit),
                previous.module,
                row.module,
                previous.pragma,
                row.pragma,
            )
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
    sides = ComputedOnce()  # the port's side of each probe, run once for every commit (the table reads none)
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
                run = run_references([spec], gits, [by_id[c] for c in cases], timeout=timeout, sides=sides)[spec.label]
                keys[commit] = run.keys
            return keys[commit]

        def key(position: int, case_id: str, at: list[str] = candidates) -> str:
            return keys_at(at[position])[case_id]

        changed_at = change_positions(len(candidates), cases, key)
        for position, ids in sorted(changed_at.items()):
            row = rows[index[candidates[position]]]
            located.append(
                LifecycleChange(
                    row.commit,
                    row.date,
                    row.subject,
                    row.version,
                    first_release_with(repo, row.commit),
                    sorted(ids),
                    change.commit,
                    len(candidates),
                    len(keys),
                )
            )
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
        out.append(
            f"| {c.commit[:9]} | {c.date[:10]} | {subject} | {c.version} | {c.first_release or '-'} | "
            f"{len(c.cases)} ({shown}) |"
        )
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
        what = "; ".join(
            f"{key}: {len(ids)} ({', '.join(ids[:3])}{', …' if len(ids) > 3 else ''})"
            for key, ids in sorted(change.cases.items())
        )
        if change.pragma_before != change.pragma_after:
            what = f"`// @bun` pragma {'added' if change.pragma_after else 'dropped'} (build entry); " + what
        subject = change.subject.replace("|", "\\|")
        out.append(
            f"| {change.commit[:9]} | {change.date[:10]} | {subject} | {change.version} | "
            f"{change.first_release or '-'} | {what} |"
        )
    quiet = [c for c in changes_found if not c.output_changing]
    if quiet:
        out += ["", "Module changes with no output change on the corpus:", ""]
        out += [f"- {c.commit[:9]} {c.date[:10]} {c.subject}" for c in quiet]
    return "\n".join(out) + "\n"
