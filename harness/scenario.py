"""Loading scenarios: YAML files in cases/, validated against schema.json, errors with file and line."""

from __future__ import annotations

import base64
import hashlib
import json
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from memfs_prompt.cli import DEFAULT_AGENT_ID, DEFAULT_CONVERSATION_ID, DEFAULT_SYSTEM

DEFAULT_INPUTS: dict[str, Any] = {
    "system": DEFAULT_SYSTEM,
    "agent_id": DEFAULT_AGENT_ID,
    "conversation_id": DEFAULT_CONVERSATION_ID,
    "now": "2026-01-02T03:04:05.678Z",
    "previous_message_count": 0,
    "include_memfs": True,
}


MAX_SCENARIO_BYTES = 1024 * 1024  # a scenario is a description; big content comes from `repeat` or `generate`
MAX_FILE_BYTES = 64 * 1024 * 1024  # one repository file after `repeat`


class ScenarioError(Exception):
    """A scenario file that cannot be used; the message names the file, the line and the fix."""

    def __init__(self, path: Path, line: int | None, message: str) -> None:
        self.path, self.line = path, line
        where = f"{path}:{line}" if line else str(path)
        super().__init__(f"{where}: {message}")


@dataclass(frozen=True)
class Divergence:
    references: tuple[str, ...]
    fields: tuple[str, ...]
    kind: str
    reason: str
    link: str | None = None

    def applies_to(self, reference: str) -> bool:
        return "*" in self.references or reference in self.references


@dataclass(frozen=True)
class Explanation:
    """One `explains` entry: a change of upstream's own output that the case pins (harness.drift)."""

    change: str
    since: str | None = None
    runtime: str | None = None
    locale: str | None = None
    releases: tuple[str, ...] = ()
    fields: tuple[str, ...] = ()
    sections: tuple[str, ...] = ()


@dataclass(frozen=True)
class Scenario:
    id: str
    description: str
    path: Path
    tags: tuple[str, ...]
    inputs: dict[str, Any]
    repo: dict[str, Any]
    pins: str = ""
    profiles: tuple[str, ...] = ()
    expect: dict[str, Any] | None = None
    divergences: tuple[Divergence, ...] = ()
    explains: tuple[Explanation, ...] = ()
    line: int = 1
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def kind(self) -> str:
        return self.path.parent.name  # compile / lifecycle

    def repo_digest(self) -> str:
        """Identifies the materialized repository: same repo spec, same bytes on disk."""
        canonical = json.dumps(self.repo, sort_keys=True, ensure_ascii=True)
        return hashlib.sha256(canonical.encode("ascii")).hexdigest()[:20]

    def divergences_for(self, reference: str) -> list[Divergence]:
        return [d for d in self.divergences if d.applies_to(reference)]


@dataclass
class LoadResult:
    scenarios: list[Scenario]
    errors: list[ScenarioError]


def _schema() -> dict[str, Any]:
    return json.loads(resources.files("harness").joinpath("schema.json").read_text(encoding="utf-8"))


def _node_at(node: yaml.Node, path: list[Any]) -> yaml.Node:
    """The YAML node at a JSON path, for the line number of a schema error."""
    for key in path:
        if isinstance(node, yaml.MappingNode):
            match = next((v for k, v in node.value if k.value == key), None)
            if match is None:
                return node
            node = match
        elif isinstance(node, yaml.SequenceNode) and isinstance(key, int) and key < len(node.value):
            node = node.value[key]
        else:
            return node
    return node


def _key_node_at(node: yaml.Node, path: list[Any]) -> yaml.Node | None:
    """The key node of the last path element (a mapping key's own line)."""
    parent = _node_at(node, path[:-1])
    if isinstance(parent, yaml.MappingNode):
        return next((k for k, _ in parent.value if k.value == path[-1]), None)
    return None


def _fix_hint(error: jsonschema.ValidationError) -> str:
    if error.validator == "additionalProperties":
        return " (remove it, or check its spelling against harness/schema.json)"
    if error.validator == "required":
        return " (add it)"
    if error.validator in ("enum", "pattern", "type", "oneOf"):
        return " (see harness/schema.json for the allowed forms)"
    return ""


def load_scenario(path: Path) -> Scenario:
    """Parse and validate one file; raises ScenarioError naming the file, line and fix."""
    size = path.stat().st_size
    if size > MAX_SCENARIO_BYTES:
        raise ScenarioError(
            path, None, f"{size} bytes is over the {MAX_SCENARIO_BYTES}-byte limit for a scenario file; "
            "make big contents with `repeat` or `generate`"
        )  # fmt: skip
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        line = raw[: error.start].count(b"\n") + 1
        raise ScenarioError(path, line, f"not UTF-8 ({error.reason} at byte {error.start}); save it as UTF-8") from None
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        yaml_line: int | None = mark.line + 1 if mark else None
        raise ScenarioError(path, yaml_line, f"invalid YAML: {getattr(error, 'problem', error)}") from None
    alias = next((e for e in yaml.parse(text, Loader=yaml.SafeLoader) if isinstance(e, yaml.AliasEvent)), None)
    if alias is not None:
        raise ScenarioError(
            path,
            alias.start_mark.line + 1 if alias.start_mark else None,
            f"YAML alias *{alias.anchor} is not allowed in scenarios; write the value out",
        )
    if not isinstance(data, dict) or root is None:
        raise ScenarioError(path, 1, "a scenario is a mapping with id, description and repo")
    validator = jsonschema.Draft202012Validator(_schema())
    errors = sorted(validator.iter_errors(data), key=lambda e: list(e.absolute_path))
    if errors:
        first = min(errors, key=lambda e: len(list(e.absolute_path)))
        where = list(first.absolute_path)
        if first.validator == "additionalProperties" and isinstance(first.instance, dict):
            allowed = set(first.schema.get("properties", {}))
            extra = [k for k in first.instance if k not in allowed]
            where = where + extra[:1]  # point at the unexpected key itself
            key_node = _key_node_at(root, where)
            line = (key_node or _node_at(root, where)).start_mark.line + 1
        else:
            line = _node_at(root, where).start_mark.line + 1
        field_name = "/".join(str(p) for p in where) or "(top level)"
        raise ScenarioError(path, line, f"{field_name}: {first.message}{_fix_hint(first)}")
    _check_content(path, root, data)
    inputs = {**DEFAULT_INPUTS, **data.get("inputs", {})}
    return Scenario(
        id=data["id"],
        description=data["description"],
        path=path,
        tags=tuple(data.get("tags", ())),
        inputs=inputs,
        repo=data["repo"],
        pins=data.get("pins", ""),
        profiles=tuple(data.get("profiles", ())),
        expect=data.get("expect"),
        divergences=tuple(
            Divergence(tuple(d["references"]), tuple(d["fields"]), d["kind"], d["reason"], d.get("link"))
            for d in data.get("divergences", ())
        ),
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
        line=_node_at(root, ["id"]).start_mark.line + 1,
        raw=data,
    )


def _check_content(path: Path, root: yaml.Node, data: dict[str, Any]) -> None:
    """Checks the schema cannot express: valid base64, one repo source, steps only in lifecycle cases."""
    repo = data["repo"]
    lifecycle_keys = [k for k in ("steps", "facts", "model", "delivery", "golden", "recorded") if k in data]
    if path.parent.name == "lifecycle":
        if "steps" not in data:
            raise ScenarioError(path, 1, "a lifecycle case needs `steps` (turns, commits, ...); see docs/cases.md")
        if repo.get("kind", "git") != "git":
            line = _node_at(root, ["repo", "kind"]).start_mark.line + 1
            raise ScenarioError(path, line, "repo: a lifecycle case starts from a committed git repo (kind: git)")
        if "delivery" in data and "golden" not in data:
            line = _node_at(root, ["delivery"]).start_mark.line + 1
            raise ScenarioError(path, line, "delivery: only golden cases choose it (upstream has one delivery)")
    elif lifecycle_keys:
        line = _key_node_at(root, [lifecycle_keys[0]])
        raise ScenarioError(
            path,
            (line.start_mark.line + 1) if line else 1,
            f"{lifecycle_keys[0]}: only lifecycle cases take it; move the file to cases/lifecycle/",
        )
    if repo.get("commits") and repo.get("generate"):
        line = _node_at(root, ["repo", "generate"]).start_mark.line + 1
        raise ScenarioError(path, line, "repo: give either commits or generate, not both")
    for index, commit in enumerate(repo.get("commits", ())):
        files = commit.get("files", {})
        entries = files.items() if isinstance(files, dict) else [(e.get("path"), e["content"]) for e in files]
        for name, content in entries:
            if isinstance(content, dict) and "text" in content:
                size = len(content["text"].encode("utf-8", "surrogatepass")) * content.get("repeat", 1)
                if size > MAX_FILE_BYTES:
                    where = ["repo", "commits", index, "files"] + ([name] if name else [])
                    line = _node_at(root, where).start_mark.line + 1
                    raise ScenarioError(
                        path, line, f"{name}: text x repeat is {size} bytes, over the {MAX_FILE_BYTES}-byte limit; "
                        "lower `repeat`"
                    )  # fmt: skip
            if isinstance(content, dict) and "base64" in content:
                try:
                    base64.b64decode(content["base64"], validate=True)
                except ValueError:
                    where = ["repo", "commits", index, "files"] + ([name] if name else [])
                    line = _node_at(root, where).start_mark.line + 1
                    raise ScenarioError(
                        path, line, f"{name}: base64 is not valid; encode the bytes with base64"
                    ) from None


def discover(paths: list[Path]) -> list[Path]:
    """Every *.yaml under the given files or directories, in a stable order."""
    found: set[Path] = set()
    for path in paths:
        if path.is_dir():
            found.update(p for p in path.rglob("*.yaml") if p.is_file())
        elif path.exists():
            found.add(path)
    return sorted(found)


def load_scenarios(paths: list[Path]) -> LoadResult:
    """Load every scenario; bad files become errors and the others still load. Duplicate ids are errors."""
    scenarios: list[Scenario] = []
    errors: list[ScenarioError] = []
    seen: dict[str, Path] = {}
    for path in discover(paths):
        try:
            scenario = load_scenario(path)
        except ScenarioError as error:
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
    return LoadResult(scenarios, errors)
