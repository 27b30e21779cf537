"""drift.md: the drift report of a matrix (report.json's `drift`, harness.tools.releases.drift's
`DriftReport.to_json`) as Markdown, one section per neighbouring pair of references, one bullet per change.

It reads the JSON form, so a live matrix, `conformance drift REPORT` and the report writer
(harness.report.writers) render the same bytes from the same data.
"""

from __future__ import annotations

from typing import Any


def _by_sentence(explained_by: list[dict[str, str]]) -> list[tuple[str, list[str]]]:
    sentences: dict[str, list[str]] = {}
    for entry in sorted(explained_by, key=lambda e: e["case"]):
        sentences.setdefault(entry["says"], []).append(entry["case"])
    return list(sentences.items())


def _names(cases: list[str], limit: int) -> str:
    shown = ", ".join(f"`{c}`" for c in cases[:limit])
    return shown + (f" and {len(cases) - limit} more" if len(cases) > limit else "")


def _group_lines(group: dict[str, Any], max_cases: int) -> list[str]:
    """One change: its cases, what explains it (or UNEXPLAINED), and its first difference."""
    cases = group["cases"]
    shown = ", ".join(cases[:max_cases]) + (f", … ({len(cases)} in all)" if len(cases) > max_cases else "")
    first = group["first_difference"]
    if group["explained"]:
        lines = [f"- **{group['change']}** in {len(cases)} case(s) ({shown}). Explained by:"]
        lines += [f"  - {says} ({_names(named, 4)})" for says, named in _by_sentence(group["explained_by"])]
    else:
        lines = [f"- **{group['change']}** in {len(cases)} case(s) ({shown}). **UNEXPLAINED**: no case pins it"]
    lines.append(
        f"  - first difference in `{cases[0]}`: byte {first['offset']} of {first['field']}, "
        f"{first['difference']}; before: …{first['before_context']}…; after: …{first['after_context']}…"
    )
    return lines


def _rule_lines(rules: list[dict[str, Any]]) -> list[str]:
    """The same changes by rule: where each rule's cases first ran, and each pair where their output changed."""
    if not rules:
        return []
    lines = ["## Rules by release (first reference where a case of the rule ran; where its output changed)"]
    for rule in rules:
        first = f"first ran on {rule['first']}" if rule["first"] else "never ran (every reference unsupported)"
        changed = "; ".join(f"{c['from']} -> {c['to']} ({', '.join(c['changes'])})" for c in rule["changes"])
        lines.append(
            f"- `{rule['rule']}` ({len(rule['cases'])} case(s)): {first}" + (f"; changed {changed}" if changed else "")
        )
    return [*lines, ""]


def drift_markdown(drift: dict[str, Any], max_cases: int = 8) -> str:
    """A readable summary of a drift report's JSON: one section per neighbouring pair, one bullet per change."""
    lines = ["# Drift between neighbouring references", ""]
    for pair in drift["pairs"]:
        side = (pair["from"], pair["to"], pair["kind"])
        groups = [g for g in drift["groups"] if (g["from"], g["to"], g["kind"]) == side]
        changed = len(pair["changed_cases"])
        lines.append(f"## {pair['from']} -> {pair['to']} ({pair['kind']}): {changed} case(s) changed")
        if not groups:
            lines.append("- no case's reference output changed")
        for group in groups:
            lines += _group_lines(group, max_cases)
        lines.append("")
    stale, unknown = drift["stale_explanations"], drift["not_compared"]
    if stale:
        lines.append("## Stale explanations (the case says its output changes here, and it did not)")
        lines += [f"- `{s['case']}` {s['from']} -> {s['to']}: {s['says']} ({s['path']})" for s in stale]
        lines.append("")
    if unknown:
        lines.append("## Not compared (a reference could not run)")
        lines += [f"- `{u['case']}` {u['from']} -> {u['to']}" for u in unknown]
        lines.append("")
    lines += _rule_lines(drift.get("rules", []))
    total, unexplained = len(drift["groups"]), len(drift["unexplained"])
    lines.append(
        f"{total} change group(s), {total - unexplained} explained, {unexplained} unexplained, "
        f"{len(stale)} stale explanation(s)."
    )
    return "\n".join(lines) + "\n"
