"""report.json's data (stable schema, docs/report-format.md) from a run, and its entries read back into results
(for merges). harness.report.writers writes it, with the other files of a report directory.

Timing lives only under `timing` keys, so two runs of the same corpus give the same
bytes once those are removed (and `--no-timing` leaves them out altogether).
"""

from __future__ import annotations

from typing import Any

from harness.core.model import CaseResult, FieldDiff, Outcome, RunReport, Status
from harness.core.reference import release_key
from harness.report.explained import RULES, attribution_json, explain, shown_in_full, used_rules
from harness.report.reproduce import reproduce_commands
from harness.report.stored import SCHEMA, expanded, full_entry, store
from harness.report.summary import summarize, summary_json
from harness.verdict.attribute import attribution_of
from harness.verdict.diff import field_diff_json, verdict_fields

__all__ = ["SCHEMA", "report_json", "result_from_json", "result_json"]


def result_json(result: CaseResult, timing: bool) -> dict[str, Any]:
    """A result as a full report.json entry (every field; report.stored decides what the file leaves out)."""

    def outcome(o: Any) -> Any:
        if o is None:
            return None
        data = o.to_json()
        data.pop("elapsed_ms", None)
        return data

    data: dict[str, Any] = {
        "case": result.case_id,
        "implementation": result.implementation,
        "reference": result.reference,
        "profile": result.profile,
        "status": result.status,
        "tags": list(result.tags),
        "path": result.path,
        "description": result.description,
        "pins": result.pins,
        "rules": list(result.rules),
        "reasons": result.reasons,
        "compared_fields": verdict_fields(result),
        "diffs": [field_diff_json(d) for d in result.diffs],
        "structured_diff": result.structured,
        "request": result.request,
        "reference_outcome": outcome(result.reference_outcome),
        "impl_outcome": outcome(result.impl_outcome),
        "turns": result.turns,
        "reproduce": reproduce_commands(result),
        "field_comparison": result.compared,
    }
    if result.baseline:
        data["baseline"] = result.baseline
        data["runtime_diffs"] = [field_diff_json(d) for d in result.runtime_diffs]
        # the baseline's values are in no outcome of this result: kept so that a merge can rebuild the diffs
        data["runtime_diff_values"] = [{"baseline": d.reference, "variant": d.impl} for d in result.runtime_diffs]
    if result.cached:  # the reference's side came from the result store (docs/scale.md), under this key
        data["cached"], data["cache_key"] = True, result.cached
    if result.diffs and (result.reference_outcome is None or result.impl_outcome is None):
        # golden and lifecycle results: the differing values are in no outcome, so a merge could not rebuild them
        data["diff_values"] = [{"reference": d.reference, "impl": d.impl} for d in result.diffs]
    if timing:
        data["timing"] = {
            "seconds": round(result.seconds, 4),
            "reference_ms": round(result.reference_outcome.elapsed_ms, 3) if result.reference_outcome else None,
            "impl_ms": round(result.impl_outcome.elapsed_ms, 3) if result.impl_outcome else None,
        }
    return data


def _outcome_from_json(data: dict[str, Any] | None, elapsed_ms: float | None) -> Outcome | None:
    if data is None:
        return None
    return Outcome(**data, elapsed_ms=elapsed_ms or 0.0)


def _side_value(outcome: Outcome | None, field: str) -> Any:
    if outcome is None:
        return None
    return outcome.thrown if field == "thrown" else (outcome.record or {}).get(field)


def result_from_json(data: dict[str, Any], outputs: dict[str, str] | None = None) -> CaseResult:
    """A result back from its full report.json entry (report.stored.full_entries), its long values looked up
    in the report's `outputs`: `result_json` of it gives the same entry again."""
    data = full_entry(data, {})
    if outputs:
        data = expanded(data, outputs)
    timing = data.get("timing") or {}
    reference = _outcome_from_json(data["reference_outcome"], timing.get("reference_ms"))
    port = _outcome_from_json(data["impl_outcome"], timing.get("impl_ms"))
    values = data.get("diff_values") or [
        {"reference": _side_value(reference, d["field"]), "impl": _side_value(port, d["field"])} for d in data["diffs"]
    ]
    diffs = [_diff_from_json(d, v["reference"], v["impl"]) for d, v in zip(data["diffs"], values, strict=True)]
    return CaseResult(
        case_id=data["case"],
        reference=data["reference"],
        profile=data["profile"],
        status=Status(data["status"]),
        tags=tuple(data["tags"]),
        path=data["path"],
        description=data["description"],
        pins=data["pins"],
        diffs=diffs,
        reasons=list(data["reasons"]),
        reference_outcome=reference,
        impl_outcome=port,
        structured=data["structured_diff"],
        memory_dir=data["request"].get("memoryDir", ""),
        request=data["request"],
        seconds=timing.get("seconds", 0.0),
        turns=data["turns"],
        compared=dict(data.get("field_comparison", {})),
        baseline=data.get("baseline", ""),
        runtime_diffs=_runtime_diffs_from_json(data),
        implementation=data["implementation"],
        cached=data.get("cache_key", ""),
        rules=tuple(data.get("rules", ())),
    )


def _runtime_diffs_from_json(data: dict[str, Any]) -> list[FieldDiff]:
    pairs = zip(data.get("runtime_diffs", []), data.get("runtime_diff_values", []), strict=True)
    return [_diff_from_json(d, v["baseline"], v["variant"]) for d, v in pairs]


def _diff_from_json(entry: dict[str, Any], reference: Any, port: Any) -> FieldDiff:
    """A FieldDiff back from its report.json entry (field_diff_json): a side whose size is null lacks the field."""
    return FieldDiff(
        entry["field"],
        reference,
        port,
        entry["offset"],
        entry["reference_bytes"] is not None,
        entry["impl_bytes"] is not None,
    )


def result_order(result: CaseResult) -> tuple[Any, ...]:
    """The order of results in report.json: by case id, then reference in release order, then implementation."""
    return result.case_id, release_key(result.reference), result.implementation


def report_json(report: RunReport) -> dict[str, Any]:
    """report.json's data: the run, its summary (report.summary, from the results), its references, and every
    result as report.stored stores it."""
    references = report.references if report.timing else [_without_timing(r) for r in report.references]
    ordered = sorted(report.results, key=result_order)
    table = report.extra.get(RULES) or {}
    entries = explain(ordered, table)
    attributed = attribution_of(entries)
    full = [result_json(r, report.timing) for r in ordered]
    for entry, result in zip(full, ordered, strict=True):
        found = attributed.get((result.implementation, result.case_id, result.reference))
        if found is not None:
            entry["attributed"] = {"rule": found[0].rule, "evidence": found[1]}
    stored = store(full, shown_in_full(ordered, entries))
    return {
        "schema": SCHEMA,
        "ok": report.ok,
        "counts": report.counts,
        "summary": summary_json(summarize(ordered)),
        "attribution": attribution_json(entries, table),
        "rules": used_rules(ordered, table),
        **({"run": report.extra["run"]} if "run" in report.extra else {}),
        "references": references,
        "load_errors": [{"path": str(e.path), "line": e.line, "message": str(e)} for e in report.load_errors],
        "cases": stored["cases"],
        "results": stored["results"],
        "outputs": stored["outputs"],
        **{k: v for k, v in report.extra.items() if k not in ("run", RULES)},
    }


def _without_timing(info: dict[str, Any]) -> dict[str, Any]:
    clean = {k: v for k, v in info.items() if k not in ("starts",)}
    if isinstance(clean.get("info"), dict):
        clean["info"] = {k: v for k, v in clean["info"].items() if k != "importMs"}
    return clean
