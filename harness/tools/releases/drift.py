"""Drift: how upstream's own output changes between neighbouring references, and which cases pin it.

Two references are neighbours when they are consecutive releases (in manifest order, then any
other reference in the order given) under the baseline runtime, or when one is a runtime/locale
variant of the other (`0.32.18` -> `0.32.18@node/da_DK.UTF-8`). For each pair, every case whose
*reference* output changed is put in one group per change: a field that appeared or disappeared
(`coreMemory (added)`), or a section of a text field whose bytes changed
(`content/external_projection`). A group is explained when at least one of its cases declares the
change in its `explains` list (docs/cases.md); a group no case explains is listed as unexplained,
and an `explains` entry whose change did not happen is listed as stale. Its Markdown (drift.md) is
harness.report.drift's, from `DriftReport.to_json`.

The same data read by rule (`RuleHistory`, `rule_histories`): for each rule its cases name (cases/rules.yaml),
the first release in that order where one of its cases ran (its reference did not answer `unsupported`) and
every release pair where one of its cases' reference output changed. That is where a rule of upstream's first
appears and where it changes, from the releases themselves; `conformance bisect` narrows a pair further.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from harness.core.fields import COMPARED_FIELDS
from harness.core.model import Explanation, FieldDiff, Outcome, Scenario
from harness.core.protocol import OPS
from harness.core.reference import ReferenceSpec
from harness.core.registries import REGISTRY_NAMES
from harness.verdict.diff import field_diff_json, outcome_diff
from harness.verdict.text import as_bytes, first_diff_offset

TEXT_FIELDS = ("content", "coreMemory")
_BLOCKS = ("self", "external_projection", "memory_metadata")


def sections(text: str) -> dict[str, str]:
    """A compiled prompt cut into its sections: `self`, `external_projection`, `memory_metadata`,
    `system-tree` (the rest of `<memory>`) and `prompt` (text outside every block). The first
    `<tag>` ... `</tag>` pair of each block is taken, and the outermost `<memory>` (memory text that
    quotes `<self>` or `<external_projection>` can still mislead it)."""
    found: dict[str, str] = {}
    rest = text
    for tag in _BLOCKS:
        match = re.search(rf"<{tag}>.*?</{tag}>", rest, re.S)
        if match:
            found[tag] = match.group(0)
            rest = rest[: match.start()] + f"\0{tag}\0" + rest[match.end() :]
    memory = re.search(r"<memory>.*</memory>", rest, re.S)  # greedy: a system label `memory` nests one
    if memory:
        found["system-tree"] = memory.group(0)
        rest = rest[: memory.start()] + "\0memory\0" + rest[memory.end() :]
    found["prompt"] = rest
    return found


def change_details(
    before: Outcome, after: Outcome, fields: tuple[str, ...] = COMPARED_FIELDS
) -> list[tuple[str, FieldDiff]]:
    """What changed from one reference outcome to another (verdict.diff.outcome_diff), as (group key, diff):
    a field added or removed, each section of a text field that changed (its diff is the section's text on
    both sides), a throw, or an op case's op that appears (or disappears): one side answered `unsupported`.
    Empty: the same output."""
    if before.status == "error" or after.status == "error":
        return []
    if "unsupported" in (before.status, after.status):  # an op case: a release without the op's code
        if before.status == after.status:
            return []
        old, new = (f"unsupported: {o.error}" if o.status == "unsupported" else "answers" for o in (before, after))
        offset = first_diff_offset(old.encode("utf-8"), new.encode("utf-8")) or 0
        return [
            (f"op ({'appears' if before.status == 'unsupported' else 'disappears'})", FieldDiff("op", old, new, offset))
        ]
    found: list[tuple[str, FieldDiff]] = []
    for diff in outcome_diff(before, after, fields):
        if diff.field == "thrown" and diff.reference_present and diff.impl_present:
            found.append(("thrown", diff))  # both threw, another message: an op case compares the text
        elif diff.field == "thrown":
            found.append(("thrown (now throws)" if diff.impl_present else "thrown (no longer throws)", diff))
        elif diff.reference_present != diff.impl_present:
            found.append((f"{diff.field} ({'added' if diff.impl_present else 'removed'})", diff))
        elif diff.field in TEXT_FIELDS and isinstance(diff.reference, str) and isinstance(diff.impl, str):
            a, b = sections(diff.reference), sections(diff.impl)
            changed = [s for s in sorted(set(a) | set(b)) if a.get(s) != b.get(s)]
            found += [(f"{diff.field}/{s}", _section_diff(diff.field, s, a, b)) for s in changed] or [
                (diff.field, diff)
            ]
        else:
            found.append((diff.field, diff))
    return found


_CUT = re.compile(r"\0([a-z_]+)\0")  # where sections() took a block out of the rest


def _section_diff(name: str, section: str, before: dict[str, str], after: dict[str, str]) -> FieldDiff:
    """The change of one section, with each block cut out of it shown as `<tag>…</tag>`, not as a marker."""
    old, new = (
        _CUT.sub(r"<\1>…</\1>", text) if text is not None else None
        for text in (before.get(section), after.get(section))
    )
    offset = first_diff_offset(as_bytes(old or ""), as_bytes(new or "")) or 0
    return FieldDiff(f"{name}/{section}", old, new, offset, old is not None, new is not None)


def changes(before: Outcome, after: Outcome, fields: tuple[str, ...] = COMPARED_FIELDS) -> list[str]:
    """The group keys of change_details: what changed from one reference outcome to another."""
    return [key for key, _ in change_details(before, after, fields)]


def described(diff: FieldDiff) -> dict[str, Any]:
    """A change as a person reads it, the same from a live run and from a saved report: the first differing
    byte, the characters there named, and the bytes around it on both sides (verdict.diff.field_diff_json)."""
    info = field_diff_json(diff)
    return {
        "field": diff.field,
        "offset": info["offset"],
        "difference": info["difference"],
        "before_bytes": info["reference_bytes"],
        "after_bytes": info["impl_bytes"],
        "before_context": info["reference_context"],
        "after_context": info["impl_context"],
    }


@dataclass(frozen=True)
class Pair:
    before: ReferenceSpec
    after: ReferenceSpec
    kind: str  # release | runtime

    @property
    def name(self) -> str:
        return f"{self.before.label} -> {self.after.label}"


def neighbour_pairs(specs: list[ReferenceSpec], release_order: list[str]) -> list[Pair]:
    """Consecutive baseline letta-code references (pinned releases in manifest order first), and each
    variant after its baseline. Another product (the Letta server) is nobody's neighbour."""
    baselines = [s for s in specs if not s.is_variant]
    rank = {version: index for index, version in enumerate(release_order)}
    ordered = sorted(
        baselines,
        key=lambda s: (
            (0, rank[s.value], REGISTRY_NAMES.index(s.kind))
            if s.is_release and s.value in rank
            else (1, baselines.index(s), 0)
        ),
    )
    pairs = [Pair(a, b, "release") for a, b in itertools.pairwise(ordered)]
    pairs += [Pair(s.baseline, s, "runtime") for s in specs if s.is_variant and s.baseline in baselines]
    return pairs


def explains_pair(entry: Explanation, pair: Pair, release_order: list[str]) -> bool:
    """Whether an `explains` entry is about this pair (not yet whether its change happened)."""
    if entry.since is not None:
        if pair.kind != "release" or entry.since not in release_order:
            return False
        rank = {version: index for index, version in enumerate(release_order)}
        before = rank.get(pair.before.value, -1) if pair.before.is_release else -1
        after = rank.get(pair.after.value, len(release_order)) if pair.after.is_release else len(release_order)
        return before < rank[entry.since] <= after
    if pair.kind != "runtime" or entry.runtime != pair.after.runtime:
        return False
    if entry.locale is not None and entry.locale != pair.after.locale:
        return False  # an entry without a locale is about the runtime under any locale
    return not entry.releases or pair.after.base_label in entry.releases


def explains_change(entry: Explanation, key: str) -> bool:
    field_name, _, section = key.partition("/")
    field_name = field_name.split(" (")[0]
    return (not entry.fields or field_name in entry.fields) and (not entry.sections or section in entry.sections)


@dataclass
class DriftGroup:
    pair: Pair
    change: str
    cases: list[str] = field(default_factory=list)
    first: dict[str, Any] = field(default_factory=dict)  # the first case's change, described()
    explained_by: dict[str, str] = field(default_factory=dict)  # case id -> the change it says it pins

    @property
    def explained(self) -> bool:
        return bool(self.explained_by)

    def to_json(self) -> dict[str, Any]:
        return {
            "from": self.pair.before.label,
            "to": self.pair.after.label,
            "kind": self.pair.kind,
            "change": self.change,
            "cases": self.cases,
            "first_difference": {"case": self.cases[0], **self.first} if self.cases else {},
            "explained": self.explained,
            "explained_by": [{"case": c, "says": s} for c, s in sorted(self.explained_by.items())],
        }


@dataclass
class RuleHistory:
    """One rule across the references: where its cases first ran and every pair where their output changed."""

    rule: str
    cases: list[str]
    first: str | None  # the first reference (pair order) where one of its cases ran; None: it never ran
    changes: list[dict[str, Any]] = field(default_factory=list)  # {from, to, kind, changes, cases}

    def to_json(self) -> dict[str, Any]:
        return {"rule": self.rule, "cases": self.cases, "first": self.first, "changes": self.changes}


def _ran(outcome: Outcome | None) -> bool:
    return outcome is not None and outcome.status not in ("unsupported", "error")


def rule_histories(
    outcomes: dict[tuple[str, str], Outcome],
    scenarios: Iterable[Scenario],
    order: list[str],
    pairs: list[Pair],
    groups: list[DriftGroup],
) -> list[RuleHistory]:
    """Each rule named by a case, in rule-id order, with the first reference of `order` (the baselines in pair
    order) where one of its cases ran, and the pairs where their output changed (from `groups`)."""
    by_rule: dict[str, list[str]] = {}
    for scenario in scenarios:
        if not any((scenario.id, label) in outcomes for label in order):
            continue  # not in this run (not selected, or another kind's case)
        for rule in scenario.rules:
            by_rule.setdefault(rule, []).append(scenario.id)
    histories = []
    for rule, cases in sorted(by_rule.items()):
        first = next((label for label in order if any(_ran(outcomes.get((c, label))) for c in cases)), None)
        changes = []
        for pair in pairs:
            touched = [g for g in groups if g.pair == pair and set(g.cases) & set(cases)]
            if touched:
                changes.append(
                    {
                        "from": pair.before.label,
                        "to": pair.after.label,
                        "kind": pair.kind,
                        "changes": [g.change for g in touched],
                        "cases": sorted({c for g in touched for c in g.cases if c in cases}),
                    }
                )
        histories.append(RuleHistory(rule, sorted(cases), first, changes))
    return histories


@dataclass
class DriftReport:
    pairs: list[Pair]
    groups: list[DriftGroup]
    stale: list[dict[str, str]]  # explains entries whose change did not happen
    unknown: list[dict[str, str]]  # cases whose output could not be compared (an error on one side)
    rules: list[RuleHistory] = field(default_factory=list)  # the same changes, read by rule

    @property
    def unexplained(self) -> list[DriftGroup]:
        return [g for g in self.groups if not g.explained]

    @property
    def ok(self) -> bool:
        return not self.unexplained and not self.stale

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "pairs": [
                {
                    "from": p.before.label,
                    "to": p.after.label,
                    "kind": p.kind,
                    "changed_cases": sorted({c for g in self.groups if g.pair == p for c in g.cases}),
                }
                for p in self.pairs
            ],
            "groups": [g.to_json() for g in self.groups],
            "unexplained": [g.to_json() for g in self.unexplained],
            "stale_explanations": self.stale,
            "not_compared": self.unknown,
            "rules": [r.to_json() for r in self.rules],
        }


def drift_report(
    outcomes: dict[tuple[str, str], Outcome],
    scenarios: Iterable[Scenario],
    specs: list[ReferenceSpec],
    release_order: list[str],
) -> DriftReport:
    """`outcomes[(case id, reference label)]` is the reference's own output for that case."""
    pairs = neighbour_pairs(specs, release_order)
    groups: dict[tuple[Pair, str], DriftGroup] = {}
    stale: list[dict[str, str]] = []
    unknown: list[dict[str, str]] = []
    scenarios = sorted(scenarios, key=lambda s: s.id)
    for scenario in scenarios:
        for pair in pairs:
            before = outcomes.get((scenario.id, pair.before.label))
            after = outcomes.get((scenario.id, pair.after.label))
            if before is None or after is None:
                continue  # the case does not run against one of them (its `profiles`, or a golden case)
            if before.status == "error" or after.status == "error":
                unknown.append({"case": scenario.id, "from": pair.before.label, "to": pair.after.label})
                continue
            details = change_details(before, after, OPS[scenario.op].case_fields if scenario.op else COMPARED_FIELDS)
            keys = [key for key, _ in details]
            entries = [e for e in scenario.explains if explains_pair(e, pair, release_order)]
            for key, diff in details:
                group = groups.setdefault((pair, key), DriftGroup(pair, key))
                if not group.cases:
                    group.first = described(diff)
                group.cases.append(scenario.id)
                for entry in entries:
                    if explains_change(entry, key):
                        group.explained_by[scenario.id] = entry.change
            for entry in entries:
                if not any(explains_change(entry, key) for key in keys):
                    stale.append(
                        {
                            "case": scenario.id,
                            "from": pair.before.label,
                            "to": pair.after.label,
                            "says": entry.change,
                            "path": str(scenario.path),
                        }
                    )
    ordered = sorted(groups.values(), key=lambda g: (pairs.index(g.pair), g.change))
    chain = [p for p in pairs if p.kind == "release"]
    order = [chain[0].before.label, *(p.after.label for p in chain)] if chain else [s.label for s in specs]
    return DriftReport(pairs, ordered, stale, unknown, rule_histories(outcomes, scenarios, order, pairs, ordered))
