"""The rules: every upstream behaviour the corpus pins, as data (cases/rules.yaml beside the cases).

Owns what a rule is (`Rule`), how rules.yaml is read (strict YAML against rules.schema.json, every
refusal with file, line and fix), where a corpus's rules file is and that it is read once per corpus
root (`corpus_rules`), which rule ids a case may name (`check_case_rules`: an unknown id is refused at
its line with the nearest known one), and which layout features a case needs under a profile
(`needed_features`, the one place that decides). A rule says what upstream does, where in upstream's
code it comes from, the profiles it holds for and the port function that reproduces it. Layout features
(memfs-v1 rendering, memfs-v2, the skills block, client skills, lifecycle delivery, the metadata block)
are rules too, marked `feature: true`: an implementation may declare in `hello` which features it
implements (docs/protocol.md), and a case that needs an undeclared feature is not applicable to it.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from harness.cases.schemacheck import validate
from harness.cases.strict import parse_strict, read_utf8
from harness.cases.yamlnodes import line_at
from harness.core.model import Scenario, ScenarioError
from letta_profiles import PROFILE_NAMES, resolve_profile_name

#: The file beside the case folders that holds the rules.
RULES_FILE = "rules.yaml"
#: The folders of a corpus root that hold cases, and the kind of case each holds (harness.cases.load.kind_of):
#: compile cases, lifecycle probes, and one-shot op cases (harness.run.op_case).
CASE_FOLDERS = {"compile": "compile", "lifecycle": "lifecycle", "ops": "op"}
#: The layout features, by id: the names an implementation declares in hello `features` (docs/protocol.md).
FEATURES = ("memfs-v1", "memfs-v2", "metadata-block", "skills-block", "client-skills", "memory-update")


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
    # The features a case naming this rule exercises where it does not hold, in its place (memfs-v2 before
    # 0.33.3 is the v1 layout with its metadata block; 0.25.3 ignores includeMemfs: false and renders memfs-v1).
    otherwise: tuple[str, ...] = ()
    # A feature's models, per profile: there it holds only for an agent on one of these models.
    models: tuple[tuple[str, tuple[str, ...]], ...] = ()

    def models_under(self, profile: str) -> tuple[str, ...] | None:
        """The agent models this rule needs under `profile`, or None when any model will do."""
        return dict(self.models).get(profile)


def _schema() -> dict[str, Any]:
    schema: dict[str, Any] = json.loads(
        resources.files("harness.cases").joinpath("rules.schema.json").read_text(encoding="utf-8")
    )
    return schema


def rules_path(cases_root: Path) -> Path:
    """Where the rules of a corpus rooted at `cases_root` (the folder holding compile/ and lifecycle/) live."""
    return cases_root / RULES_FILE


def unnamed_rules_note(case_path: Path, named: tuple[str, ...] | list[str] = ()) -> str | None:
    """What to add to a case just written (add-case, reduce, fuzz) into a corpus with a rules file when it
    names no rule (tests/test_rules.py requires one); None when it names some or its corpus has no rules."""
    corpus = case_path.parent.parent  # cases/compile/ID.yaml: the corpus is cases/
    if named or not rules_path(corpus).is_file():
        return None
    return (
        f"name the rules it pins: add `rules: [ID, ...]` to {case_path} (ids from {rules_path(corpus)}, "
        "`conformance list --rules`; docs/cases.md, Rules)"
    )


def is_rules_file(path: Path) -> bool:
    """Whether `path` is a corpus's rules file rather than a case (a case lives in one of CASE_FOLDERS)."""
    return path.name == RULES_FILE and path.parent.name not in CASE_FOLDERS


def corpus_root(case_path: Path) -> Path | None:
    """The corpus root of a case file: the parent of its compile/ or lifecycle/ folder; None for a case elsewhere."""
    return case_path.parent.parent if case_path.parent.name in CASE_FOLDERS else None


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
        _check_profiles(path, root, index, entry)
        rules[entry["id"]] = Rule(
            id=entry["id"],
            statement=entry["statement"],
            upstream=entry["upstream"],
            port=entry["port"],
            profiles=tuple(entry.get("profiles", ())),
            feature=bool(entry.get("feature", False)),
            line=line,
            otherwise=tuple(entry.get("otherwise", ())),
            models=tuple((profile, tuple(models)) for profile, models in entry.get("models", {}).items()),
        )
    _check_features(path, root, data["rules"], rules)
    return rules


def _nearest(word: str, known: Iterable[str]) -> str:
    near = difflib.get_close_matches(word, list(known), n=1)
    return f"did you mean {near[0]!r}?" if near else ""


def _check_profiles(path: Path, root: yaml.Node, index: int, entry: dict[str, Any]) -> None:
    """Every profile a rule names (in `profiles` and `models`) is a profile name of letta_profiles."""
    named = [(["rules", index, "profiles", n], p) for n, p in enumerate(entry.get("profiles", ()))]
    named += [(["rules", index, "models", p], p) for p in entry.get("models", {})]
    for where, profile in named:
        if profile not in PROFILE_NAMES:
            fix = _nearest(profile, PROFILE_NAMES) or f"write a profile name: {', '.join(PROFILE_NAMES)}"
            raise ScenarioError(path, line_at(root, where), f"rule {entry['id']!r}: unknown profile {profile!r}; {fix}")
        if where[2] == "models" and entry.get("profiles") and profile not in entry["profiles"]:
            raise ScenarioError(
                path,
                line_at(root, where),
                f"rule {entry['id']!r}: models for {profile!r}, a profile it does not hold for; "
                "add it to `profiles` or drop the entry",
            )


def _check_features(path: Path, root: yaml.Node, entries: list[dict[str, Any]], rules: Mapping[str, Rule]) -> None:
    """Features are exactly FEATURES; only features have `models`; `otherwise` names features, on a rule that does
    not hold for every profile (elsewhere it would never apply)."""
    for index, entry in enumerate(entries):
        rule = rules[entry["id"]]
        if rule.feature != (rule.id in FEATURES):
            features = ", ".join(FEATURES)
            fix = (
                f"mark it `feature: true` (the features are {features})"
                if rule.id in FEATURES
                else f"the features are {features} (harness.cases.rules.FEATURES); drop `feature: true`"
            )
            raise ScenarioError(path, rule.line, f"rule {rule.id!r}: {fix}")
        if "models" in entry and not rule.feature:
            where = ["rules", index, "models"]
            raise ScenarioError(path, line_at(root, where), f"rule {rule.id!r}: only a feature has `models`")
        if rule.otherwise and not rule.profiles:
            where = ["rules", index, "otherwise"]
            fix = "list the profiles it holds for, or drop `otherwise`"
            raise ScenarioError(
                path,
                line_at(root, where),
                f"rule {rule.id!r} holds for every profile, so its `otherwise` never applies; {fix}",
            )
        for position, other in enumerate(rule.otherwise):
            if other not in FEATURES or other == rule.id:
                fix = _nearest(other, FEATURES) or f"name features: {', '.join(FEATURES)}"
                where = ["rules", index, "otherwise", position]
                raise ScenarioError(path, line_at(root, where), f"rule {rule.id!r}: otherwise {other!r}; {fix}")


# rules.yaml path -> (its stat signature, its rules or the error reading it): read once per corpus root
_LOADED: dict[Path, tuple[tuple[int, int], dict[str, Rule] | ScenarioError]] = {}


def corpus_rules(root: Path) -> dict[str, Rule] | None:
    """The rules of the corpus rooted at `root`, read once (again only when the file changes); None when the
    corpus has no rules file. A bad rules file raises its ScenarioError, each time it is asked for."""
    path = rules_path(root)
    try:
        stat = path.stat()
    except FileNotFoundError:
        return None
    key, signature = path.resolve(), (stat.st_mtime_ns, stat.st_size)
    cached = _LOADED.get(key)
    if cached is None or cached[0] != signature:
        try:
            loaded: dict[str, Rule] | ScenarioError = load_rules(path)
        except ScenarioError as error:
            loaded = error
        _LOADED[key] = cached = (signature, loaded)
    if isinstance(cached[1], ScenarioError):
        raise cached[1]
    return cached[1]


def rules_of_cases(scenarios: Iterable[Scenario], roots: Iterable[Path] = ()) -> dict[str, Rule] | None:
    """The rules of the corpus `scenarios` come from (the corpus roots of their files, and `roots`): None when
    that corpus has no rules file; a ValueError naming them when they come from several corpora with rules. A bad
    rules file raises its ScenarioError."""
    found: dict[Path, dict[str, Rule]] = {}
    for root in sorted({*roots, *filter(None, (corpus_root(s.path) for s in scenarios))}):
        rules = corpus_rules(root)
        if rules is not None:
            found[rules_path(root).resolve()] = rules
    if len(found) > 1:
        raise ValueError(f"these cases come from {len(found)} corpora ({', '.join(map(str, found))})")
    return next(iter(found.values()), None)


def check_case_rules(path: Path, root: yaml.Node, ids: list[str]) -> None:
    """A case's `rules:` name rules of its corpus (cases/rules.yaml beside compile/ and lifecycle/); an unknown
    id is a ScenarioError at its line with the nearest known id. A case outside a corpus, or in a folder of
    cases copied without the corpus's rules.yaml, has nothing to be checked against and is not checked."""
    corpus = corpus_root(path) if ids else None
    rules = corpus_rules(corpus) if corpus is not None else None
    if corpus is None or rules is None:
        return
    for index, rule_id in enumerate(ids):
        if rule_id not in rules:
            fix = _nearest(rule_id, rules) or f"add it to {rules_path(corpus)} or name one listed there"
            raise ScenarioError(path, line_at(root, ["rules", index]), f"rules: unknown rule {rule_id!r}; {fix}")


def _profile_name(profile: str) -> str:
    try:
        return resolve_profile_name(profile)
    except KeyError:
        return profile


def holds_for(rule: Rule, profile: str | None) -> bool:
    """Whether `rule` holds under `profile` (None: the implementation's default, taken as every profile)."""
    return not rule.profiles or profile is None or _profile_name(profile) in rule.profiles


def agent_models(scenario: Scenario) -> frozenset[str | None]:
    """The agent models a lifecycle case runs on: its opening `model` (None: upstream's default) and each
    `model` step's."""
    steps = (step["model"] for step in scenario.steps if isinstance(step, dict) and "model" in step)
    return frozenset([scenario.model, *steps])


def needed_features(scenario: Scenario, profile: str | None, rules: Mapping[str, Rule]) -> frozenset[str]:
    """The layout features (feature rules) a case exercises under `profile`: an implementation that does not
    declare one of them in `hello` is not applicable to the case under that profile (docs/protocol.md).

    A feature the case names counts where it holds (`profiles`) and, where it has `models` for the profile,
    only when the case's agent is on one of them. Where a rule the case names does not hold, its `otherwise`
    features count in its place (a root MEMORY.md before 0.33.3 is an ordinary file of the v1 layout)."""
    needed: set[str] = set()
    pending = [rule_id for rule_id in scenario.rules if rule_id in rules]
    seen: set[str] = set()
    while pending:
        rule = rules[pending.pop()]
        if rule.id in seen:
            continue
        seen.add(rule.id)
        if not holds_for(rule, profile):
            pending += [other for other in rule.otherwise if other in rules]
            continue
        if not rule.feature:
            continue
        models = rule.models_under(_profile_name(profile)) if profile is not None else None
        if models is None or agent_models(scenario) & set(models):
            needed.add(rule.id)
    return frozenset(needed)


def case_counts(scenarios: Iterable[Scenario], rules: Mapping[str, Rule]) -> dict[str, int]:
    """How many of `scenarios` name each rule, in rules.yaml's order (0 for a rule no case names)."""
    counts = dict.fromkeys(rules, 0)
    for scenario in scenarios:
        for rule_id in scenario.rules:
            if rule_id in counts:
                counts[rule_id] += 1
    return counts
