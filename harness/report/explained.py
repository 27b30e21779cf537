"""Failures explained by rule, as a run shows them: the rules table a run carries, the attribution of its
results (harness.verdict.attribute) and what each report says of it.

A run carries the rules of its corpus (cases/rules.yaml beside the case folders, harness.cases.rules) as
plain data in `RunReport.extra["rules"]` (id -> statement, upstream, port, profiles, feature, line, file),
so every writer of the run (the terminal, report.json, index.html) attributes the same results the same way
and a report read back (merge-reports, --lf) can attribute again from its own `rules`.

Owns: the rules table of a run's cases (`rules_for`, from harness.cases.rules.rules_of_cases; `name_rules` puts it and
each case's rules on a run's report), the entries of a run
(`explain`), report.json's `attribution` and `rules` and each failing result's `attributed` (docs/report-format.md),
and which failing results a report shows in full (`shown_in_full`: the representative of each entry and the
first result of each cause; every other failing result is a short entry linking to them, so that a report's
bulk follows its distinct differences, not its failing cases).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.cases.rules import corpus_root, rules_of_cases, rules_path
from harness.core.model import CaseResult, RunReport, Scenario, ScenarioError, Status
from harness.report.groups import cause_of
from harness.report.reproduce import reproduce_commands
from harness.verdict.attribute import Attribution, attribute
from harness.verdict.diff import first_difference_line

RULES = "rules"  # the key of RunReport.extra (and of report.json) holding the rules table


@dataclass(frozen=True)
class RuleRow:
    """A rule as a report carries it (the fields of harness.cases.rules.Rule, and its file)."""

    id: str
    statement: str
    upstream: str = ""
    port: str = ""
    profiles: tuple[str, ...] = ()
    feature: bool = False
    line: int = 1
    file: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "statement": self.statement,
            "upstream": self.upstream,
            "port": self.port,
            "profiles": list(self.profiles),
            "feature": self.feature,
            "file": self.file,
            "line": self.line,
        }

    @classmethod
    def from_json(cls, rule_id: str, data: Mapping[str, Any]) -> RuleRow:
        return cls(
            rule_id,
            data.get("statement", ""),
            data.get("upstream", ""),
            data.get("port", ""),
            tuple(data.get("profiles", ())),
            bool(data.get("feature", False)),
            int(data.get("line", 1)),
            data.get("file", ""),
        )


def rules_for(scenarios: list[Scenario]) -> dict[str, dict[str, Any]]:
    """The rules table of the corpus the cases come from (harness.cases.rules.rules_of_cases), {} when it has
    no rules file. A rules file that cannot be read raises harness.core.model.ScenarioError (file, line, fix);
    cases from several corpora, a ValueError naming them."""
    rules = rules_of_cases(scenarios)
    roots = [root for root in (corpus_root(s.path) for s in scenarios) if root is not None]
    if rules is None or not roots:
        return {}
    shown = _shown_path(rules_path(roots[0]))
    return {
        rule.id: RuleRow(
            rule.id, rule.statement, rule.upstream, rule.port, rule.profiles, rule.feature, rule.line, shown
        ).to_json()
        for rule in rules.values()
    }


def name_rules(report: RunReport, scenarios: list[Scenario]) -> str | None:
    """Give a run's report what explaining its failures by rule needs: each result the rules its case names, and
    the rules table under RULES. A rules file that cannot be read is not fatal: the error is returned for the
    caller to say, and the failures are grouped by their first difference instead."""
    named = {scenario.id: scenario.rules for scenario in scenarios}
    for result in report.results:
        result.rules = named.get(result.case_id, result.rules)
    try:
        report.extra[RULES] = rules_for(scenarios)
    except (ScenarioError, ValueError) as error:
        report.extra[RULES] = {}
        return f"{error} (failures are not explained by rule)"
    return None


def _shown_path(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def rule_rows(table: Mapping[str, Mapping[str, Any]]) -> dict[str, RuleRow]:
    return {rule_id: RuleRow.from_json(rule_id, data) for rule_id, data in table.items()}


def explain(results: Iterable[CaseResult], table: Mapping[str, Mapping[str, Any]]) -> list[Attribution]:
    """The attribution of a run's results (harness.verdict.attribute) under its rules table."""
    return attribute(results, rule_rows(table), cause_of)


def report_entries(report: RunReport) -> list[Attribution]:
    return explain(report.results, report.extra.get(RULES) or {})


def shown_in_full(results: Iterable[CaseResult], entries: list[Attribution]) -> set[tuple[str, str, str]]:
    """(implementation, case, reference) of the failing results a report shows in full: each entry's
    representative, and the first result (in report order) of each cause."""
    keys = {(e.implementation, e.representative.case_id, e.representative.reference) for e in entries}
    seen: set[tuple[str, str]] = set()
    for result in results:
        if result.status != Status.PASS:
            cause = (result.implementation, cause_of(result))
            if cause not in seen:
                seen.add(cause)
                keys.add((result.implementation, result.case_id, result.reference))
    return keys


def attribution_json(entries: list[Attribution], table: Mapping[str, Mapping[str, Any]]) -> list[dict[str, Any]]:
    """report.json's `attribution`: one entry per rule (or cause) an implementation breaks, most explaining first."""
    out = []
    for entry in entries:
        first = entry.representative
        row = table.get(entry.rule or "", {})
        out.append(
            {
                "implementation": entry.implementation,
                "rule": entry.rule,
                **({"with": list(entry.also)} if entry.also else {}),
                **({"cause": entry.cause} if entry.rule is None else {}),
                "statement": row.get("statement", ""),
                "feature": entry.feature,
                "explains": entry.explains,
                "failing": entry.failing,
                "applicable": entry.applicable,
                "guesses": entry.guesses,
                "smallest": {
                    "case": first.case_id,
                    "reference": first.reference,
                    "difference": first_difference_line(first),
                    "reproduce": reproduce_commands(first)[0],
                },
                "results": [[r.case_id, r.reference] for r in entry.results],
            }
        )
    return out


def explained_rows(
    entries: list[Attribution],
    table: Mapping[str, Mapping[str, Any]],
    linked: Mapping[Any, str],
    key: Callable[[CaseResult], Any],
) -> list[dict[str, Any]]:
    """index.html's first table: per implementation and rule (or cause), most explaining first, its statement,
    how many failures it explains and how surely, its smallest failing case (linked) with its first difference
    and reproduce command, and every failing result it explains (linked)."""
    rows = []
    for number, entry in enumerate(entries):
        first = entry.representative
        rows.append(
            {
                "number": number + 1,
                "anchor": f"explained-{number + 1}",
                "entry": entry,
                "rule": table.get(entry.rule or "", {}),
                "several": len({e.implementation for e in entries}) > 1,
                "first": first,
                "first_anchor": linked.get(key(first), ""),
                "difference": first_difference_line(first),
                "reproduce": reproduce_commands(first)[0],
                "links": [(r.case_id, key(r)[1], linked.get(key(r), "")) for r in entry.results],
                "references": len({r.reference for r in entry.results}),
                "members": [
                    (i, table.get(i, {})) for i in ((entry.rule, *entry.also) if entry.rule is not None else ())
                ],
            }
        )
    return rows


def used_rules(results: Iterable[CaseResult], table: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """report.json's `rules`: every rule the run's cases name, as the run read them (so that a report read back,
    merged or re-run with --lf, attributes its results again as the run did)."""
    named = sorted({rule_id for result in results for rule_id in result.rules if rule_id in table})
    return {rule_id: dict(table[rule_id]) for rule_id in named}
