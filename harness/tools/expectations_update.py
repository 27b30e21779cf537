"""`conformance expectations update`'s library: an implementation's expectations file rewritten from a report
(wptrunner's update-metadata).

Owns the update rule: every result of the implementation that differs (fail, known, or a stale one that
still differs in some field) is covered by an entry naming the case, its reference and the differing fields;
an existing entry keeps its kind, reason and link (its fields become what differs now, its references or
profiles lose those whose results all passed); an entry whose results all passed is dropped (stale), and so
is one whose case the corpus no longer has; a difference no entry covers gets a new entry of kind
`unexplained` whose reason says so and quotes the first difference, never an explanation. An error of the
implementation (it crashed, exited, hung or answered an error; the reference ran) is recorded the same way, as an
entry with `error: true`, and an error entry whose results all ran is dropped. A broad entry (a rule, a tag, a
case glob) covers the fields it lists in every case it names; it is dropped when none of them differs any more.
Results that say nothing of the implementation (not applicable, runtime drift, an error of the reference or the
harness) are left out, and `Update.left_out` says how many and why; entries the report has no result for are
kept. A difference the case itself records (its own `divergences`) is the case's, not the implementation's.
The file format and its writer are harness.run.expectations'.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from harness.core.model import CaseResult, Scenario, Status
from harness.core.reference import release_key
from harness.report.stored import full_entries, read_report
from harness.report.write import result_from_json
from harness.run.expectations import (
    ANY,
    UNEXPLAINED,
    Expectation,
    Expectations,
    load_expectations,
    reference_spelling,
)
from harness.run.expectations_write import dump_expectations, entry_key

SILENT = (Status.NOT_APPLICABLE, Status.RUNTIME)  # results that say nothing of what differs
WHY_LEFT_OUT = {
    Status.NOT_APPLICABLE: "not applicable: the implementation was not asked, or does not serve the case",
    Status.RUNTIME: "runtime drift: the reference itself differs from its bun baseline",
    Status.ERROR: "an error of the reference or the harness, not of the implementation: rerun once it runs",
}


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
    error: str | None = None  # the implementation failed here (its error), so nothing was compared


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
    left_out: dict[str, int] = field(default_factory=dict)  # why -> how many results of the implementation

    def left_out_lines(self) -> list[str]:
        """What the update did not record, and why (never silently)."""
        return [f"left out {count} result{'s' if count != 1 else ''}: {why}" for why, count in self.left_out.items()]

    def count(self, action: str) -> int:
        return sum(change.action == action for change in self.changes)

    def summary(self) -> str:
        return ", ".join(f"{self.count(a)} {a}" for a in ("added", "kept", "changed", "dropped"))


def report_results(report: Path) -> list[tuple[CaseResult, dict[str, Any]]]:
    """Every result of a report.json (or its directory), read as merge-reports reads them, with its full entry
    (whose diffs say in words what differed: the values compared in a comparison view are in no outcome)."""
    _, data = read_report(report)
    return [(result_from_json(entry, data.get("outputs")), entry) for entry in full_entries(data)]


def choose_implementation(
    results: Iterable[CaseResult], given: str | None, existing: Expectations | None, said: dict[str, str] | None = None
) -> str:
    """`--implementation`, else the file's (its `implementation`, else the implementation whose hello gave its
    `name`: `said`, label -> name, from the report's run), else the report's only one."""
    found = sorted({r.implementation for r in results})
    by_name = [label for label, name in (said or {}).items() if existing and name == existing.name]
    own = existing.implementation if existing and existing.implementation in found else None
    own = own or (by_name[0] if by_name else existing.implementation if existing else None)
    chosen = given or own
    if existing is not None and chosen != own:
        raise UpdateError(f"{existing.path} is for {existing.names}, not {chosen!r}: write another file (--out)")
    if chosen is None:
        if len(found) != 1:
            raise UpdateError(
                f"the report has results of {', '.join(found) or 'no implementation'}: choose one with --implementation"
            )
        return found[0]
    if chosen not in found:
        raise UpdateError(f"the report has no result of {chosen!r} (it has {', '.join(found) or 'none'})")
    return chosen


def seen_results(
    results: Iterable[tuple[CaseResult, dict[str, Any]]],
    implementation: str,
    corpus: dict[str, Scenario],
    left_out: Counter[str] | None = None,
) -> list[Seen]:
    """What each result of `implementation` shows differing, less what its case records itself, or the error it
    met; `left_out` counts the results that say nothing of it, by why."""
    seen = []
    for result, entry in results:
        if result.implementation != implementation:
            continue
        failed = result.impl_outcome is not None and result.impl_outcome.status == "error"
        if result.status in SILENT or (result.status == Status.ERROR and not failed):
            if left_out is not None:
                left_out[WHY_LEFT_OUT[result.status]] += 1
            continue
        if failed and result.impl_outcome is not None:
            seen.append(
                Seen(result.case_id, result.reference, result.profile, (), error=str(result.impl_outcome.error))
            )
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
    ran, failed = _broad([e for e in existing if e.broad], seen, corpus, entries, changes)
    covered: set[Seen] = set()
    for entry in (e for e in existing if not e.broad):
        pool = failed if entry.error is not None else ran
        matched = [s for s in pool if s.case == entry.case and entry.applies(s.reference, s.profile)]
        if corpus is not None and entry.case not in corpus:
            changes.append(Change("dropped", entry.case, _scope(entry), "the corpus has no such case"))
            continue
        if entry.error is not None:
            hits = [s for s in matched if s.error is not None and entry.error in s.error]
            ran_now = [s for s in ran if s.case == entry.case and entry.applies(s.reference, s.profile)]
            if hits or not ran_now:
                covered.update(hits)
                entries.append(entry)
                changes.append(Change("kept", entry.case, _scope(entry), "" if hits else "no result in the report"))
            else:
                changes.append(Change("dropped", entry.case, _scope(entry), "stale: the implementation runs here now"))
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
    uncovered = [s for s in ran if s.fields and s not in covered] + [s for s in failed if s not in covered]
    for new in _new_entries(uncovered, entries, implementation):
        entries.append(new)
        added = "error" if new.error is not None else ", ".join(new.fields)
        changes.append(Change("added", new.case, _scope(new), f"{UNEXPLAINED}: {added}"))
    return sorted(entries, key=entry_key), changes


def _broad(
    broad: list[Expectation],
    seen: list[Seen],
    corpus: dict[str, Scenario] | None,
    entries: list[Expectation],
    changes: list[Change],
) -> tuple[list[Seen], list[Seen]]:
    """Keep or drop the broad entries (rule, tag, case glob); the results that ran, less the fields kept broad
    entries cover, and the errors no kept broad entry expects."""
    cover: dict[Seen, set[str]] = {}
    expected: set[Seen] = set()
    for entry in broad:
        name = " ".join(entry.selector)
        if corpus is None:  # a rule or a tag needs the cases to match (`--cases`)
            entries.append(entry)
            changes.append(Change("kept", name, _scope(entry), "no corpus to match its cases against"))
            continue
        matched = [
            s
            for s in seen
            if s.case in corpus and entry.matches(corpus[s.case]) and entry.applies(s.reference, s.profile)
        ]
        if entry.error is not None:
            hits = [s for s in matched if s.error is not None and entry.error in s.error]
        else:
            hits = [
                s
                for s in matched
                if s.error is None and s.fields and (ANY in entry.fields or set(s.fields) & set(entry.fields))
            ]
        if not hits and matched:
            stale = f"stale: none of the {len(matched)} results it covers differs the way it says any more"
            changes.append(Change("dropped", name, _scope(entry), stale))
            continue
        entries.append(entry)
        changes.append(Change("kept", name, _scope(entry), f"covers {len(hits)} results" if hits else "no result"))
        for s in hits:
            cover.setdefault(s, set()).update(s.fields if ANY in entry.fields else entry.fields)
            if entry.error is not None:
                expected.add(s)
    ran = [
        replace(s, fields=tuple(f for f in s.fields if f not in cover.get(s, set()))) for s in seen if s.error is None
    ]
    return ran, [s for s in seen if s.error is not None and s not in expected]


def _new_entries(uncovered: list[Seen], kept: list[Expectation], implementation: str) -> list[Expectation]:
    """One `unexplained` entry per case and differing fields (or error), naming every reference it differs from."""
    groups: dict[tuple[str, tuple[str, ...], bool], list[Seen]] = {}
    for s in sorted(uncovered, key=lambda s: (s.case, release_key(s.reference), s.profile)):
        groups.setdefault((s.case, s.fields, s.error is not None), []).append(s)
    made = []
    for (case, fields, failed), members in sorted(groups.items()):
        labels = list(dict.fromkeys(s.reference for s in members))
        first = members[0]
        if failed:
            reason = (
                f"not explained yet: {implementation} fails here against {first.reference} and nobody has said "
                f"why (written by `conformance expectations update`); its error: {first.error}"
            )
        else:
            reason = (
                f"not explained yet: {implementation} differs from {first.reference} here and nobody has "
                "said why (written by `conformance expectations update`); first difference: "
                f"{first.first}"
            )
        entry = Expectation(
            case,
            fields,
            UNEXPLAINED,
            reason,
            tuple(reference_spelling(label) for label in labels),
            error="" if failed else None,
        )
        others = [e for e in kept if e.case == case and not e.broad]
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

    `corpus`: the loaded cases, to drop entries of removed cases, match broad entries (rule, tag, glob) and
    leave out what a case records itself."""
    existing = load_expectations(out) if out.exists() else None
    results = report_results(report)
    said = hello_names(report)
    chosen = choose_implementation((result for result, _ in results), implementation, existing, said)
    by_id = {scenario.id: scenario for scenario in corpus} if corpus is not None else None
    left_out: Counter[str] = Counter()
    seen = seen_results(results, chosen, by_id or {}, left_out)
    entries, changes = updated(existing.entries if existing else (), seen, by_id, chosen)
    own = existing.implementation if existing else chosen
    name = existing.name if existing else said.get(chosen)
    text = dump_expectations(own, entries, existing.description if existing else None, name)
    return Update(chosen, text, tuple(changes), dict(sorted(left_out.items())))


def hello_names(report: Path) -> dict[str, str]:
    """label -> the name each implementation of the report gave in hello (report.json's run.implementations)."""
    _, data = read_report(report)
    named = {}
    for entry in (data.get("run") or {}).get("implementations") or []:
        info = entry.get("info") if isinstance(entry, dict) else None
        if isinstance(info, dict) and isinstance(info.get("implementation"), str):
            named[entry["implementation"]] = info["implementation"]
    return named
