"""Verdicts: from what each side produced to pass, fail, known, stale, error or runtime divergence.

Owns the decisions: a case passes only when every implementation ran and agreed; a reference
that could not run is an error, and a request the harness could not write is an error of the harness, never
the reference's or the implementation's; an implementation that does not serve a case (an `unsupported`
answer) makes it not applicable, never a pass; a recorded divergence that still diverges is known, one that no
longer does is stale (a failure, so the list stays true); a runtime/locale variant whose output
differs from its bun baseline is a runtime divergence (upstream's doing, not the implementation's).
What "differs" means is verdict.diff's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from harness.core.fields import COMPARED_FIELDS, GOLDEN_FIELDS, LETTA_CODE, ComparisonView
from harness.core.model import (
    DEFAULT_IMPLEMENTATION,
    GOLDEN,
    Divergence,
    FieldDiff,
    Outcome,
    Replay,
    Scenario,
    Status,
    StepRow,
)
from harness.core.reference import ReferenceSpec, release_name
from harness.verdict.diff import differs, outcome_diff, shown, value_of


def _unusable(
    reference: Outcome | None, impl: Outcome, impl_label: str, expected: Sequence[Divergence] = ()
) -> tuple[Status, list[str]] | None:
    """Error or not applicable when a side produced nothing comparable; None when both can be compared. A request
    the harness could not write (`harness_bug`, harness.runners.wire) is the harness's error, whichever side met it.
    An error of the implementation that an expectations entry expects (`error:`) is known."""
    for side in (reference, impl):
        if side is not None and side.harness_bug:
            return Status.ERROR, [str(side.error)]
    if reference is not None and reference.status in ("error", "unsupported"):
        return Status.ERROR, [f"reference could not run: {reference.error}"]
    if impl.status == "unsupported":
        return Status.NOT_APPLICABLE, [f"{impl_label} does not serve this case: {impl.error}"]
    if impl.status == "error":
        return _error(f"{impl_label} could not run: {impl.error}", expected)
    return None


def _error(message: str, expected: Sequence[Divergence]) -> tuple[Status, list[str]]:
    """An error of the implementation: known when an expectations entry expects it (`error:`, text it contains)."""
    known = [d for d in expected if d.error is not None and d.error in message]
    if not known:
        return Status.ERROR, [message]
    return Status.KNOWN, [f"{d.kind}: {d.reason}" + (f" ({d.source})" if d.source else "") for d in known] + [message]


def judge_variant(
    scenario: Scenario,
    spec: ReferenceSpec,
    variant: Outcome,
    baseline: Outcome | None,
    impl: Outcome,
    view: ComparisonView = LETTA_CODE,
    *,
    impl_label: str = DEFAULT_IMPLEMENTATION,
    expected: Sequence[Divergence] = (),
) -> tuple[Status, list[FieldDiff], list[FieldDiff], list[str]]:
    """Verdict for a runtime/locale variant: (status, implementation diffs, variant-vs-baseline diffs, reasons)."""
    blamed = next((o for o in (variant, baseline, impl) if o is not None and o.harness_bug), None)
    if blamed is not None:
        return Status.ERROR, [], [], [str(blamed.error)]
    if variant.status == "error":
        return Status.ERROR, [], [], [f"reference could not run: {variant.error}"]
    if baseline is None or baseline.status == "error":
        why = baseline.error if baseline else "it did not run"
        return (
            Status.ERROR,
            [],
            [],
            [f"baseline {spec.baseline.label} (bun) could not run, so runtime drift is unknown: {why}"],
        )
    drift = outcome_diff(baseline, variant)
    seen_variant, seen_impl = view.apply(variant, impl)
    if not drift:
        status, diffs, reasons = judge(
            scenario, spec.base_label, seen_variant, seen_impl, view.fields, impl_label=impl_label, expected=expected
        )
        return status, diffs, [], reasons
    fields = ", ".join(d.field for d in drift)
    where = f"{spec.runtime}" + (f" with LANG={spec.locale}" if spec.locale else "")
    reasons = [
        f"under {where}, letta-code {spec.base_label} itself outputs different {fields} than under bun: "
        f"runtime drift, not {impl_label}'s failure (implementations follow bun; see the bun column for its verdict)"
    ]
    return Status.RUNTIME, outcome_diff(seen_variant, seen_impl, view.fields), drift, reasons


def judge(
    scenario: Scenario,
    reference_label: str,
    reference: Outcome,
    impl: Outcome,
    fields: tuple[str, ...] = COMPARED_FIELDS,
    *,
    impl_label: str = DEFAULT_IMPLEMENTATION,
    expected: Sequence[Divergence] = (),
) -> tuple[Status, list[FieldDiff], list[str]]:
    """Verdict for one implementation's outcome against one reference's, on `fields` (the comparison view's,
    harness.core.fields); `expected`: the implementation's own known failures for this result
    (its expectations file, harness.run.expectations)."""
    unusable = _unusable(reference, impl, impl_label, expected)
    if unusable:
        return unusable[0], [], unusable[1]
    diffs = outcome_diff(reference, impl, fields)
    status, reasons = divergence_verdict(scenario, reference_label, {d.field for d in diffs}, expected)
    return status, diffs, reasons


def divergence_verdict(
    scenario: Scenario, label: str, differing: set[str], expected: Sequence[Divergence] = ()
) -> tuple[Status, list[str]]:
    """Pass, fail, known or stale, from what differs (fields or observations) and what is recorded as known for
    this result: the case's own divergences and the implementation's expectations. A divergence recorded for this
    case (its own, or an expectations entry naming it) must still differ in every field it lists, else it is
    stale; a broad entry (a rule, tag or case glob) covers what differs, and a result it covers may agree. An
    entry expecting an error is stale when the implementation ran (for its case) or does not apply (broad)."""
    errors = [d for d in expected if d.error is not None and not d.broad]
    if errors:
        return Status.STALE, [
            f"recorded error no longer happens: the implementation answered this case; {_fix(errors)}"
        ]
    listed = [*scenario.divergences_for(label), *(d for d in expected if d.error is None)]
    if not listed:
        return (Status.FAIL if differing else Status.PASS), []
    unexplained = differing - {f for d in listed for f in _fields(d, differing)}
    if unexplained:
        return Status.FAIL, [f"differs in {', '.join(sorted(unexplained))}, which no recorded divergence covers"]
    strict = [d for d in listed if not d.broad]
    stale = {f for d in strict for f in d.fields if f not in differing and (f != "*" or not differing)}
    if stale:
        stale_entries = [d for d in strict if set(d.fields) & stale]
        sourced = [d for d in stale_entries if d.source]
        if sourced:
            fix = _fix(sourced)
        else:
            narrow = (
                f"take {label} out of its references"
                if all(label in d.references for d in stale_entries)
                else f"narrow its references ({', '.join(sorted({r for d in stale_entries for r in d.references}))})"
                " to the releases it still diverges against"
            )
            fix = f"remove it from the case, or {narrow}"
        return Status.STALE, [
            f"recorded divergence in {', '.join(sorted(stale))} no longer diverges against {release_name(label)}: "
            + fix
        ]
    if not differing:
        return Status.PASS, []
    return Status.KNOWN, [
        f"{d.kind}: {d.reason}" + (f" ({d.link})" if d.link else "") for d in listed if _fields(d, differing)
    ]


def _fields(divergence: Divergence, differing: set[str]) -> set[str]:
    """The fields a divergence covers of what differs: those it lists, or (`*`) whatever differs."""
    return set(differing) if "*" in divergence.fields else set(divergence.fields) & differing


def _fix(entries: Sequence[Divergence]) -> str:
    """How to fix stale entries of an expectations file: their file and line, and the command that rewrites it."""
    where = sorted({d.source for d in entries})
    files = sorted({source.rpartition(":")[0] or source for source in where})
    return (
        f"the entry at {', '.join(where)} is stale: run `conformance expectations update REPORT --out "
        f"{files[0]}` (it drops or narrows stale entries; REPORT: this run's --report DIR), or edit the entry"
    )


def golden_record(scenario: Scenario) -> dict[str, Any]:
    """What a golden case expects, as a record: the spec's quoted `coreMemory` (its only compared field)."""
    return {"coreMemory": (scenario.expect or {}).get("coreMemory")}


def judge_golden(
    scenario: Scenario,
    impl: Outcome,
    view: ComparisonView = LETTA_CODE,
    *,
    impl_label: str = DEFAULT_IMPLEMENTATION,
    expected: Sequence[Divergence] = (),
) -> tuple[Status, list[FieldDiff], list[str]]:
    """Spec-only cases: the implementation against expected bytes quoted from the spec (letta-code's
    `coreMemory`), seen through the implementation's comparison view (the server: its memory rendering)."""
    expect = scenario.expect or {}
    unusable = _unusable(None, impl, impl_label, expected)
    if unusable:
        return unusable[0], [], unusable[1]
    if impl.status != "ok":
        return Status.ERROR, [], [f"{impl_label} did not produce a record: {impl.thrown}"]
    golden = Outcome("ok", record=golden_record(scenario))
    diffs = outcome_diff(*view.apply(golden, impl), view.golden, optional=())
    reasons = [f"expected bytes from {expect.get('source')} (no runnable reference)"]
    size = expect.get("coreMemory_bytes") if view.golden == GOLDEN_FIELDS else None  # letta-code's byte count
    actual = len(((impl.record or {}).get("coreMemory") or "").encode("utf-8"))
    differing = {d.field for d in diffs}
    if size is not None and size != actual:
        reasons.append(f"coreMemory is {actual} bytes, the spec says {size}")
        differing.add("coreMemory")
    status, verdict_reasons = divergence_verdict(scenario, GOLDEN, differing, expected)
    return status, diffs, reasons + verdict_reasons


def judge_lifecycle(
    scenario: Scenario,
    label: str,
    profile: str,
    replay: Replay,
    *,
    impl_label: str = DEFAULT_IMPLEMENTATION,
    expected: Sequence[Divergence] = (),
) -> tuple[Status, list[str]]:
    """Verdict for a replay: every step's observations agree, and match what the case records for `label`."""
    if replay.unsupported:
        return Status.NOT_APPLICABLE, [f"{impl_label} does not serve this case: {replay.unsupported}"]
    if replay.error:
        return _error(replay.error, expected)
    reasons = list(replay.thrown)
    if label == GOLDEN:
        if profile not in scenario.recorded_targets():
            return Status.ERROR, [f"golden case records nothing for {profile}: add a `recorded` entry for it"]
        problems = recorded_mismatches(scenario, replay.rows, profile, "impl")
        status, verdict_reasons = divergence_verdict(scenario, label, {"recorded"} if problems else set(), expected)
        return status, reasons + problems + verdict_reasons
    differing = [(row.label, d["observation"]) for row in replay.rows for d in row.diffs]
    if differing:
        reasons.append(f"{impl_label} differs at " + "; ".join(f"{step}: {name}" for step, name in differing))
    status, verdict_reasons = divergence_verdict(scenario, label, {name for _, name in differing}, expected)
    reasons += verdict_reasons
    problems = recorded_mismatches(scenario, replay.rows, label, "reference")
    if problems:
        reasons.append(f"letta-code {label} no longer does what the case records; update `recorded` or the case:")
        reasons += problems
        status = Status.FAIL
    if label not in scenario.recorded_targets() and scenario.recorded:
        reasons.append(f"the case records no observations for {label}")
    return status, reasons


def recorded_mismatches(scenario: Scenario, rows: list[StepRow], target: str, side: str) -> list[str]:
    """Where `side`'s observations differ from what the case records for `target` (a release or profile)."""
    problems = []
    by_label = {row.label: row for row in rows}
    for entry in scenario.recorded:
        if target not in entry.targets:
            continue
        for label, expected in entry.observations.items():
            row = by_label.get(label)
            if row is None:
                problems.append(f"{label}: recorded ({entry.source}) but the case has no such step")
                continue
            actual = getattr(row, side)
            for name, value in expected.items():
                if differs(value_of(actual, name), value):
                    problems.append(f"{label} {name} is {shown(actual, name)!r}, recorded {value!r} ({entry.source})")
    return problems
