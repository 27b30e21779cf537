"""The conformance summary: per implementation under test, its results counted by tag family and by reference.

What test262.fyi shows an engine by feature, for letta's memory format. Owns three decisions, each made once:

- **Which family a tag belongs to** (`FAMILIES`): every tag of the vocabulary (harness/cases/tags.py) is in
  exactly one family (tests/test_summary.py checks both ways). A tag the table does not know (a report from
  another corpus) counts under `other`. A result counts once in each family one of its tags belongs to, however
  many of its tags that family holds; a result with no tag counts in no family (but in the totals).
- **Which column a status counts in** (`column_of`): `passed` (pass); `known` (known-divergence, and
  runtime-divergence: a node/locale variant whose upstream output differs from bun's, a difference explained
  and not failing, not the implementation's doing; junit skips both, pytest xfails both); `failing`
  (`Status.failing`: fail, stale-divergence, error); `not_applicable` (the implementation answered
  `unsupported`).
- **The pass percentage** (`pass_percent`): passed out of the applicable results (all but not-applicable),
  rounded down to one decimal, so 100% means every applicable result passed; None when none applies.

Golden results (reference `golden`: the implementation checked against expected bytes quoted from the spec)
are results of the implementation like any other: they count in its totals and families, and in the rows by
reference under `golden` of their own, after the real references. Every count is of results, one per
(case, reference): a case run against three references counts three times.

report.json holds the summary as `summary` (docs/report-format.md); index.html and `conformance run` show it.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from harness.core.model import DEFAULT_IMPLEMENTATION, CaseResult, Status, is_golden
from harness.core.reference import release_key
from harness.report.stored import full_entries

#: Tag family -> its tags, in the order the summary lists families. Every tag of harness/cases/tags.py is in
#: exactly one of them (tests/test_summary.py).
FAMILIES: dict[str, tuple[str, ...]] = {
    "layout": ("basic", "persona", "system-tree", "external-projection", "empty"),
    "frontmatter": ("frontmatter", "block-scalar"),
    "memfs-v2": ("memfs-v2", "memory-index"),
    "skills": ("skills", "available-skills"),
    "collation": ("collation", "icu-collation"),
    "quoting/names": ("quoting", "names"),
    "whitespace/trim": ("whitespace", "trim"),
    "bom/crlf": ("bom", "newlines"),
    "encoding": ("encoding",),
    "js-objects": ("prototype", "builtins"),
    "core-memory": ("core-memory", "replace-patterns"),
    "inputs": ("inputs", "jsdate", "jsnumber", "js-string"),
    "git": ("history", "merge", "worktree", "revision", "no-repo", "subdir", "symlink"),
    "shapes": ("shape", "gitlink", "git-config"),
    "size": ("size", "scale"),
    "lifecycle": (
        "lifecycle",
        "memory-update",
        "clock",
        "compaction",
        "conversation",
        "rewrite",
        "broken-head",
        "model",
        "persisted-reminder",
        "recompile",
        "system-prompt",
        "agent-free",
    ),
    "memory-tools": ("op", "memory-view", "memory-write", "reminder", "commit-validation"),
    "provenance": ("spec", "spec-v2", "golden", "snapshot", "reduced", "fuzz", "product-difference"),
}
OTHER = "other"  # the family of a tag FAMILIES does not hold

_FAMILY_OF = {tag: family for family, tags in FAMILIES.items() for tag in tags}
_FAMILY_ORDER = {family: number for number, family in enumerate([*FAMILIES, OTHER])}

#: The columns, in the order every view shows them.
COLUMNS = ("passed", "known", "failing", "not_applicable")
_COLUMN = {
    Status.PASS: "passed",
    Status.KNOWN: "known",
    Status.RUNTIME: "known",
    Status.NOT_APPLICABLE: "not_applicable",
}


def family_of(tag: str) -> str:
    """The one family a tag belongs to (`other` for a tag the table does not know)."""
    return _FAMILY_OF.get(tag, OTHER)


def families_of(tags: Iterable[str]) -> list[str]:
    """The families a case's tags belong to, each once, in the summary's order."""
    return sorted({family_of(tag) for tag in tags}, key=_FAMILY_ORDER.__getitem__)


def column_of(status: Status) -> str:
    """The summary column a result's status counts in (the module doc says why)."""
    return "failing" if status.failing else _COLUMN[status]


@dataclass(frozen=True)
class Counts:
    """One row of the summary: how many results passed, were known, failed, did not apply."""

    passed: int = 0
    known: int = 0
    failing: int = 0
    not_applicable: int = 0

    @property
    def total(self) -> int:
        return self.passed + self.known + self.failing + self.not_applicable

    @property
    def applicable(self) -> int:
        return self.total - self.not_applicable

    @property
    def pass_percent(self) -> float | None:
        """Passed out of the applicable results, rounded down to one decimal; None when none applies."""
        if not self.applicable:
            return None
        return math.floor(self.passed * 1000 / self.applicable) / 10

    @property
    def percent_text(self) -> str:
        """`99.5%`, or `-` when no result applies."""
        percent = self.pass_percent
        return "-" if percent is None else f"{percent:.1f}%"

    def to_json(self) -> dict[str, int]:
        return {column: getattr(self, column) for column in COLUMNS}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Counts:
        return cls(**{column: int(data[column]) for column in COLUMNS})

    @classmethod
    def of(cls, counter: Counter[str]) -> Counts:
        return cls(**{column: counter[column] for column in COLUMNS})


@dataclass(frozen=True)
class ImplementationSummary:
    """One implementation's results: in all, by tag family (the summary's order, only families with
    results) and by reference (release order, golden last)."""

    implementation: str
    total: Counts
    families: dict[str, Counts] = field(default_factory=dict)
    references: dict[str, Counts] = field(default_factory=dict)

    @property
    def failing_families(self) -> dict[str, Counts]:
        return {name: counts for name, counts in self.families.items() if counts.failing}


def _reference_key(reference: str) -> tuple[bool, tuple[Any, ...]]:
    return is_golden(reference), release_key(reference)


def _implementation_key(implementation: str) -> tuple[bool, str]:
    return implementation != DEFAULT_IMPLEMENTATION, implementation


def summarize(results: Iterable[CaseResult]) -> list[ImplementationSummary]:
    """Each implementation's summary: the default (`python`) first, the others by label, so that a report
    and its shards merged give the same summary whatever order the results came in."""
    return _summarize((r.implementation, r.reference, r.status, r.tags) for r in results)


def report_summary(data: dict[str, Any]) -> list[ImplementationSummary]:
    """The summaries of a report.json's data: its `summary`, or for a report written before it had one,
    counted from its results (report.stored.full_entries)."""
    if "summary" in data:
        return summary_from_json(data["summary"])
    rows = ((e["implementation"], e["reference"], Status(e["status"]), e["tags"]) for e in full_entries(data))
    return _summarize(rows)


def _summarize(rows: Iterable[tuple[str, str, Status, Iterable[str]]]) -> list[ImplementationSummary]:
    """The summaries of (implementation, reference, status, tags) rows, one a result."""
    totals: dict[str, Counter[str]] = {}
    families: dict[str, dict[str, Counter[str]]] = {}
    references: dict[str, dict[str, Counter[str]]] = {}
    for impl, reference, status, tags in rows:
        column = column_of(status)
        totals.setdefault(impl, Counter())[column] += 1
        for family in families_of(tags):
            families.setdefault(impl, {}).setdefault(family, Counter())[column] += 1
        references.setdefault(impl, {}).setdefault(reference, Counter())[column] += 1
    return [
        ImplementationSummary(
            impl,
            Counts.of(totals[impl]),
            {f: Counts.of(c) for f, c in sorted(families.get(impl, {}).items(), key=lambda i: _FAMILY_ORDER[i[0]])},
            {r: Counts.of(c) for r, c in sorted(references[impl].items(), key=lambda i: _reference_key(i[0]))},
        )
        for impl in sorted(totals, key=_implementation_key)
    ]


def summary_json(summaries: list[ImplementationSummary]) -> dict[str, Any]:
    """report.json's `summary`: implementation -> `total`, `families`, `references`, each a row of counts
    (docs/report-format.md), in the summary's order."""
    return {
        s.implementation: {
            "total": s.total.to_json(),
            "families": {name: counts.to_json() for name, counts in s.families.items()},
            "references": {name: counts.to_json() for name, counts in s.references.items()},
        }
        for s in summaries
    }


def summary_from_json(data: dict[str, Any]) -> list[ImplementationSummary]:
    """The summaries back from report.json's `summary` (`summary_json` of them gives the same data)."""
    return [
        ImplementationSummary(
            impl,
            Counts.from_json(entry["total"]),
            {name: Counts.from_json(counts) for name, counts in entry["families"].items()},
            {name: Counts.from_json(counts) for name, counts in entry["references"].items()},
        )
        for impl, entry in data.items()
    ]


def counts_text(counts: Counts) -> str:
    """`12 passed, 1 known, 2 failing, 0 n/a: 80.0% pass`: one row as the terminal prints it. With results not
    applicable, the share says what it is out of and how many were left out (`100.0% of 67 applicable pass; 384 of
    451 not applicable`), so a run that declared away most of the corpus never reads as a full pass."""
    share = f"{counts.percent_text} pass" if counts.applicable else "none applicable"
    if counts.applicable and counts.not_applicable:
        share = (
            f"{counts.percent_text} of {counts.applicable} applicable pass; "
            f"{counts.not_applicable} of {counts.total} not applicable"
        )
    return (
        f"{counts.passed} passed, {counts.known} known, {counts.failing} failing, {counts.not_applicable} n/a: {share}"
    )
