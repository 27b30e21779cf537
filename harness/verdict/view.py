"""Comparison views: what is compared between a reference and an implementation under test, decided per
implementation.

A letta-code reference is compared on its whole record (verdict.diff.COMPARED_FIELDS). Another
product is compared only where the two products promise the same bytes: the Letta server
(`--impl letta-server:VERSION`, docs/products.md) on the memory rendering, the revision read and whether
compiling threw. Its `<memory_metadata>` inputs and the system message around it differ by design,
and it has no `compiledAt` or `rawSystemHash`.

A view turns each side's record into the fields it compares (`apply`); outcome_diff, presence and
the verdict then run on those records as on any other. The engine applies the view of each
implementation (harness.runners.references.view_for); nothing else special-cases a product.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from harness.core.model import Outcome
from harness.verdict.diff import COMPARED_FIELDS, GOLDEN_FIELDS

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
    """A letta-code record (or the port's) in the product view: `memory` is `coreMemory` up to its
    last `<memory_metadata>` block, without the "\\n\\n" before it; `memfsRevision`, null when there is none."""
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


def view_of(compared: Iterable[str]) -> ComparisonView:
    """The view a result was compared in, from its compared fields (reports read results back)."""
    return PRODUCT if "memory" in set(compared) else LETTA_CODE
