"""`conformance list`: the cases, one line each (id, kind, tags, rules, what it pins), and the files that did not
load; `conformance list --rules`: the corpus's rules (cases/rules.yaml), one line each with how many of the
listed cases name it."""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

from harness.cases.rules import RULES_FILE, Rule, case_counts, rules_of_cases
from harness.cli.common import Commands, UsageError, add_paths, add_select, case_paths, load_selected
from harness.core.model import Scenario, ScenarioError
from harness.core.plural import counted


def cmd_list(args: argparse.Namespace) -> int:
    scenarios, load_errors = load_selected(args.paths, args.k)
    if args.rules:
        list_rules(scenarios, _rules_of(args.paths, scenarios))
    else:
        for scenario in scenarios:
            what = one_line(scenario.pins or scenario.description)
            print(f"{scenario.id}\t{scenario.kind}\t{','.join(scenario.tags)}\t{','.join(scenario.rules)}\t{what}")
    for error in load_errors:
        print(f"error: {error}", file=sys.stderr)
    return 1 if load_errors else 0


def list_rules(scenarios: list[Scenario], rules: dict[str, Rule]) -> None:
    """One line per rule, in rules.yaml's order: id, how many of `scenarios` name it, `feature` or `rule`, the
    profiles it holds for (`all`), its statement; then the counts in one line on stderr."""
    counts = case_counts(scenarios, rules)
    for rule in rules.values():
        profiles = ",".join(p.removeprefix("letta-code@") for p in rule.profiles) or "all"
        kind = "feature" if rule.feature else "rule"
        print(f"{rule.id}\t{counts[rule.id]}\t{kind}\t{profiles}\t{one_line(rule.statement)}")
    named = sorted(counts.values())
    if named:
        spread = f"min {named[0]}, median {statistics.median(named):g}, max {named[-1]}"
        features = sum(rule.feature for rule in rules.values())
        print(
            f"{counted(len(rules), 'rule')} ({features} features) named by {counted(len(scenarios), 'case')}; "
            f"cases per rule: {spread}",
            file=sys.stderr,
        )


def _rules_of(paths: list[Path], scenarios: list[Scenario]) -> dict[str, Rule]:
    """The rules of the corpus the listed cases belong to (the folder holding compile/ and lifecycle/)."""
    roots = [p for p in case_paths(paths) if p.is_dir() and (p / RULES_FILE).is_file()]
    try:
        rules = rules_of_cases(scenarios, roots)
    except ScenarioError as error:
        raise UsageError(str(error)) from None
    except ValueError as error:
        raise UsageError(f"{error}; list the rules of one at a time") from None
    if rules is None:
        raise UsageError(
            f"no {RULES_FILE} beside the cases' compile/ and lifecycle/ folders; give the corpus "
            "(conformance list --rules cases) or add its rules.yaml (docs/cases.md, Rules)"
        )
    return rules


def one_line(text: str) -> str:
    """A YAML-folded or multi-line text as one line (its line breaks and runs of spaces one space each)."""
    return " ".join(text.split())


def register(commands: Commands) -> None:
    lister = commands.add_parser("list", help="list scenarios (or, with --rules, the rules they exercise)")
    add_paths(lister)
    add_select(lister)
    lister.add_argument(
        "--rules",
        action="store_true",
        help="list the corpus's rules (cases/rules.yaml), each with how many of the "
        "selected cases name it: id, cases, feature or rule, profiles, statement",
    )
    lister.set_defaults(func=cmd_list)
