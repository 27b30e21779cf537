"""Verdicts: from what each side produced to pass, fail, known, stale, error or runtime divergence.

Owns the decisions: a case passes only when every implementation ran and agreed; a reference
that could not run is an error; a recorded divergence that still diverges is known, one that no
longer does is stale (a failure, so the list stays true); a runtime/locale variant whose output
differs from its bun baseline is a runtime divergence (upstream's doing, not the port's).
What "differs" means is verdict.diff's.
"""

from __future__ import annotations

from harness.model import FieldDiff, Outcome, Replay, Scenario, Status, StepRow
from harness.runners.manifest import ReferenceSpec
from harness.verdict.diff import COMPARED_FIELDS, differs, outcome_diff, shown, value_of
from memfs_prompt.profiles import Profile


def judge_variant(
    scenario: Scenario, spec: ReferenceSpec, variant: Outcome, baseline: Outcome | None, port: Outcome
) -> tuple[Status, list[FieldDiff], list[FieldDiff], list[str]]:
    """Verdict for a runtime/locale variant: (status, port diffs, variant-vs-baseline diffs, reasons)."""
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
    if not drift:
        status, diffs, reasons = judge(scenario, spec.base_label, variant, port)
        return status, diffs, [], reasons
    fields = ", ".join(d.field for d in drift)
    where = f"{spec.runtime}" + (f" with LANG={spec.locale}" if spec.locale else "")
    reasons = [
        f"under {where}, letta-code {spec.base_label} itself outputs different {fields} than under bun: "
        "runtime drift, not a port failure (the port follows bun; see the bun column for the port's verdict)"
    ]
    return Status.RUNTIME, outcome_diff(variant, port), drift, reasons


def judge(
    scenario: Scenario,
    reference_label: str,
    reference: Outcome,
    port: Outcome,
    fields: tuple[str, ...] = COMPARED_FIELDS,
) -> tuple[Status, list[FieldDiff], list[str]]:
    """Verdict for one case against one reference, on `fields` (its comparison view's, harness.verdict.view)."""
    if reference.status == "error":
        return Status.ERROR, [], [f"reference could not run: {reference.error}"]
    if port.status == "error":
        return Status.ERROR, [], [f"Python port could not run: {port.error}"]
    diffs = outcome_diff(reference, port, fields)
    status, reasons = divergence_verdict(scenario, reference_label, {d.field for d in diffs})
    return status, diffs, reasons


def divergence_verdict(scenario: Scenario, label: str, differing: set[str]) -> tuple[Status, list[str]]:
    """Pass, fail, known or stale, from what differs (fields or observations) and the case's recorded divergences."""
    listed = scenario.divergences_for(label)
    if not listed:
        return (Status.FAIL if differing else Status.PASS), []
    listed_fields = {f for d in listed for f in d.fields}
    unexplained = differing - listed_fields
    if unexplained:
        return Status.FAIL, [f"differs in {', '.join(sorted(unexplained))}, which no recorded divergence covers"]
    stale = listed_fields - differing
    if stale:
        return Status.STALE, [
            f"recorded divergence in {', '.join(sorted(stale))} no longer diverges against {label}: "
            "remove it from the case (or narrow its references)"
        ]
    return Status.KNOWN, [f"{d.kind}: {d.reason}" + (f" ({d.link})" if d.link else "") for d in listed]


def judge_golden(scenario: Scenario, port: Outcome) -> tuple[Status, list[FieldDiff], list[str]]:
    """Spec-only cases: the port against expected bytes quoted from the spec."""
    expect = scenario.expect or {}
    if port.status != "ok":
        return Status.ERROR, [], [f"Python port did not produce a record: {port.error or port.thrown}"]
    golden = Outcome("ok", record={"coreMemory": expect.get("coreMemory")})
    diffs = outcome_diff(golden, port, ("coreMemory",), optional=())
    reasons = [f"expected bytes from {expect.get('source')} (no runnable reference)"]
    size = expect.get("coreMemory_bytes")
    actual = len(((port.record or {}).get("coreMemory") or "").encode("utf-8"))
    if size is not None and size != actual:
        reasons.append(f"coreMemory is {actual} bytes, the spec says {size}")
        return Status.FAIL, diffs, reasons
    return (Status.FAIL if diffs else Status.PASS), diffs, reasons


def judge_lifecycle(scenario: Scenario, label: str, profile: Profile, replay: Replay) -> tuple[Status, list[str]]:
    """Verdict for a replay: every step's observations agree, and match what the case records for `label`."""
    if replay.error:
        return Status.ERROR, [replay.error]
    reasons = list(replay.thrown)
    if label == "golden":
        if profile.name not in scenario.recorded_targets():
            return Status.ERROR, [f"golden case records nothing for {profile.name}: add a `recorded` entry for it"]
        problems = recorded_mismatches(scenario, replay.rows, profile.name, "python")
        return (Status.FAIL if problems else Status.PASS), reasons + problems
    differing = [(row.label, d["observation"]) for row in replay.rows for d in row.diffs]
    if differing:
        reasons.append("the Python port differs at " + "; ".join(f"{step}: {name}" for step, name in differing))
    status, verdict_reasons = divergence_verdict(scenario, label, {name for _, name in differing})
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
