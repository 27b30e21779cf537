"""The rules: every upstream behaviour the corpus pins, as data (cases/rules.yaml beside the cases).

Owns what a rule is (`Rule`), how rules.yaml is read (strict YAML against rules.schema.json, every
refusal with file, line and fix) and which rule ids a case may name. A rule says what upstream does,
where in upstream's code it comes from, the profiles it holds for and the port function that
reproduces it. Layout features (memfs-v1 rendering, memfs-v2, the skills block, lifecycle delivery,
the metadata block) are rules too, marked `feature: true`: an implementation may declare in `hello`
which features it implements (docs/protocol.md), and a case that exercises an undeclared feature is
not applicable to it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from harness.cases.load import parse_strict, read_utf8
from harness.cases.schemacheck import validate
from harness.cases.yamlnodes import line_at
from harness.model import Scenario, ScenarioError

#: The file beside the case folders that holds the rules.
RULES_FILE = "rules.yaml"


@dataclass(frozen=True)
class Rule:
    """One upstream behaviour: an id cases name, a one-line statement, its upstream source and the port's."""

    id: str
    statement: str
    upstream: str  # upstream's code it comes from: `src/...ts` and the function
    port: str  # the port function that reproduces it: `memfs_prompt.module.function`
    profiles: tuple[str, ...] = ()  # the profiles it holds for; () is every profile
    feature: bool = False  # a layout feature an implementation may declare (hello `features`)
    line: int = 1  # its line in rules.yaml, for errors and links


def _schema() -> dict[str, Any]:
    return json.loads(resources.files("harness.cases").joinpath("rules.schema.json").read_text())


def rules_path(cases_root: Path) -> Path:
    """Where the rules of a corpus rooted at `cases_root` (the folder holding compile/ and lifecycle/) live."""
    return cases_root / RULES_FILE


def load_rules(path: Path) -> dict[str, Rule]:
    """The rules in `path`, by id, in file order. Raises ScenarioError (file, line, fix) for a bad file."""
    root, data = parse_strict(read_utf8(path), path, what="rules")
    if root is None:
        raise ScenarioError(path, None, "the rules file is empty (it holds `rules:`, a list of rules)")
    validate(path, root, data, _schema(), "harness/cases/rules.schema.json")
    rules: dict[str, Rule] = {}
    for index, entry in enumerate(data["rules"]):
        line = line_at(root, ["rules", index])
        if entry["id"] in rules:
            raise ScenarioError(
                path,
                line,
                f"rule {entry['id']!r} is given twice (line {rules[entry['id']].line}); give each rule one entry",
            )
        rules[entry["id"]] = Rule(
            id=entry["id"],
            statement=entry["statement"],
            upstream=entry["upstream"],
            port=entry["port"],
            profiles=tuple(entry.get("profiles", ())),
            feature=bool(entry.get("feature", False)),
            line=line,
        )
    return rules


def holds_for(rule: Rule, profile: str | None) -> bool:
    """Whether `rule` holds under `profile` (None: the implementation's default, taken as every profile)."""
    return not rule.profiles or profile is None or profile in rule.profiles


def needed_features(scenario: Scenario, profile: str | None, rules: Mapping[str, Rule]) -> frozenset[str]:
    """The layout features (feature rules) a case exercises under `profile`: an implementation that does not
    declare one of them in `hello` is not applicable to the case under that profile (docs/protocol.md)."""
    named = (rules.get(rule_id) for rule_id in scenario.rules)
    return frozenset(rule.id for rule in named if rule is not None and rule.feature and holds_for(rule, profile))
