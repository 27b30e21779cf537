"""Which rule explains each failing result, and the rules an implementation breaks in the order to fix them.

Owns the attribution rule. Every case names the rules it exercises (cases/rules.yaml, `Scenario.rules`,
carried on each result as `CaseResult.rules`); a failing result is put on one of them, per implementation
under test, by a greedy cover:

1. For each rule, over the implementation's applicable results whose case names it (and under whose profile
   it holds: its `profiles` in rules.yaml): how many fail
   (`failing`) and how many there are (`applicable`); its failure rate is failing / applicable.
2. Repeatedly take the rule that best explains the failing results not yet explained: first a *feature*
   rule (a layout feature: memfs-v1, the skills block, ...) whose every applicable case fails (the feature
   is not implemented), then the most unexplained failures weighted by the rate (a rule that also has
   passing cases explains its failures less surely), then the higher rate, then the rule first in rules.yaml
   (layout features come first there), then the id. Each unexplained
   failing result naming that rule is put on it. Layout features that fail together (each on nearly all
   its results, nearly all on the same results: `_mates`) are one entry naming them all, the first in
   rules.yaml's order first: the results cannot tell which of them is missing.
3. The evidence of each attribution, so that a guess says it is one: `every case fails` (every applicable
   case of the rule fails, and it has at least two), `only rule` (the case names no other rule, or no other
   that is not a layout feature), else `guess` (the likeliest of the case's rules, none of them certain).

A failing result whose case names no known rule is put on no rule (`rule` None), grouped by its cause
(report.groups.cause_of). When every applicable result of an implementation is an error with one cause
(it could not start, or answers nothing), that cause is the one entry: no rule is to blame.

The entries come most explaining first; each has a representative, the failing result to read first: among
its results with the entry's most common cause (its typical first difference), the smallest case (the fewest
bytes in the reference's output, then the case id).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from harness.core.model import CaseResult, Status

EVERY_CASE = "every case fails"
ONLY_RULE = "only rule"
GUESS = "guess"


class RuleLike(Protocol):
    """What attribution reads of a rule (harness.cases.rules.Rule)."""

    @property
    def id(self) -> str: ...
    @property
    def feature(self) -> bool: ...
    @property
    def line(self) -> int: ...
    @property
    def profiles(self) -> tuple[str, ...]: ...


def _at(result: CaseResult) -> tuple[str, str]:
    """A result among one implementation's: its case and reference."""
    return result.case_id, result.reference


def _holding(result: CaseResult, rules: Mapping[str, RuleLike]) -> tuple[str, ...]:
    """The rules a result's case names that exist and hold under the profile it was judged with (a rule of
    0.25.x's bundles explains nothing against 0.34.12)."""
    named = (rules.get(rule_id) for rule_id in dict.fromkeys(result.rules))
    return tuple(r.id for r in named if r is not None and (not r.profiles or result.profile in r.profiles))


@dataclass
class Attribution:
    """The failing results of one implementation put on one rule (or, `rule` None, on one cause)."""

    implementation: str
    rule: str | None
    cause: str  # for `rule` None: the shared cause; else ""
    failing: int = 0  # every failing result of the implementation naming the rule
    applicable: int = 0  # every applicable result naming it
    feature: bool = False
    results: list[CaseResult] = field(default_factory=list)  # the failing results put on it, in report order
    evidence: dict[tuple[str, str], str] = field(default_factory=dict)  # (case, reference) -> evidence
    also: tuple[str, ...] = ()  # layout features that fail together with `rule` (module doc, step 2)
    chosen: CaseResult | None = None  # the failing result to read first (representative_of), once all are in

    @property
    def representative(self) -> CaseResult:
        return self.chosen if self.chosen is not None else self.results[0]

    @property
    def explains(self) -> int:
        return len(self.results)

    @property
    def guesses(self) -> int:
        return sum(1 for e in self.evidence.values() if e == GUESS)

    def representative_of(self, cause_of: Callable[[CaseResult], str]) -> CaseResult:
        """The failing result to read first: among those with the entry's most common cause (its typical
        difference), the smallest case (fewest reference output bytes), then by id."""
        causes = [cause_of(r) for r in self.results]
        counts = Counter(causes)
        top = max(counts.values())
        typical = [r for r, cause in zip(self.results, causes, strict=True) if counts[cause] == top]
        return min(typical, key=lambda r: (output_size(r), r.case_id, r.reference))

    @property
    def name(self) -> str:
        return " + ".join((self.rule, *self.also)) if self.rule is not None else f"no rule: {self.cause}"


def output_size(result: CaseResult) -> int:
    """How big a result's case is to read: the bytes of the reference's content (or the implementation's when
    the reference has none), a lifecycle probe by the length of its turn table."""
    for outcome in (result.reference_outcome, result.impl_outcome):
        record = outcome.record if outcome is not None else None
        if isinstance(record, dict) and isinstance(record.get("content"), str):
            return len(record["content"].encode("utf-8", "surrogatepass"))
    return 1_000_000 + len(result.turns)


def _applicable(result: CaseResult) -> bool:
    return result.status != Status.NOT_APPLICABLE


def attribute(
    results: Iterable[CaseResult], rules: Mapping[str, RuleLike], cause_of: Callable[[CaseResult], str]
) -> list[Attribution]:
    """Every failing result put on one rule (module doc), per implementation; the entries of each implementation
    most explaining first (implementations in first-seen order). `cause_of(result)` names a cause for results
    put on no rule."""
    by_impl: dict[str, list[CaseResult]] = {}
    for result in results:
        by_impl.setdefault(result.implementation, []).append(result)
    entries: list[Attribution] = []
    for implementation, mine in by_impl.items():
        entries += _attribute_one(implementation, mine, rules, cause_of)
    return entries


def _attribute_one(
    implementation: str, results: list[CaseResult], rules: Mapping[str, RuleLike], cause_of: Callable[[CaseResult], str]
) -> list[Attribution]:
    """One implementation's failing results put on rules (a greedy cover), the rest on their causes."""
    applicable = [r for r in results if _applicable(r)]
    failing = [r for r in applicable if r.failed]
    if not failing:
        return []
    if all(r.status == Status.ERROR for r in applicable) and len({cause_of(r) for r in applicable}) == 1:
        every_case = {(r.case_id, r.reference): EVERY_CASE for r in failing}
        only = Attribution(
            implementation, None, cause_of(failing[0]), len(failing), len(applicable), False, list(failing), every_case
        )
        only.chosen = only.representative_of(cause_of)
        return [only]
    known = {_at(r): _holding(r, rules) for r in applicable}
    chosen = _cover(implementation, failing, known, rules, _totals(applicable, known))
    ordered = sorted(chosen, key=lambda e: -e.explains)  # stable: at equal counts, the surer (chosen first) first
    ordered += sorted(_on_causes(implementation, failing, known, cause_of), key=lambda e: (-e.explains, e.name))
    for entry in ordered:
        entry.chosen = entry.representative_of(cause_of)
    return ordered


def _totals(
    applicable: list[CaseResult], known: Mapping[tuple[str, str], tuple[str, ...]]
) -> dict[str, tuple[int, int]]:
    """For each rule the applicable results name: how many of them fail, and how many there are."""
    totals: dict[str, list[int]] = {}  # rule -> [failing, applicable]
    for result in applicable:
        for rule_id in known[_at(result)]:
            count = totals.setdefault(rule_id, [0, 0])
            count[0] += result.failed
            count[1] += 1
    return {rule_id: (f, a) for rule_id, (f, a) in totals.items()}


def _cover(
    implementation: str,
    failing: list[CaseResult],
    known: Mapping[tuple[str, str], tuple[str, ...]],
    rules: Mapping[str, RuleLike],
    totals: Mapping[str, tuple[int, int]],
) -> list[Attribution]:
    """The failing results that name a rule, put on rules: the best-scoring rule (and its mates) first, until
    every one is on a rule (module doc, step 2)."""
    rate = {rule_id: f / a for rule_id, (f, a) in totals.items()}
    complete = {rule_id for rule_id, (f, a) in totals.items() if f == a >= 2}  # one case alone proves nothing
    unexplained = [r for r in failing if known[_at(r)]]
    chosen: list[Attribution] = []
    while unexplained:
        counts: dict[str, int] = {}
        for result in unexplained:
            for rule_id in known[_at(result)]:
                counts[rule_id] = counts.get(rule_id, 0) + 1
        best = max(counts, key=lambda i: _score(i, counts[i], rules, rate, complete))
        members = sorted([best, *_mates(best, unexplained, known, rules, rate)], key=lambda i: (rules[i].line, i))
        head = members[0]
        failed, applicable = totals[head]
        entry = Attribution(implementation, head, "", failed, applicable, rules[head].feature, also=tuple(members[1:]))
        rest = []
        for result in unexplained:
            named = [m for m in members if m in known[_at(result)]]
            if named:
                entry.results.append(result)
                evidence = _evidence(named[0], known[_at(result)], rules, complete)
                entry.evidence[(result.case_id, result.reference)] = evidence
            else:
                rest.append(result)
        unexplained = rest
        chosen.append(entry)
    return chosen


def _on_causes(
    implementation: str,
    failing: list[CaseResult],
    known: Mapping[tuple[str, str], tuple[str, ...]],
    cause_of: Callable[[CaseResult], str],
) -> list[Attribution]:
    """The failing results that name no rule, one entry per cause (each a guess)."""
    by_cause: dict[str, Attribution] = {}
    for result in failing:
        if not known[_at(result)]:
            cause = cause_of(result)
            entry = by_cause.setdefault(cause, Attribution(implementation, None, cause))
            entry.results.append(result)
            entry.failing += 1
            entry.evidence[(result.case_id, result.reference)] = GUESS
    return list(by_cause.values())


def _score(
    rule_id: str, unexplained: int, rules: Mapping[str, RuleLike], rate: Mapping[str, float], complete: set[str]
) -> tuple[bool, float, float, int, int, str]:
    """How well a rule explains the failures not yet explained (module doc, step 2); the largest wins."""
    whole_feature = rules[rule_id].feature and rule_id in complete
    return whole_feature, unexplained * rate[rule_id], rate[rule_id], unexplained, -rules[rule_id].line, _desc(rule_id)


MATE_RATE = 0.9  # layout features failing this often, on these same results, are missing together
MATE_OVERLAP = 0.9


def _mates(
    best: str,
    unexplained: list[CaseResult],
    known: Mapping[tuple[str, str], tuple[str, ...]],
    rules: Mapping[str, RuleLike],
    rate: Mapping[str, float],
) -> list[str]:
    """The other layout features that fail with layout feature `best`: each failing on MATE_RATE of its results,
    and most (MATE_OVERLAP) of the unexplained failures naming either (the one with more) naming both. The data cannot
    tell which of them is missing (a v2-only implementation lacks memfs-v1 and its metadata block alike), so one entry
    names them all."""
    if not rules[best].feature or rate[best] < MATE_RATE:
        return []
    mates = []
    naming_best = [r for r in unexplained if best in known[_at(r)]]
    for other in sorted({i for r in naming_best for i in known[_at(r)]} - {best}):
        if not rules[other].feature or rate[other] < MATE_RATE:
            continue
        naming_other = sum(1 for r in unexplained if other in known[_at(r)])
        both = sum(1 for r in naming_best if other in known[_at(r)])
        if both >= MATE_OVERLAP * max(len(naming_best), naming_other):
            mates.append(other)
    return mates


def _desc(rule_id: str) -> str:
    """Ties go to the rule id first in alphabetical order (max picks the largest key)."""
    return "".join(chr(0x10FFFF - ord(ch)) for ch in rule_id)


def _evidence(rule_id: str, named: tuple[str, ...], rules: Mapping[str, RuleLike], complete: set[str]) -> str:
    if rule_id in complete:
        return EVERY_CASE
    others = [other for other in named if other != rule_id]
    if not others or (not rules[rule_id].feature and all(rules[o].feature for o in others)):
        return ONLY_RULE
    return GUESS


def attribution_of(entries: list[Attribution]) -> dict[tuple[str, str, str], tuple[Attribution, str]]:
    """(implementation, case, reference) -> the entry a failing result is put on, and the evidence."""
    found = {}
    for entry in entries:
        for result in entry.results:
            where = (result.case_id, result.reference)
            found[(entry.implementation, *where)] = (entry, entry.evidence[where])
    return found
