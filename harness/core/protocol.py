"""The protocol's ops (docs/protocol.md) as one table, and the one decoder from an answer to an Outcome.

Owns what the harness knows of each op: its name on the wire, the schema definitions of its request and its
answer (reference/protocol.schema.json), which answer keys make the outcome's record, and whether every
implementation must answer it or may answer `unsupported`. A new op is one `Op` entry here, a handler in the
port (memfs_prompt/protocol.py) and one in the driver (reference/driver.mjs); every runner sends it through
`Runner.ask` (harness.runners.base), and tests/test_protocol_table.py checks the schema, the docs and the
programs' op lists against this table.

`decode` is the one place an answer becomes an outcome, for every runner (the JSON-lines children and the
port in process): `unsupported`, an error, an exception upstream threw, or a record; an ok answer whose
record is not a JSON object is an error. `ends_process` and `pollution_note` say what an answer's
`polluted` and `restored` mean for the process that wrote it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from harness.core.model import Outcome

#: the record field an op case compares the repository after a writing op as (harness.repo.after)
REPO_AFTER = "repoAfter"


@dataclass(frozen=True)
class Op:
    """One op of the protocol.

    `record`: the answer keys the outcome's record is made of. The first must be there, and hold a JSON
    object unless `scalar`; with `nested`, the record is `{key: answer[key]}` for each of them, else it is
    that object, with each `merge` key the answer has added to it. `required`: every implementation answers
    it (else it may answer `unsupported`). `lifecycle`: part of a lifecycle session (a program whose hello
    says `lifecycle: false` is not asked). `case`: an op case (cases/ops/, harness.run.op_case) can send it on
    a copy of its repository; with `compares_repo` the repository afterwards is compared too (`repoAfter`)."""

    name: str
    record: tuple[str, ...]
    merge: tuple[str, ...] = ()
    nested: bool = False
    scalar: bool = False
    required: bool = False
    lifecycle: bool = False
    case: bool = False
    compares_repo: bool = False

    @property
    def case_fields(self) -> tuple[str, ...]:
        """What an op case of this op compares: its record fields, `thrown` (as text), and `repoAfter` for an op
        that writes (harness.run.op_case)."""
        return (*self.record, "thrown", *((REPO_AFTER,) if self.compares_repo else ()))

    @property
    def schema_name(self) -> str:
        """The op's name in the schema's definitions: `lifecycle_open` -> `lifecycleOpen`."""
        head, *rest = self.name.split("_")
        return head + "".join(part.capitalize() for part in rest)

    @property
    def request_def(self) -> str:
        return f"{self.schema_name}Request"

    @property
    def answer_def(self) -> str:
        return f"{self.schema_name}Answer"


OPS: dict[str, Op] = {
    op.name: op
    for op in (
        Op("hello", record=("capabilities",), required=True),
        Op("compile", record=("record",), merge=("systemPromptWithSkills",), required=True),
        Op("skills_block", record=("block", "appended"), nested=True, scalar=True),
        Op("lifecycle_open", record=("opened", "compiled"), nested=True, lifecycle=True),
        Op("lifecycle_step", record=("observed",), lifecycle=True),
        Op("lifecycle_close", record=("closed",), nested=True, scalar=True, lifecycle=True),
        Op("memory_view", record=("view",), nested=True, scalar=True, case=True),
        Op("memory_write", record=("written",), nested=True, scalar=True, case=True, compares_repo=True),
        Op("memory_reminder", record=("syncStatus", "syncSummary", "reminder"), nested=True, scalar=True, case=True),
    )
}
#: the schema definitions every answer may be, whatever its op
FAILURE_ANSWER_DEFS = ("errorAnswer", "unsupportedAnswer")


def request(op: str, **fields: Any) -> dict[str, Any]:
    """A request of `op` (a name in OPS) with these fields, as a runner sends it (the id is the transport's)."""
    if op not in OPS:
        raise KeyError(f"{op!r} is not an op of the protocol (harness.core.protocol.OPS)")
    return {"op": op, **fields}


def op_of(payload: dict[str, Any]) -> Op:
    """The table's entry for a request built by `request` or a record's `to_wire`."""
    return OPS[payload["op"]]


def decode(op: Op, answer: Any, elapsed_ms: float, stderr: str = "") -> Outcome:
    """The outcome of one answer to a request of `op`. `stderr`: what the program wrote there, kept with an
    answer that says it failed."""
    if not isinstance(answer, dict):
        return Outcome("error", error=f"answer is not a JSON object: {str(answer)[:200]}", elapsed_ms=elapsed_ms)
    polluted = bool(answer.get("polluted"))
    notes = [pollution_note(answer)] if polluted else []
    if not answer.get("ok") and "unsupported" in answer:  # docs/protocol.md: not applicable, never a pass
        return Outcome("unsupported", error=str(answer["unsupported"]), elapsed_ms=elapsed_ms)
    if not answer.get("ok"):
        return Outcome("error", error=str(answer.get("error")), stderr=stderr, elapsed_ms=elapsed_ms)
    if "thrown" in answer:
        return Outcome("thrown", thrown=answer["thrown"], polluted=polluted, elapsed_ms=elapsed_ms, notes=notes)
    first = answer.get(op.record[0])
    if first is None or not (op.scalar or isinstance(first, dict)):
        return Outcome("error", error=f"answer has no {op.record[0]}: {str(answer)[:200]}", elapsed_ms=elapsed_ms)
    if op.nested:
        record = {key: answer.get(key) for key in op.record}
    else:
        record = {**first, **{name: answer[name] for name in op.merge if name in answer}}
    return Outcome("ok", record=record, polluted=polluted, elapsed_ms=elapsed_ms, notes=notes)


def ends_process(answer: dict[str, Any]) -> bool:
    """Whether the program exits after this answer (docs/protocol.md): polluted, and not restored in place."""
    return bool(answer.get("polluted")) and answer.get("restored") is not True


def pollution_note(answer: dict[str, Any]) -> str:
    """What a polluted answer's result says about the process it leaves."""
    if ends_process(answer):
        return "upstream code polluted a shared prototype; the process was restarted"
    return "upstream code polluted a shared prototype; the driver restored it in place"
