"""The protocol's op table (harness.core.protocol.OPS) against every copy of the op list it stands for.

The schema's request and answer definitions, the op sections of docs/protocol.md and hello's example there,
the driver's handlers (reference/driver.mjs), the Letta server driver's handlers, and the port's OPS each
name the ops; a new op added to one and not the others fails here. Also the one decoder (`decode`), which
every runner uses: what an answer becomes, and that a malformed one is an error, never a record.
"""

from __future__ import annotations

import ast
import json
import re
from typing import Any

import pytest

from harness.acquire.manifest import DRIVER_PATH, REPO_ROOT
from harness.core import protocol
from harness.core.model import CompileRequest, LifecycleOpen
from harness.core.protocol import OPS, decode
from memfs_prompt import protocol as port_protocol

SCHEMA = json.loads((REPO_ROOT / "reference" / "protocol.schema.json").read_text(encoding="utf-8"))
DOC = (REPO_ROOT / "docs" / "protocol.md").read_text(encoding="utf-8")


def refs(union: dict[str, Any]) -> list[str]:
    return [entry["$ref"].removeprefix("#/$defs/") for entry in union.get("oneOf", union.get("anyOf", []))]


def test_the_schema_defines_a_request_and_an_answer_for_each_op_and_no_other() -> None:
    defs = SCHEMA["$defs"]
    assert refs(defs["request"]) == [op.request_def for op in OPS.values()]
    assert refs(defs["answer"]) == [op.answer_def for op in OPS.values()] + list(protocol.FAILURE_ANSWER_DEFS)
    for op in OPS.values():
        assert defs[op.request_def]["properties"]["op"] == {"const": op.name}, op.name
        answer = defs[op.answer_def]
        assert set(op.record) <= set(answer["properties"]), op.name  # the record is made of the answer's keys
    named = {name for name in defs if name.endswith(("Request", "Answer"))}
    assert named == {d for op in OPS.values() for d in (op.request_def, op.answer_def)} | set(
        protocol.FAILURE_ANSWER_DEFS
    )


def test_docs_have_one_section_per_op_and_hello_lists_them_all() -> None:
    ops_part = DOC.split("\n## Ops\n", 1)[1].split("\n## ", 1)[0]
    sections = [re.findall(r"`(\w+)`", line) for line in ops_part.splitlines() if line.startswith("### ")]
    assert [name for names in sections for name in names] == list(OPS)
    example = re.search(r'"ops": (\[[^\]]*\])', ops_part)
    assert example is not None and json.loads(example.group(1)) == list(OPS)


def test_the_driver_handles_every_op() -> None:
    source = DRIVER_PATH.read_text(encoding="utf-8")
    block = source.split("\nconst HANDLERS = {\n", 1)[1].split("\n};\n", 1)[0]
    assert sorted(re.findall(r"^  (\w+): ", block, flags=re.MULTILINE)) == sorted(OPS)


def test_the_letta_server_driver_handles_the_required_ops_and_lists_its_table() -> None:
    tree = ast.parse((REPO_ROOT / "reference" / "letta_server" / "driver.py").read_text(encoding="utf-8"))
    table = next(
        node.value
        for node in tree.body
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id == "HANDLERS"
    )
    assert isinstance(table, ast.Dict)
    handled = [ast.literal_eval(key) for key in table.keys if key is not None]
    assert {name for name, op in OPS.items() if op.required} <= set(handled) <= set(OPS)


def test_the_port_serves_every_op() -> None:
    assert list(port_protocol.OPS) == list(OPS)


def test_the_request_records_are_requests_of_the_table(tmp_path) -> None:
    compiled = CompileRequest(tmp_path, "S", "a", "c", "2026-01-01T00:00:00Z").to_wire()
    opened = LifecycleOpen(tmp_path, tmp_path / "s", "S", "2026-01-01T00:00:00Z").to_wire("s1")
    assert [protocol.op_of(compiled).name, protocol.op_of(opened).name] == ["compile", "lifecycle_open"]
    with pytest.raises(KeyError):
        protocol.request("frobnicate")


COMPILE, OPEN, CLOSE = OPS["compile"], OPS["lifecycle_open"], OPS["lifecycle_close"]


@pytest.mark.parametrize(
    ("op", "answer", "status", "record"),
    [
        (COMPILE, {"ok": True, "record": {"content": "c"}}, "ok", {"content": "c"}),
        (
            COMPILE,
            {"ok": True, "record": {"content": "c"}, "systemPromptWithSkills": "s"},
            "ok",
            {"content": "c", "systemPromptWithSkills": "s"},
        ),
        (
            OPEN,
            {"ok": True, "opened": {"agentId": "a"}, "compiled": None, "x": 1},
            "ok",
            {"opened": {"agentId": "a"}, "compiled": None},
        ),
        (CLOSE, {"ok": True, "closed": True}, "ok", {"closed": True}),
        (COMPILE, {"ok": True, "thrown": "E: x"}, "thrown", None),
        (COMPILE, {"ok": False, "unsupported": 'op "compile"'}, "unsupported", None),
        (COMPILE, {"ok": False, "error": "bad"}, "error", None),
        (COMPILE, {"ok": True, "record": "not an object"}, "error", None),
        (COMPILE, {"ok": True, "record": ["a"]}, "error", None),
        (COMPILE, {"ok": True}, "error", None),
        (OPEN, {"ok": True, "opened": "a", "compiled": None}, "error", None),
        (CLOSE, {"ok": True}, "error", None),
        (COMPILE, ["not", "an", "object"], "error", None),
    ],
)
def test_decode_makes_one_outcome_of_an_answer(op: protocol.Op, answer: Any, status: str, record: Any) -> None:
    outcome = decode(op, answer, 1.0, stderr="tail")
    assert (outcome.status, outcome.record) == (status, record)
    assert outcome.stderr == ("tail" if isinstance(answer, dict) and "error" in answer else "")


def test_decode_says_what_pollution_did_to_the_process() -> None:
    restarted = decode(COMPILE, {"ok": True, "record": {}, "polluted": True}, 1.0)
    restored = decode(COMPILE, {"ok": True, "thrown": "E", "polluted": True, "restored": True}, 1.0)
    assert restarted.polluted and "restarted" in restarted.notes[0]
    assert restored.polluted and "restored it in place" in restored.notes[0]
