"""Strict YAML for the corpus's files (cases, cases/rules.yaml, expectations): UTF-8 text, no aliases, no keys
given twice, no keys that are not text; every refusal a ScenarioError with the file, the line and the fix.

Owns how such a file is read into (its node tree, for lines; its data). What a case, a rule or an expectations
entry may hold is its own loader's (harness.cases.load, harness.cases.rules, harness.run.expectations).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from harness.cases.yamlerrors import plain_yaml_error
from harness.core.model import ScenarioError


class _KeyProblem(yaml.YAMLError):
    def __init__(self, line: int, message: str) -> None:
        super().__init__(message)
        self.line, self.message = line, message


class _StrictLoader(yaml.SafeLoader):
    """SafeLoader that refuses keys that are not strings (`123:`, `on:`) and keys given twice, and notes the
    first alias it composes (so one parse gives the node tree, the data and the alias to refuse)."""

    first_alias: yaml.AliasEvent | None = None

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node | None:
        if self.first_alias is None and self.check_event(yaml.AliasEvent):
            self.first_alias = self.peek_event()  # type: ignore[no-untyped-call]
        return super().compose_node(parent, index)

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            line = key_node.start_mark.line + 1
            if not isinstance(key, str):
                raise _KeyProblem(
                    line, f"key {key_node.value!r} reads as {type(key).__name__} {key!r}, not text; quote it"
                )
            if key in seen:
                raise _KeyProblem(line, f"key {key!r} is given twice (first on line {seen[key]}); keep one")
            seen[key] = line
        return super().construct_mapping(node, deep)


def read_utf8(path: Path) -> str:
    """A YAML file's text; bytes that are not UTF-8 are a ScenarioError naming their line."""
    raw = path.read_bytes()
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as error:
        line = raw[: error.start].count(b"\n") + 1
        raise ScenarioError(path, line, f"not UTF-8 ({error.reason} at byte {error.start}); save it as UTF-8") from None


def parse_strict(text: str, path: Path, what: str = "scenarios") -> tuple[yaml.Node | None, Any]:
    """YAML text as (its node tree, for lines; its data), refusing aliases, duplicate keys and keys that are
    not text, each refusal a ScenarioError with the line; `what` names the kind of file in the message."""
    loader = _StrictLoader(text)
    try:
        root = loader.get_single_node()
        data = loader.construct_document(root) if root is not None else None
    except _KeyProblem as problem:
        raise ScenarioError(path, problem.line, problem.message) from None
    except yaml.YAMLError as error:
        plain = plain_yaml_error(error)
        raise ScenarioError(path, plain.line, f"invalid YAML: {plain.message}") from None
    finally:
        loader.dispose()
    alias = loader.first_alias
    if alias is not None:
        raise ScenarioError(
            path,
            alias.start_mark.line + 1 if alias.start_mark else None,
            f"YAML alias *{alias.anchor} is not allowed in {what}; write the value out",
        )
    return root, data
