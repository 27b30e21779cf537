"""Whether two records differ, and how: the one rule every caller uses.

`differs` is the rule for one value: a value one side has and the other lacks differs from it even
when the value is null (absent and null are different JSON); otherwise values differ when unequal.
`outcome_diff` applies it to two outcomes (run, signature, drift, bisect, add-case verification),
`mapping_diff` to two mappings of observations (lifecycle steps, recorded observations), on the fields
harness.core.fields names; `verdict_fields` says which fields a result's verdict compared. Two
outcomes that both threw do not differ (upstream's message is not part of the contract); one that
threw and one that did not differ in `thrown`.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Mapping
from typing import Any

from deepdiff import DeepDiff

from harness.core.fields import COMPARED_FIELDS, GOLDEN_FIELDS, OPTIONAL_FIELDS
from harness.core.model import CaseResult, FieldDiff, Outcome, is_golden
from harness.core.plural import counted
from harness.verdict.text import ABSENT, around, as_bytes, describe_difference, first_diff_offset

SUMMARY_CHARS = 2048  # longer strings are summarised in structured diffs

_MISSING = object()


def differs(reference: Any, impl: Any) -> bool:
    """The rule for one value; pass `MISSING` (via `value_of`) for a side that lacks it."""
    if (reference is _MISSING) != (impl is _MISSING):
        return True
    return bool(reference != impl)


def value_of(mapping: Mapping[str, Any], name: str) -> Any:
    """mapping[name], or the marker `differs` reads as absent."""
    return mapping.get(name, _MISSING)


def mapping_diff(reference: Mapping[str, Any], impl: Mapping[str, Any], names: list[str] | None = None) -> list[str]:
    """The names (reference's order, then the implementation's own) whose values differ between two mappings."""
    names = names if names is not None else [*reference, *(n for n in impl if n not in reference)]
    return [name for name in names if differs(value_of(reference, name), value_of(impl, name))]


def shown(mapping: Mapping[str, Any], name: str) -> Any:
    """A value for messages and reports: ABSENT when the mapping lacks it."""
    return mapping.get(name, ABSENT)


def compared_fields(
    reference: Outcome,
    impl: Outcome,
    fields: tuple[str, ...] = COMPARED_FIELDS,
    optional: tuple[str, ...] = OPTIONAL_FIELDS,
) -> tuple[str, ...]:
    """`fields`, then each optional field (`systemPromptWithSkills`) that either record has."""
    records = (reference.record or {}, impl.record or {})
    return (*fields, *(name for name in optional if name not in fields and any(name in r for r in records)))


def outcome_diff(
    reference: Outcome,
    impl: Outcome,
    fields: tuple[str, ...] | None = COMPARED_FIELDS,
    optional: tuple[str, ...] = OPTIONAL_FIELDS,
) -> list[FieldDiff]:
    """Field differences between two outcomes that both ran (status ok or thrown).

    `fields=None` compares every field either record has; otherwise `fields` and the `optional` fields
    either record has (compared_fields). Presence says how each field was compared.
    """
    if reference.status == "thrown" or impl.status == "thrown":
        if reference.status == impl.status:
            return []
        # a side that did not throw has no `thrown` at all
        threw = (reference.status == "thrown", impl.status == "thrown")
        return [FieldDiff("thrown", reference.thrown, impl.thrown, 0, *threw)]
    ref_record, impl_record = reference.record or {}, impl.record or {}
    names = (
        list(compared_fields(reference, impl, fields, optional))
        if fields is not None
        else sorted(set(ref_record) | set(impl_record))
    )
    diffs = []
    for name in mapping_diff(ref_record, impl_record, names):
        in_ref, in_impl = name in ref_record, name in impl_record
        ref_bytes, impl_bytes = as_bytes(ref_record.get(name), in_ref), as_bytes(impl_record.get(name), in_impl)
        offset = first_diff_offset(ref_bytes, impl_bytes)
        diffs.append(FieldDiff(name, ref_record.get(name), impl_record.get(name), offset or 0, in_ref, in_impl))
    return diffs


def verdict_fields(result: CaseResult) -> list[str]:
    """The record fields (for a lifecycle probe, the observations) this result's verdict compared: those
    compared_fields chose (kept in `result.compared` with how each was compared), GOLDEN_FIELDS for a
    golden check, `thrown` when a side threw, none when a side could not run (report.json's
    `compared_fields`, index.html's field rows)."""
    if result.turns:
        return observations(result)
    statuses = [o.status for o in (result.reference_outcome, result.impl_outcome) if o is not None]
    if "error" in statuses or result.impl_outcome is None:
        return []
    if is_golden(result.reference):
        return list(GOLDEN_FIELDS) if statuses == ["ok"] else []
    if "thrown" in statuses:
        return ["thrown"]
    if result.compared:  # the reference's comparison view (harness.core.fields)
        return list(result.compared)
    return list(compared_fields(result.reference_outcome or result.impl_outcome, result.impl_outcome))


def observations(result: CaseResult) -> list[str]:
    """A lifecycle result's observation names, in first-seen order over its turns."""
    names: dict[str, None] = {}
    for turn in result.turns:
        for side in ("reference", "impl"):
            names.update(dict.fromkeys(turn.get(side) or {}))
        names.update(dict.fromkeys(d.get("observation") for d in turn.get("diffs") or []))
    return list(names)


# How each field was compared (CaseResult.compared, report.json `compared_fields`):
BOTH = "compared"  # both records have it: compared byte for byte
ABSENT_BOTH = "compared-as-absent"  # neither has it (0.25.x has no coreMemory): the implementation must not either
REFERENCE_ONLY = "reference-only"  # a difference: the implementation lacks a field the reference returns
IMPL_ONLY = "impl-only"  # a difference: the implementation returns a field the reference does not
THROWN = "thrown"  # one side or both threw: the records are not compared field by field


def presence(reference: Outcome, impl: Outcome, fields: tuple[str, ...] = COMPARED_FIELDS) -> dict[str, str]:
    """For every compared field, how outcome_diff compared it. Absent fields are compared, never skipped."""
    fields = compared_fields(reference, impl, fields)
    if reference.status == "thrown" or impl.status == "thrown":
        return dict.fromkeys(fields, THROWN)
    ref_record, impl_record = reference.record or {}, impl.record or {}
    states = {}
    for name in fields:
        in_ref, in_impl = name in ref_record, name in impl_record
        if in_ref and in_impl:
            states[name] = BOTH
        elif in_ref or in_impl:
            states[name] = REFERENCE_ONLY if in_ref else IMPL_ONLY
        else:
            states[name] = ABSENT_BOTH
    return states


def field_diff_json(diff: FieldDiff) -> dict[str, Any]:
    """A FieldDiff as report.json writes it: offset, sizes (null for a side that lacks the field), the
    first differing characters named, and the bytes around the offset on each side (cut at characters).

    Worked out once per diff (the terminal, a cause, junit.xml, report.json and index.html each ask; a value
    may be megabytes): a diff whose values cannot be hashed (a list, a mapping) is worked out each time."""
    try:
        return dict(_field_diff_json(diff))
    except TypeError:  # unhashable values
        return _field_diff_json.__wrapped__(diff)


@functools.lru_cache(maxsize=4096)
def _field_diff_json(diff: FieldDiff) -> dict[str, Any]:
    ref_bytes, impl_bytes = as_bytes(diff.reference, diff.reference_present), as_bytes(diff.impl, diff.impl_present)
    offset = diff.offset or 0
    return {
        "field": diff.field,
        "offset": diff.offset,
        "reference_bytes": len(ref_bytes) if diff.reference_present else None,
        "impl_bytes": len(impl_bytes) if diff.impl_present else None,
        "difference": describe_difference(
            ref_bytes, impl_bytes, offset, reference_present=diff.reference_present, impl_present=diff.impl_present
        ),
        "reference_context": around(ref_bytes, offset) if diff.reference_present else ABSENT,
        "impl_context": around(impl_bytes, offset) if diff.impl_present else ABSENT,
    }


def _size(count: int | None) -> str:
    return "absent" if count is None else f"{count} bytes"


def first_difference_line(result: CaseResult) -> str:
    """One line: where and how the result first differs, or its first reason (the terminal's summary, junit.xml's
    failure message)."""
    if result.diffs:
        info = field_diff_json(result.diffs[0])
        more = f" (+{counted(len(result.diffs) - 1, 'more field')})" if len(result.diffs) > 1 else ""
        return f"{info['field']} byte {info['offset']}: {info['difference']}{more}"
    return result.reasons[0] if result.reasons else str(result.status)


def render_field_diff(diff: FieldDiff) -> str:
    """A readable text block for terminals and pytest: offset, the differing characters, both sides around it."""
    info = field_diff_json(diff)
    return (
        f"{diff.field}: first difference at byte {diff.offset}: {info['difference']} "
        f"(reference {_size(info['reference_bytes'])}, implementation {_size(info['impl_bytes'])})\n"
        f"  reference:      …{info['reference_context']}…\n"
        f"  implementation: …{info['impl_context']}…"
    )


def structured_diff(reference: dict[str, Any] | None, impl: dict[str, Any] | None) -> str:
    """A deepdiff of two records, for the report (long strings are summarised, not dumped)."""
    diff = DeepDiff(_summarised(reference or {}), _summarised(impl or {}), verbose_level=2, max_diffs=200)
    return diff.to_json(indent=1) if diff else ""


def _summarised(value: Any) -> Any:
    """Strings over SUMMARY_CHARS become head + length + sha256 + tail: a difference still shows, a copy does not."""
    if isinstance(value, dict):
        return {k: _summarised(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_summarised(v) for v in value]
    if isinstance(value, str) and len(value) > SUMMARY_CHARS:
        digest = hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()[:16]
        half = SUMMARY_CHARS // 2
        return f"{value[:half]}…⟨{len(value)} chars, sha256 {digest}…⟩…{value[-half:]}"
    return value


def observation_diffs(reference: dict[str, Any], impl: dict[str, Any]) -> list[dict[str, Any]]:
    """Per-observation differences of one lifecycle step, each with deepdiff's account of what changed
    inside the value (which list item, which type)."""
    diffs = []
    for name in mapping_diff(reference, impl):
        ref_value, impl_value = shown(reference, name), shown(impl, name)
        detail = DeepDiff(ref_value, impl_value, verbose_level=2).to_dict()
        diffs.append({"observation": name, "reference": ref_value, "impl": impl_value, "deepdiff": _plain(detail)})
    return diffs


def _plain(value: Any) -> Any:
    """deepdiff's result as plain JSON values (its containers are sets and tree objects)."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))}
    if isinstance(value, list | tuple | set | frozenset):
        items = [_plain(v) for v in value]
        return sorted(items, key=repr) if isinstance(value, set | frozenset) else items
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return repr(value)
