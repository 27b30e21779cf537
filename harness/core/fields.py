"""The compared fields and the comparison views: the one table of what the verdict compares.

Owns `FIELDS`, one entry per field a verdict, a divergence or an explanation may name (the record's
fields, the optional skills prompt, the product view's `memory`, and `thrown`): what it is, when it is
compared and whether the release matrix gives it a column. Every list of fields is read from it:
verdict.diff (COMPARED_FIELDS, OPTIONAL_FIELDS), the matrix template's columns (MATRIX_COLUMNS), the
`fields` enums of harness/cases/schema.json (DIVERGENCE_FIELDS, EXPLANATION_FIELDS: written from this
table by `python -m harness.cases.field_enums`), and reference/protocol.schema.json's record (checked
against COMPARED_FIELDS by tests/test_fields.py). A new field is one entry here, then its two sides: the
port (memfs_prompt) and the driver.

Also owns the comparison views: what is compared between a reference and an implementation under
test, decided per implementation. A letta-code reference is compared on its whole record
(COMPARED_FIELDS). Another product is compared only where the two products promise the same bytes: the
Letta server (`--impl letta-server:VERSION`, docs/products.md) on the memory rendering, the revision
read and whether compiling threw. Its `<memory_metadata>` inputs and the system message around it
differ by design, and it has no `compiledAt` or `rawSystemHash`. A view turns each side's record into
the fields it compares (`apply`); outcome_diff, presence and the verdict then run on those records as on
any other. The session applies the view of each implementation (harness.runners.references.view_for);
nothing else special-cases a product.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Literal

from harness.core.model import Outcome

#: When a field is compared: in every letta-code comparison (a record field), only when a record has it
#: (the request asked for it), in the product view, as whether a side threw, or in an op case's record
#: (cases/ops/, harness.run.op_case: the op's fields, compared when either side has them).
#: (the request asked for it), in the product view, or as whether a side threw.
Compared = Literal["every-record", "when-present", "product-view", "when-thrown", "op-record"]


@dataclass(frozen=True)
class Field:
    """One compared field: its name (the record's key), what it is, when it is compared, and whether the
    release matrix's "Fields compared per reference" table gives it a column."""

    name: str
    meaning: str
    compared: Compared
    matrix_column: bool


FIELDS: tuple[Field, ...] = (
    Field("content", "the compiled system prompt", "every-record", True),
    Field("coreMemory", "the memory blocks as the prompt renders them (0.30.28 and later)", "every-record", True),
    Field("compiledAt", "when the prompt was compiled, from the request's clock", "every-record", True),
    Field("rawSystemHash", "upstream's hash of the raw system prompt", "every-record", True),
    Field("memfsRevision", "the memory repository's HEAD commit, absent without one", "every-record", True),
    Field(
        "systemPromptWithSkills",
        "the prompt with its <available_skills> block: answered only for a request that gives clientSkills",
        "when-present",
        False,
    ),
    Field(
        "thrown",
        "the message of a compile that threw: whether each side threw is compared (in an op case, its text)",
        "when-thrown",
        False,
    ),
    Field("memory", "the memory rendering two products promise alike (the product view)", "product-view", True),
    Field("syncStatus", "memory_reminder: the post-turn sync's status (skipped, dirty, conflict)", "op-record", False),
    Field("syncSummary", "memory_reminder: the post-turn sync's status summary", "op-record", False),
    Field(
        "reminder", "memory_reminder: the system reminder a turn queues for the next one, or null", "op-record", False
    ),
    Field(
        "repoAfter",
        "an op case's repository after a writing op: HEAD, its tree, the index, the files",
        "op-record",
        False,
    ),
    Field("view", "the Memory tool's rendering of a path (op memory_view, 0.34.7 and later)", "op-record", False),
    Field("written", "the memory write tool's message to the model (a memory_write case's record)", "op-record", False),
)


def _names(*compared: Compared) -> tuple[str, ...]:
    return tuple(field.name for field in FIELDS if field.compared in compared)


#: the record fields every letta-code comparison compares, byte for byte (in report order): the keys of
#: upstream's compile record (reference/protocol.schema.json, $defs/record)
COMPARED_FIELDS = _names("every-record")
#: compared only when either record has them (a request that gives `clientSkills`)
OPTIONAL_FIELDS = _names("when-present")
#: the turn's system prompt with its <available_skills> block (`appendAvailableSkillsBlock(content, clientSkills)`)
SKILLS_FIELD = "systemPromptWithSkills"
#: what a golden case's `expect` quotes from the spec, compared on the implementation alone (verdict.judge)
GOLDEN_FIELDS = ("coreMemory",)
#: what a case's divergence may name (harness/cases/schema.json, $defs/divergence)
DIVERGENCE_FIELDS = tuple(field.name for field in FIELDS)
#: what a case's explanation of drift between letta-code releases may name ($defs/explanation)
EXPLANATION_FIELDS = _names("every-record", "when-present", "when-thrown", "op-record")
#: the columns of the matrix's "Fields compared per reference" table (report/templates/matrix_block.html.j2)
MATRIX_COLUMNS = tuple(field.name for field in FIELDS if field.matrix_column)

# --- comparison views ---------------------------------------------------------------------------------

Record = dict[str, Any]
METADATA_OPEN = "<memory_metadata>"


def _same(record: Record) -> Record:
    return record


@dataclass(frozen=True)
class ComparisonView:
    """The fields compared against one kind of reference, and how each side's record becomes them."""

    name: str
    fields: tuple[str, ...]
    reference: Callable[[Record], Record] = _same
    impl: Callable[[Record], Record] = _same
    golden: tuple[str, ...] = GOLDEN_FIELDS  # what a golden case's expected `coreMemory` is compared on

    def apply(self, reference: Outcome, impl: Outcome) -> tuple[Outcome, Outcome]:
        """Both outcomes as this view compares them (a throw or an error is left as it is)."""
        return _seen(reference, self.reference), _seen(impl, self.impl)


def _seen(outcome: Outcome, derive: Callable[[Record], Record]) -> Outcome:
    if outcome.status != "ok" or outcome.record is None:
        return outcome
    return dataclasses.replace(outcome, record=derive(outcome.record))


def server_memory(record: Record) -> Record:
    """The Letta server's record in the product view: `memory` is `Memory.compile()` without the
    "\\n\\n" every section of it starts with (absent when the record lacks it); `memfsRevision`, null
    when there is none (the products agree on "no revision", not on how JSON spells it: letta-code
    leaves the field out when there is no repository, the server writes null)."""
    seen: Record = {}
    if "memory" in record:
        memory = record["memory"]
        seen["memory"] = memory.removeprefix("\n\n") if isinstance(memory, str) else memory
    seen["memfsRevision"] = record.get("memfsRevision")
    return seen


def letta_code_memory(record: Record) -> Record:
    """A letta-code record (or the record of an implementation under test) in the product view: `memory` is
    `coreMemory` up to its last `<memory_metadata>` block, without the "\\n\\n" before it; `memfsRevision`,
    null when there is none."""
    seen: Record = {}
    core = record.get("coreMemory")
    if isinstance(core, str):
        at = core.rfind(METADATA_OPEN)
        seen["memory"] = (core[:at] if at >= 0 else core).removesuffix("\n\n")
    elif "coreMemory" in record:
        seen["memory"] = core
    seen["memfsRevision"] = record.get("memfsRevision")
    return seen


#: a letta-code release, bundle or checkout: every field, byte for byte
LETTA_CODE = ComparisonView("letta-code", COMPARED_FIELDS)
#: another product under test against letta-code (docs/products.md, "What is comparable"): the reference's
#: record is letta-code's, the implementation's the server's
PRODUCT = ComparisonView("product", ("memory", "memfsRevision"), letta_code_memory, server_memory, ("memory",))
#: every view, for the checks that each names only fields of the table
VIEWS = (LETTA_CODE, PRODUCT)


def view_of(compared: Iterable[str]) -> ComparisonView:
    """The view a result was compared in, from its compared fields (reports read results back)."""
    return PRODUCT if "memory" in set(compared) else LETTA_CODE
