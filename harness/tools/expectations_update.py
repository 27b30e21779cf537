"""`conformance expectations update`'s library: an implementation's expectations file rewritten from a report
(wptrunner's update-metadata).

Owns the update rule: every result of the implementation that differs (fail, known, or a stale one that
still differs in some field) is covered by an entry naming the case, its reference and the differing fields;
an existing entry keeps its kind, reason and link (its fields become what differs now, its references or
profiles lose those whose results all passed); an entry whose results all passed is dropped (stale), and so
is one whose case the corpus no longer has; a difference no entry covers gets a new entry of kind
`unexplained` whose reason says so and quotes the first difference, never an explanation. Results that say
nothing (error, not applicable, runtime drift) and entries the report has no result for are left as they
are. A difference the case itself records (its own `divergences`) is the case's, not the implementation's.
The file format and its writer are harness.expectations'.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from harness.expectations import (
    ANY,
    UNEXPLAINED,
    Expectation,
    Expectations,
    dump_expectations,
    entry_key,
    load_expectations,
    reference_spelling,
)
from harness.model import CaseResult, Scenario, Status
from harness.report.stored import full_entries, read_report
from harness.report.write import result_from_json
from harness.versions import release_key

SILENT = (Status.ERROR, Status.NOT_APPLICABLE, Status.RUNTIME)  # results that say nothing of what differs


class UpdateError(Exception):
    """The report and the file cannot be put together (which implementation?); the message says what to pass."""


@dataclass(frozen=True)
class Seen:
    """One result of the implementation: what differs (empty: it agreed), and the first difference in words."""

    case: str
    reference: str
    profile: str
    fields: tuple[str, ...]
    first: str = ""


@dataclass(frozen=True)
class Change:
    action: str  # added, kept, changed, dropped
    case: str
    scope: str  # the entry's references and profiles, as written
    detail: str = ""

    def line(self) -> str:
        return f"{self.action:<8} {self.case}  {self.scope}" + (f"  ({self.detail})" if self.detail else "")


@dataclass(frozen=True)
class Update:
    implementation: str
    text: str  # the new file
    changes: tuple[Change, ...]

    def count(self, action: str) -> int:
        return sum(change.action == action for change in self.changes)

    def summary(self) -> str:
        return ", ".join(f"{self.count(a)} {a}" for a in ("added", "kept", "changed", "dropped"))


def report_results(report: Path) -> list[tuple[CaseResult, dict[str, Any]]]:
    """Every result of a report.json (or its directory), read as merge-reports reads them, with its full entry
    (whose diffs say in words what differed: the values compared in a comparison view are in no outcome)."""
    _, data = read_report(report)
    return [(result_from_json(entry, data.get("outputs")), entry) for entry in full_entries(data)]


def choose_implementation(results: Iterable[CaseResult], given: str | None, existing: Expectations | None) -> str:
    """`--implementation`, else the file's, else the report's only one."""
    found = sorted({r.implementation for r in results})
    chosen = given or (existing.implementation if existing else None)
    if existing is not None and chosen != existing.implementation:
        raise UpdateError(
            f"{existing.path} is for {existing.implementation!r}, not {chosen!r}: write another file (--out)"
        )
    if chosen is None:
        if len(found) != 1:
            raise UpdateError(f"the report has results of {', '.join(found) or 'no implementation'}: "
                              "choose one with --implementation")  # fmt: skip
        return found[0]
    if chosen not in found:
        raise UpdateError(f"the report has no result of {chosen!r} (it has {', '.join(found) or 'none'})")
    return chosen


def seen_results(
    results: Iterable[tuple[CaseResult, dict[str, Any]]], implementation: str, corpus: dict[str, Scenario]
) -> list[Seen]:
    """What each result of `implementation` shows differing, less what its case records itself."""
    seen = []
    for result, entry in results:
        if result.implementation != implementation or result.status in SILENT:
            continue
        fields, first = _differing(result, entry)
        scenario = corpus.get(result.case_id)
        if scenario is not None:
            recorded = {f for d in scenario.divergences_for(result.reference) for f in d.fields}
            fields = tuple(f for f in fields if f not in recorded)
        seen.append(Seen(result.case_id, result.reference, result.profile, fields, first if fields else ""))
    return seen


def _differing(result: CaseResult, entry: dict[str, Any]) -> tuple[tuple[str, ...], str]:
    """The fields (or, for a lifecycle case, observations) that differ, in the order compared, and the first
    in words (the report's own `difference` of it, verdict.diff.field_diff_json)."""
    if result.turns:
        pairs = [(row.get("step", ""), d) for row in result.turns for d in row.get("diffs", [])]
        names = tuple(dict.fromkeys(d["observation"] for _, d in pairs))
        if not pairs:
            return (), ""
        step, diff = pairs[0]
        reference, implementation = diff.get("reference"), diff.get("python")
        return names, f"{step} {diff['observation']}: reference {reference!r}, implementation {implementation!r}"
    names = tuple(dict.fromkeys(d.field for d in result.diffs))
    if not result.diffs:
        return (), ""
    diff = entry["diffs"][0]
    return names, f"{diff['field']} at byte {diff['offset']}: {diff['difference']}"


def _scope(entry: Expectation) -> str:
    parts = [f"references {', '.join(entry.references)}"] if entry.references else []
    parts += [f"profiles {', '.join(entry.profiles)}"] if entry.profiles else []
    return "; ".join(parts)


def _narrowed(entry: Expectation, matched: list[Seen]) -> Expectation:
    """The entry without the references (else the profiles) whose results all passed."""
    differing = [s for s in matched if s.fields]
    if len(differing) == len(matched):
        return entry
    if entry.references:
        keep_labels = {s.reference for s in differing}
        passed = {s.reference for s in matched} - keep_labels
        if ANY in entry.labels:
            labels = sorted(keep_labels, key=release_key)
            return replace(entry, references=tuple(reference_spelling(label) for label in labels))
        kept = tuple(text for text, label in zip(entry.references, entry.labels, strict=True) if label not in passed)
        return replace(entry, references=kept)
    keep_profiles = {s.profile for s in differing}
    passed = {s.profile for s in matched} - keep_profiles
    if ANY in entry.profiles:
        return replace(entry, profiles=tuple(sorted(keep_profiles)))
    return replace(entry, profiles=tuple(p for p in entry.profiles if p not in passed))


def _fields(matched: list[Seen]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(name for s in matched for name in s.fields))


def updated(
    existing: Iterable[Expectation], seen: list[Seen], corpus: dict[str, Scenario] | None, implementation: str
) -> tuple[list[Expectation], list[Change]]:
    """The entries after the update, and what changed (see the module's docstring for the rule)."""
    entries: list[Expectation] = []
    changes: list[Change] = []
    covered: set[Seen] = set()
    for entry in existing:
        matched = [s for s in seen if s.case == entry.case and entry.applies(s.reference, s.profile)]
        if corpus is not None and entry.case not in corpus:
            changes.append(Change("dropped", entry.case, _scope(entry), "the corpus has no such case"))
            continue
        if not matched:
            entries.append(entry)
            changes.append(Change("kept", entry.case, _scope(entry), "no result in the report"))
            continue
        if not any(s.fields for s in matched):
            passed = ", ".join(sorted({s.reference for s in matched}, key=release_key))
            changes.append(Change("dropped", entry.case, _scope(entry), f"stale: no longer differs against {passed}"))
            continue
        covered.update(matched)
        now = replace(_narrowed(entry, matched), fields=_fields(matched))
        entries.append(now)
        what = []
        if now.fields != entry.fields:
            what.append(f"fields {', '.join(entry.fields)} -> {', '.join(now.fields)}")
        if (now.references, now.profiles) != (entry.references, entry.profiles):
            what.append(f"was {_scope(entry)}")
        changes.append(Change("changed" if what else "kept", entry.case, _scope(now), "; ".join(what)))
    for new in _new_entries([s for s in seen if s.fields and s not in covered], entries, implementation):
        entries.append(new)
        changes.append(Change("added", new.case, _scope(new), f"{UNEXPLAINED}: {', '.join(new.fields)}"))
    return sorted(entries, key=entry_key), changes


def _new_entries(uncovered: list[Seen], kept: list[Expectation], implementation: str) -> list[Expectation]:
    """One `unexplained` entry per case and differing fields, naming every reference it differs from."""
    groups: dict[tuple[str, tuple[str, ...]], list[Seen]] = {}
    for s in sorted(uncovered, key=lambda s: (s.case, release_key(s.reference), s.profile)):
        groups.setdefault((s.case, s.fields), []).append(s)
    made = []
    for (case, fields), members in sorted(groups.items()):
        labels = list(dict.fromkeys(s.reference for s in members))
        first = members[0]
        reason = (f"not explained yet: {implementation} differs from {first.reference} here and nobody has said why "
                  f"(written by `conformance expectations update`); first difference: {first.first}")  # fmt: skip
        entry = Expectation(case, fields, UNEXPLAINED, reason, tuple(reference_spelling(label) for label in labels))
        others = [e for e in kept if e.case == case]
        if any(_overlaps(entry, other) for other in others):  # a kept entry names these references for other profiles
            entry = replace(entry, profiles=tuple(dict.fromkeys(s.profile for s in members)))
        made.append(entry)
    return made


def _overlaps(one: Expectation, other: Expectation) -> bool:
    def meet(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
        return not a or not b or ANY in a or ANY in b or bool(set(a) & set(b))

    return meet(one.labels, other.labels) and meet(one.profiles, other.profiles)


def update_expectations(
    report: Path, out: Path, implementation: str | None = None, corpus: list[Scenario] | None = None
) -> Update:
    """The new text of `out` from `report` (nothing is written; the caller writes `Update.text`).

    `corpus`: the loaded cases, to drop entries of removed cases and leave out what a case records itself."""
    existing = load_expectations(out) if out.exists() else None
    results = report_results(report)
    chosen = choose_implementation((result for result, _ in results), implementation, existing)
    by_id = {scenario.id: scenario for scenario in corpus} if corpus is not None else None
    seen = seen_results(results, chosen, by_id or {})
    entries, changes = updated(existing.entries if existing else (), seen, by_id, chosen)
    text = dump_expectations(chosen, entries, existing.description if existing else None)
    return Update(chosen, text, tuple(changes))
