"""Loading scenarios: YAML files in cases/ to typed Scenarios, every refusal with file, line and fix.

Owns the loader's rules: a file is strict YAML (cases.strict: UTF-8, no aliases, duplicate keys or keys
that are not strings); it validates against schema.json (cases.schemacheck words the problem); its `id` is
its file name; its tags come from cases.tags; the rules it names are its corpus's (cases.rules, read once
per corpus root); its kind (compile or lifecycle) is its folder's name. What the repository spec may name
(confinement, history) is cases.checks'. A bad file is an error and the others still load; the corpus's
rules.yaml is no case.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from harness.cases.checks import check_content
from harness.cases.inputs import clock_error, is_invalid_date, js_value, non_finite_at
from harness.cases.memo import ScenarioMemo
from harness.cases.rules import CASE_FOLDERS, check_case_rules, is_rules_file
from harness.cases.schemacheck import validate
from harness.cases.strict import parse_strict, read_utf8
from harness.cases.tags import TAGS
from harness.cases.yamlnodes import line_at, node_at
from harness.core.model import GOLDEN, Divergence, Explanation, FoundBy, Recorded, Scenario, ScenarioError
from harness.core.reference import ReferenceSpec, recorded_label
from harness.core.suggest import nearest
from letta_profiles import resolve_profile_name

# The harness's own pinned inputs, not the port CLI's defaults: the code under test must not choose
# the requests it is judged on (a mutant of memfs_prompt/cli.py would otherwise change them).
DEFAULT_INPUTS: dict[str, Any] = {
    "system": "You are a helpful agent.\n\n{CORE_MEMORY}",
    "agent_id": "agent-conformance",
    "conversation_id": "conv-conformance",
    "now": "2026-01-02T03:04:05.678Z",
    "previous_message_count": 0,
    "include_memfs": True,
}
MAX_SCENARIO_BYTES = 1024 * 1024  # a scenario is a description; big content comes from `repeat` or `generate`


@dataclass
class LoadResult:
    scenarios: list[Scenario]
    errors: list[ScenarioError]


def _schema() -> dict[str, Any]:
    return json.loads(resources.files("harness.cases").joinpath("schema.json").read_text(encoding="utf-8"))


def kind_of(path: Path) -> str:
    """A case's kind is the name of the folder holding it: cases/lifecycle/ holds lifecycle probes, cases/ops/
    one-shot op cases."""
    return CASE_FOLDERS.get(path.parent.name, "compile")  # a case outside a corpus's folders is a compile case


def load_scenario(path: Path) -> Scenario:
    """Parse and validate one file; raises ScenarioError naming the file, line and fix."""
    size = path.stat().st_size
    if size > MAX_SCENARIO_BYTES:
        raise ScenarioError(
            path,
            None,
            f"{size} bytes is over the {MAX_SCENARIO_BYTES}-byte limit for a scenario file; "
            "make big contents with `repeat` or `generate`",
        )
    return load_text(read_utf8(path), path, kind_of(path))


def load_text(text: str, path: Path, kind: str) -> Scenario:
    """A scenario from its YAML text; `path` names it in errors (and its stem must be the id)."""
    root, data = parse_strict(text, path)
    if not isinstance(data, dict) or root is None:
        raise ScenarioError(path, 1, "a scenario is a mapping with id, description and repo")
    validate(path, root, data, _schema(), "harness/cases/schema.json")
    if data["id"] != path.stem:
        raise ScenarioError(
            path,
            line_at(root, ["id"]),
            f"id {data['id']!r} is not the file name {path.name!r}: "
            f"rename the file to {data['id']}.yaml or set id: {path.stem}",
        )
    for index, tag in enumerate(data.get("tags", ())):
        if tag not in TAGS:
            near = nearest(tag, TAGS)
            fix = f"did you mean {near!r}?" if near else "use one from harness/cases/tags.py (or add it there)"
            raise ScenarioError(path, line_at(root, ["tags", index]), f"tags: unknown tag {tag!r}; {fix}")
    check_case_rules(path, root, data.get("rules", []))
    check_content(path, root, data, kind)
    _check_inputs(path, root, data.get("inputs", {}))
    _check_finite(path, root, data)
    if kind == "lifecycle":
        _check_opening_clock(path, root, data.get("inputs", {}))
    for index, step in enumerate(data.get("steps", ())):
        if "clock" in step:  # an Invalid Date is allowed here: the step throws on both sides (docs/lifecycle.md)
            _check_clock(path, root, ["steps", index, "clock"], step["clock"])
    return _scenario(path, root, data, kind)


def _check_clock(path: Path, root: yaml.Node, where: list[str | int], text: str) -> None:
    """A compile clock (`inputs.now`, a step's `clock`) is what `new Date(text)` reads alike everywhere
    (harness.cases.inputs.clock_error)."""
    if error := clock_error(text):
        raise ScenarioError(
            path,
            line_at(root, where),
            f"{'/'.join(map(str, where))}: {error}; write an ISO 8601 date-time such as 2026-01-02T03:04:05.678Z",
        )


def _check_opening_clock(path: Path, root: yaml.Node, inputs: dict[str, Any]) -> None:
    """A lifecycle case opens its agent and conversation at `inputs.now`: it must be a valid Date."""
    if "now" in inputs and is_invalid_date(inputs["now"]):
        raise ScenarioError(
            path,
            line_at(root, ["inputs", "now"]),
            f"inputs/now: {inputs['now']!r} is an Invalid Date, and a lifecycle case opens its conversation at it "
            "(the reference driver refuses that); open at a valid clock and make it invalid with a `clock` step",
        )


def _check_inputs(path: Path, root: yaml.Node, inputs: dict[str, Any]) -> None:
    """Inputs the schema lets through but JavaScript cannot hold, or the port cannot read as upstream does."""
    if "now" in inputs:
        _check_clock(path, root, ["inputs", "now"], inputs["now"])


def _check_finite(path: Path, root: yaml.Node, data: dict[str, Any]) -> None:
    """No NaN or infinity anywhere a request carries (`inputs`, `steps`): JSON has no form for them, so the
    request could reach no implementation (harness.cases.inputs.non_finite_at)."""
    for key in ("inputs", "steps"):
        where = non_finite_at(data.get(key), (key,))
        if where is not None:
            value: Any = data
            for part in where:
                value = value[part]
            raise ScenarioError(
                path,
                line_at(root, list(where)),
                f"{'/'.join(map(str, where))}: {value!r} is not a JSON number, so no request can carry it "
                "(JSON has no NaN or Infinity); write a finite number such as 3, 3.0, -5 or 1e21, or quote it as text",
            )


def _divergences(path: Path, root: yaml.Node, data: dict[str, Any]) -> tuple[Divergence, ...]:
    """The case's `divergences`, each reference as the label of the results it matches (manifest.recorded_label,
    the rule `--reference` is read by): a release that is not pinned, or a text `--reference` refuses,
    would never match a result, so it is refused at its line."""
    divergences = []
    for index, entry in enumerate(data.get("divergences", ())):
        labels = []
        for position, text in enumerate(entry["references"]):
            try:
                labels.append(recorded_label(text))
            except ValueError as error:
                where = ["divergences", index, "references", position]
                raise ScenarioError(path, line_at(root, where), f"divergences/{index}/references: {error}") from None
        fields = (tuple(entry["fields"]), entry["kind"], entry["reason"], entry.get("link"))
        divergences.append(Divergence(tuple(dict.fromkeys(labels)), *fields))
    return tuple(divergences)


def _recorded(path: Path, root: yaml.Node, data: dict[str, Any]) -> tuple[Recorded, ...]:
    """A lifecycle case's `recorded` entries, each target as what its results are judged as: the label of a
    reference's results (manifest.recorded_label, the rule a divergence's references follow), or in a golden
    case its profile (read as --profile reads it). A target no run of the case is judged as would leave its
    observations unchecked, so it is refused at its line."""
    golden = data["golden"]["profile"] if "golden" in data else None
    entries = []
    for index, entry in enumerate(data.get("recorded", ())):
        targets = []
        for position, text in enumerate(entry["for"]):
            try:
                targets.append(_reference_target(text) if golden is None else _profile_target(text, golden))
            except ValueError as error:
                line = line_at(root, ["recorded", index, "for", position])
                raise ScenarioError(path, line, f"recorded/{index}/for: {error}") from None
        entries.append(Recorded(tuple(dict.fromkeys(targets)), entry["source"], entry["observations"]))
    return tuple(entries)


def _reference_target(text: str) -> str:
    label = recorded_label(text)
    if label in ("*", GOLDEN):
        raise ValueError(
            f"{text!r} names no one reference, and observations are recorded for the releases that "
            "showed them: list those, as --reference names them (0.32.18, pypi:0.34.12)"
        )
    spec = ReferenceSpec.parse(text)
    if spec.is_variant:
        raise ValueError(
            f"{text!r}: lifecycle probes run under the baseline runtime only (docs/matrix.md), so these "
            f"observations would never be checked; write {spec.baseline.label!r}"
        )
    return label


def _profile_target(text: str, golden: str) -> str:
    profile = _profile_name(text)
    if profile != _profile_name(golden):
        raise ValueError(
            f"{text!r}: a golden case runs the Python port on its profile {golden!r} alone, so "
            f"observations recorded for another are never checked; write for: [{golden}]"
        )
    return profile


def _profile_name(text: str) -> str:
    """The profile --profile TEXT names, or TEXT when it names none (the run refuses it)."""
    try:
        return resolve_profile_name(text)
    except KeyError:
        return text


def _scenario(path: Path, root: yaml.Node, data: dict[str, Any], kind: str) -> Scenario:
    return Scenario(
        id=data["id"],
        description=data["description"],
        path=path,
        tags=tuple(data.get("tags", ())),
        inputs=js_value({**DEFAULT_INPUTS, **data.get("inputs", {})}),  # JavaScript strings, for every side
        repo=data["repo"],
        pins=data.get("pins", ""),
        rules=tuple(data.get("rules", ())),
        profiles=tuple(data.get("profiles", ())),
        expect=data.get("expect"),
        divergences=_divergences(path, root, data),
        explains=tuple(
            Explanation(
                e["change"],
                e.get("since"),
                e.get("runtime"),
                e.get("locale"),
                tuple(e.get("releases", ())),
                tuple(e.get("fields", ())),
                tuple(e.get("sections", ())),
            )
            for e in data.get("explains", ())
        ),
        line=node_at(root, ["id"]).start_mark.line + 1,
        kind=kind,
        steps=tuple(js_value(data.get("steps", []))),
        facts=dict(data.get("facts", {})),
        model=data.get("model"),
        delivery=data.get("delivery", "mid-conversation"),
        golden=data["golden"]["profile"] if "golden" in data else None,
        recorded=_recorded(path, root, data),
        found_by=FoundBy(**data["found_by"]) if "found_by" in data else None,
        op=data.get("op"),
        args=js_value(data.get("args", {})),
    )


def discover(paths: list[Path]) -> list[Path]:
    """Every *.yaml under the given files or directories, in a stable order."""
    found: set[Path] = set()
    for path in paths:
        if path.is_dir():
            found.update(p for p in path.rglob("*.yaml") if p.is_file() and not is_rules_file(p))
        elif path.exists():
            found.add(path)
    return sorted(found)


def load_scenarios(paths: list[Path], memo: ScenarioMemo | None = None) -> LoadResult:
    """Load every scenario; bad files become errors and the others still load. Duplicate ids are errors, and an
    error every case shares (a bad rules.yaml) is given once. `memo`: scenarios loaded before (harness.cases.memo)."""
    scenarios: list[Scenario] = []
    errors: list[ScenarioError] = []
    seen: dict[str, Path] = {}
    for path in discover(paths):
        try:
            scenario = memo.load(path, load_scenario) if memo is not None else load_scenario(path)
        except ScenarioError as error:
            if not any(str(error) == str(earlier) for earlier in errors):
                errors.append(error)
            continue
        if scenario.id in seen:
            errors.append(
                ScenarioError(
                    path, scenario.line, f"id {scenario.id!r} is already used by {seen[scenario.id]}; give it a new id"
                )
            )
            continue
        seen[scenario.id] = path
        scenarios.append(scenario)
    if memo is not None:
        memo.save()
    return LoadResult(scenarios, errors)
