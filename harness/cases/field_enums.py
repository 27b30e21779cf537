"""The `fields` enums of harness/cases/schema.json, written from the table of compared fields.

JSON Schema cannot import, so the two lists of field names the scenario format allows (a divergence's
`fields`, an explanation's `fields`) are copies of harness.core.fields (DIVERGENCE_FIELDS,
EXPLANATION_FIELDS). This module owns keeping them so: `stale_enums` names the lists that differ from
the table (tests/test_fields.py fails on any), and `python -m harness.cases.field_enums` rewrites them
in place, leaving every other byte of the file as it is.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

from harness.core.fields import DIVERGENCE_FIELDS, EXPLANATION_FIELDS

SCHEMA = Path(__file__).with_name("schema.json")
#: the schema's definitions whose `fields` property lists field names, and the list each must hold
ENUMS: dict[str, tuple[str, ...]] = {"divergence": DIVERGENCE_FIELDS, "explanation": EXPLANATION_FIELDS}
#: one definition's `fields` line (the schema keeps each property on one line)
_FIELDS_LINE = re.compile(r'^(\s*"fields": \{"type": "array", "items": \{"enum": )(\[[^\]]*\])')
_DEFINITION = re.compile(r'^    "([\w-]+)": \{')


def enums_in(schema: dict[str, Any]) -> dict[str, list[str]]:
    """The `fields` enum of each definition in ENUMS, as the schema holds it."""
    return {name: schema["$defs"][name]["properties"]["fields"]["items"]["enum"] for name in ENUMS}


def stale_enums(schema: dict[str, Any]) -> list[str]:
    """The definitions whose `fields` enum is not the table's list (in the table's order)."""
    return [name for name, names in enums_in(schema).items() if tuple(names) != ENUMS[name]]


def rewritten(text: str) -> str:
    """schema.json's text with each ENUMS definition's `fields` enum written from the table."""
    lines = text.splitlines(keepends=True)
    definition = None
    for number, line in enumerate(lines):
        opened = _DEFINITION.match(line)
        if opened:
            definition = opened.group(1)
        matched = _FIELDS_LINE.match(line)
        if matched and definition in ENUMS:
            enum = json.dumps(list(ENUMS[definition]))
            lines[number] = matched.group(1) + enum + line[matched.end() :]
    return "".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Rewrite schema.json's `fields` enums from the table (`--check`: only say whether they are stale)."""
    args = sys.argv[1:] if argv is None else argv
    text = SCHEMA.read_text(encoding="utf-8")
    stale = stale_enums(json.loads(text))
    if "--check" in args:
        print(f"stale `fields` enums in {SCHEMA}: {', '.join(stale)}" if stale else "schema.json agrees")
        return 1 if stale else 0
    SCHEMA.write_text(rewritten(text), encoding="utf-8")
    print(f"wrote the `fields` enums of {SCHEMA} ({', '.join(ENUMS)})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
