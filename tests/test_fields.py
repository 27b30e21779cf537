"""The table of compared fields (harness.core.fields) is the one list: every copy the harness cannot import
(the scenario schema's enums, the protocol schema's record) agrees with it, and the readers that could hold a
list of their own (the matrix template, the comparison views) take theirs from it."""

from __future__ import annotations

import json
import re
from pathlib import Path

from harness.cases import field_enums
from harness.core.fields import (
    COMPARED_FIELDS,
    DIVERGENCE_FIELDS,
    EXPLANATION_FIELDS,
    FIELDS,
    GOLDEN_FIELDS,
    MATRIX_COLUMNS,
    OPTIONAL_FIELDS,
    SKILLS_FIELD,
    VIEWS,
)
from harness.core.model import CaseResult, Outcome, RunReport, Status
from harness.report.html import render_html

ROOT = Path(__file__).resolve().parents[1]
PROTOCOL_SCHEMA = ROOT / "reference" / "protocol.schema.json"
TEMPLATE = ROOT / "harness" / "report" / "templates" / "matrix_block.html.j2"


def test_each_field_is_named_once_in_the_table() -> None:
    names = [field.name for field in FIELDS]
    assert len(names) == len(set(names))
    assert SKILLS_FIELD in OPTIONAL_FIELDS and set(GOLDEN_FIELDS) <= set(COMPARED_FIELDS)


def test_the_scenario_schema_s_fields_enums_are_the_table_s() -> None:
    schema = json.loads(field_enums.SCHEMA.read_text(encoding="utf-8"))
    assert field_enums.stale_enums(schema) == [], "run `python -m harness.cases.field_enums`"
    assert field_enums.enums_in(schema) == {
        "divergence": list(DIVERGENCE_FIELDS),
        "explanation": list(EXPLANATION_FIELDS),
    }


def test_the_enum_writer_puts_a_stale_enum_back_and_leaves_every_other_byte() -> None:
    text = field_enums.SCHEMA.read_text(encoding="utf-8")
    listed = json.dumps(list(EXPLANATION_FIELDS))
    assert text.count(listed) == 1
    stale = text.replace(listed, json.dumps(list(EXPLANATION_FIELDS[1:])))
    assert field_enums.stale_enums(json.loads(stale)) == ["explanation"]
    assert field_enums.rewritten(stale) == text


def test_the_protocol_schema_s_record_has_the_compared_fields_in_upstream_s_order() -> None:
    record = json.loads(PROTOCOL_SCHEMA.read_text(encoding="utf-8"))["$defs"]["record"]
    assert tuple(record["properties"]) == COMPARED_FIELDS


def test_every_comparison_view_compares_fields_of_the_table() -> None:
    known = {field.name for field in FIELDS}
    for view in VIEWS:
        assert set(view.fields) <= known and set(view.golden) <= known, view.name
    assert set(MATRIX_COLUMNS) == {name for view in VIEWS for name in view.fields}


def test_the_matrix_template_writes_no_list_of_its_own() -> None:
    assert not any(f"'{field.name}'" in TEMPLATE.read_text(encoding="utf-8") for field in FIELDS)


def test_the_matrix_s_compared_fields_table_has_a_column_per_matrix_column() -> None:
    result = CaseResult("a", "0.30.28", "python", Status.PASS, (), "cases/compile/a.yaml")
    result.reference_outcome = Outcome("ok", record={"content": "c"})
    extra = {"matrix": {"compared_fields": {"0.30.28": {}}}}
    html = render_html(RunReport([result], [], [], ["conformance", "matrix"], extra=extra))
    table = html[html.index('<table id="compared-fields">') :]
    header = table[: table.index("</tr>")]
    assert re.findall(r"<th>([^<]*)</th>", header) == ["reference", *MATRIX_COLUMNS]
