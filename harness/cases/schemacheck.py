"""A YAML document against a JSON Schema, the first problem as a ScenarioError with its line and the fix.

Used by every strictly read file (cases: cases.load; expectations files: harness.run.expectations). Which
problem is reported first: the shallowest; at one depth an unknown key (named with the nearest allowed
key) before a missing one, since a misspelt key is also a missing one.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

if TYPE_CHECKING:
    import jsonschema

from harness.cases.yamlnodes import key_node_at, node_at
from harness.core.model import ScenarioError
from harness.core.suggest import nearest


def _nearest(word: object, choices: list[str]) -> str:
    """`; did you mean 'x'?` for the closest choice to a misspelt key or value, or nothing."""
    near = nearest(word, choices)
    return f"; did you mean {near!r}?" if near else ""


def _fix_hint(error: jsonschema.ValidationError, schema_file: str, extra: str | None = None) -> str:
    if error.validator == "additionalProperties":
        schema = error.schema if isinstance(error.schema, dict) else {}
        near = _nearest(extra, sorted(schema.get("properties", {})))
        return f"{near} (remove it, or check its spelling against {schema_file})"
    if error.validator == "required":
        return " (add it)"
    if error.validator == "type" and error.validator_value == "number" and isinstance(error.instance, str):
        try:
            float(error.instance)
        except ValueError:
            pass
        else:  # YAML 1.1 reads 1e21 (no dot) as text
            return f" (YAML reads {error.instance} as text; write the number with a dot and a signed exponent: 1.0e+21)"
    if error.validator == "minimum":
        return f" (write {error.validator_value} or more)"
    if error.validator == "enum":
        allowed = error.validator_value if isinstance(error.validator_value, list) else []
        near = _nearest(error.instance, [str(v) for v in allowed])
        return f" (see {schema_file} for the allowed values{near})"
    if error.validator in ("pattern", "type", "oneOf", "anyOf"):
        return f" (see {schema_file} for the allowed forms)"
    return ""


def validate(path: Path, root: yaml.Node, data: Any, schema: dict[str, Any], schema_file: str) -> None:
    """Check `data` against a JSON Schema; the first problem (the shallowest; at one depth an unknown key before
    the rest, since a misspelt key is also a missing one) is a ScenarioError with its line, an unknown key named
    with the nearest allowed one, and the fix (`schema_file` names the schema in hints)."""
    import jsonschema  # here: a warm run reads its cases from harness.cases.memo and never validates

    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(data), key=lambda e: list(e.absolute_path))
    if not errors:
        return
    first = min(errors, key=lambda e: (len(list(e.absolute_path)), e.validator != "additionalProperties"))
    first = _named_alternative(first)
    where: list[Any] = list(first.absolute_path)
    extra: list[str] = []
    if first.validator == "additionalProperties" and isinstance(first.instance, dict):
        allowed = set(first.schema.get("properties", {}) if isinstance(first.schema, dict) else {})
        extra = [k for k in first.instance if k not in allowed]
        where = where + extra[:1]  # point at the unexpected key itself
        key_node = key_node_at(root, where)
        line = (key_node or node_at(root, where)).start_mark.line + 1
    else:
        line = node_at(root, where).start_mark.line + 1
    hint = _fix_hint(first, schema_file, extra[0] if extra else None)
    if extra:  # named with the mapping that holds it
        others = f" (and {', '.join(map(repr, extra[1:]))})" if len(extra) > 1 else ""
        holder = "/".join(str(p) for p in where[:-1])
        raise ScenarioError(path, line, f"unknown key {extra[0]!r}{others}{f' in {holder}' if holder else ''}{hint}")
    field_name = "/".join(str(p) for p in where) or "(top level)"
    raise ScenarioError(path, line, f"{field_name}: {first.message}{hint}")


def _named_alternative(error: jsonschema.ValidationError) -> jsonschema.ValidationError:
    """A `oneOf` of mappings told apart by a required key (a lifecycle step: `reset`, `break_head`, ...) fails
    as a whole; when the mapping names exactly one alternative's keys, that alternative's own first problem is
    the one to report (`steps/0/break_head: 'unbron' is not one of ...`)."""
    while error.validator == "oneOf" and isinstance(error.instance, dict) and error.context:
        alternatives = error.validator_value if isinstance(error.validator_value, list) else []
        named = [
            index
            for index, alternative in enumerate(alternatives)
            if isinstance(alternative, dict)
            and alternative.get("required")
            and set(alternative["required"]) <= set(error.instance)
        ]
        inner = [e for e in error.context if named == [e.relative_schema_path[0]]]
        if not inner:
            break
        error = min(inner, key=lambda e: len(list(e.absolute_path)))
    return error
