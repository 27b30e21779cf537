"""index.html: the report a person reads, rendered from report/templates/report.html.j2.

Owns the view of each result: both outputs side by side with invisible characters as labelled
glyphs (CR, LF, TAB, BOM, NBSP, SP for a trailing space, U+FFFD, other controls) and the first
differing character marked (`mark.first-diff`), the record fields compared and which differed,
lifecycle turn tables, and the cases x references matrix; the first screen's conformance tables
show report.summary's counts. The page is self-contained: inline CSS and JS, no network resources.

Work is capped: each side shows at most SHOW_BEFORE characters before the first difference and
SHOW_AFTER after it, and says how many bytes it left out, so a multi-megabyte output renders
quickly into a page of bounded size.
"""

from __future__ import annotations

import json
import re
import shlex
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup, escape

from harness.core.fields import MATRIX_COLUMNS, view_of
from harness.core.model import GOLDEN, CaseResult, RunReport, Status
from harness.core.reference import release_key
from harness.report.explained import RULES, explained_rows, report_entries, shown_in_full
from harness.report.groups import cause_of, diff_key, failure_groups, mark_lines, unified_lines, verdict
from harness.report.reproduce import reproduce_commands
from harness.report.summary import COLUMNS, FAMILIES, summarize
from harness.verdict.attribute import Attribution, attribution_of
from harness.verdict.diff import field_diff_json, verdict_fields
from harness.verdict.text import as_bytes, first_difference, invisible

SHOW_BEFORE = 16_000  # characters shown before the first difference, per side
SHOW_AFTER = 16_000  # characters shown from the first difference on, per side
TURN_BEFORE, TURN_AFTER = 400, 1_600  # the same, for a value in a lifecycle turn table
_MAYBE_INVISIBLE = re.compile(r"[^\x21-\x7e]")  # printable ASCII is never a glyph; test the rest


def glyph_html(text: str, start: int = 0, end: int | None = None) -> Markup:
    """text[start:end] as HTML, each invisible character a `span.glyph` naming it (judged in the whole text)."""
    end = len(text) if end is None else end
    parts: list[str] = []
    plain = start
    for match in _MAYBE_INVISIBLE.finditer(text, start, end):
        index = match.start()
        shown = invisible(text, index)
        if shown is None:
            continue
        ch = text[index]
        title = "space at the end of a line" if shown[1] == "SP" else unicodedata.name(ch, shown[1])
        parts.append(str(escape(text[plain:index])))
        parts.append(f'<span class="glyph" title="U+{ord(ch):04X} {escape(title)}">{escape(shown[1])}</span>')
        if ch == "\n":
            parts.append("\n")
        plain = index + 1
    parts.append(str(escape(text[plain:end])))
    return Markup("".join(parts))


@dataclass
class Side:
    """One implementation's value, windowed around the first difference."""

    html: Markup
    size: int  # bytes (UTF-8)
    cut_before: int = 0  # bytes left out before the window
    cut_after: int = 0  # bytes left out after it
    absent: bool = False  # the field is missing on this side

    @property
    def described(self) -> str:
        return "absent" if self.absent else f"{self.size} bytes"


def _text(value: Any, present: bool) -> str | None:
    """A value as shown: None when the side lacks the field, `null` for a null it has."""
    if not present:
        return None
    return "null" if value is None else value if isinstance(value, str) else repr(value)


def _side(text: str | None, index: int, anchor: str, before: int, after: int) -> Side:
    if text is None:
        html = Markup(f'<mark class="first-diff" id="{anchor}"><span class="glyph">absent</span></mark>')
        return Side(html, 0, absent=True)
    start, end = max(0, index - before), min(len(text), index + after)
    if index < len(text):
        at = glyph_html(text, index, index + 1)
    else:
        at = Markup('<span class="glyph" title="the value ends here">END</span>')
    html = glyph_html(text, start, index) + Markup(f'<mark class="first-diff" id="{anchor}">{at}</mark>')
    html += glyph_html(text, min(index + 1, end), end)
    encode = lambda s: len(s.encode("utf-8", "surrogatepass"))  # noqa: E731
    return Side(html, len(as_bytes(text)), encode(text[:start]), encode(text[end:]))


def diff_pair(
    reference: Any,
    port: Any,
    anchor: str,
    before: int = SHOW_BEFORE,
    after: int = SHOW_AFTER,
    *,
    reference_present: bool = True,
    impl_present: bool = True,
) -> dict:
    """Both sides of a differing value, the first differing character marked, and where it is; a side
    that lacks the value (`*_present` False) is marked absent, a null it has is shown as `null`."""
    ref_text, port_text = _text(reference, reference_present), _text(port, impl_present)
    index = first_difference(ref_text or "", port_text or "") or 0
    if ref_text is None or port_text is None:
        index = 0
    text = ref_text if ref_text is not None else port_text or ""
    line = text.count("\n", 0, index) + 1
    column = index - (text.rfind("\n", 0, index) + 1) + 1
    return {
        "reference": _side(ref_text, index, f"{anchor}-reference", before, after),
        "port": _side(port_text, index, f"{anchor}-port", before, after),
        "char": index,
        "line": line,
        "column": column,
    }


def side_by_side(result: CaseResult, anchor: str) -> list[dict[str, Any]]:
    """For each differing field: both sides, the first differing byte's offset, line and column, the
    differing characters named, and the line-level unified diff (or the field that showed the same one)."""
    views = []
    seen: dict[Any, str] = {}
    for number, diff in enumerate(result.diffs):
        pair = diff_pair(
            diff.reference,
            diff.impl,
            f"{anchor}-d{number}",
            reference_present=diff.reference_present,
            impl_present=diff.impl_present,
        )
        lines = unified_lines(diff.reference, diff.impl)
        key = diff_key(lines) if lines else None
        same_as = seen.get(key) if key else None
        if key and same_as is None:
            seen[key] = diff.field
        unified = mark_lines(lines, glyph_html) if lines and same_as is None else []
        named = field_diff_json(diff)["difference"]
        views.append(
            {
                "field": diff.field,
                "offset": diff.offset,
                "difference": named,
                "unified": unified,
                "same_as": same_as,
                **pair,
            }
        )
    return views


def field_rows(result: CaseResult) -> list[dict[str, Any]]:
    """One row per compared field: sizes on both sides and whether (and where) they differ."""
    if result.turns:
        return []  # a lifecycle probe's comparisons are its turn table
    diffs = {d.field: d for d in result.diffs}
    port_record = (result.impl_outcome.record if result.impl_outcome else None) or {}
    ref_record = (result.reference_outcome.record if result.reference_outcome else None) or {}
    if result.impl_outcome is not None and result.reference_outcome is not None:
        seen = view_of(result.compared).apply(result.reference_outcome, result.impl_outcome)
        ref_record, port_record = seen[0].record or {}, seen[1].record or {}
    rows = []
    for name in verdict_fields(result):
        diff = diffs.get(name)
        if diff is not None:
            ref_side, port_side = (diff.reference, diff.reference_present), (diff.impl, diff.impl_present)
        else:
            port_side = (port_record.get(name), name in port_record)
            ref_side = (ref_record.get(name), name in ref_record) if result.reference_outcome is not None else port_side
        rows.append(
            {
                "field": name,
                "reference": _size(*ref_side),
                "port": _size(*port_side),
                "differs": diff is not None,
                "offset": diff.offset if diff else None,
            }
        )
    return rows


def _size(value: Any, present: bool) -> str:
    """A compared field's size as the field table shows it: `absent` only for a side that lacks it."""
    if not present:
        return "absent"
    if isinstance(value, str):
        return f"{len(value.encode('utf-8', 'surrogatepass'))} bytes"
    return json.dumps(value, default=repr)


def turn_rows(result: CaseResult, anchor: str) -> list[dict[str, Any]]:
    """Lifecycle probes: one row per turn and observation, both sides, the differing ones (the turn's `diffs`)
    flagged and marked. A probe run on the Python port alone (golden) shows its reference side as not run."""
    rows = []
    ran_reference = any(turn.get("reference") for turn in result.turns)
    not_run = Side(Markup('<span class="muted">not run</span>'), 0)
    for number, turn in enumerate(result.turns):
        python, reference = turn.get("impl") or {}, turn.get("reference") or {}
        differing = {d.get("observation"): d for d in turn.get("diffs") or []}
        names = list(reference) + [k for k in python if k not in reference]
        names += [k for k in differing if k not in names]
        for position, name in enumerate(names):
            row = {"turn": turn.get("turn"), "step": turn.get("step", ""), "observation": name}
            if name in differing:
                diff = differing[name]
                pair = diff_pair(
                    _turn_value(diff.get("reference", reference.get(name))),
                    _turn_value(diff.get("impl", python.get(name))),
                    f"{anchor}-t{number}-{position}",
                    TURN_BEFORE,
                    TURN_AFTER,
                )
                rows.append({**row, "differs": True, "reference": pair["reference"], "port": pair["port"]})
            else:
                port_side = _plain(python.get(name), name in python)
                ref_side = _plain(reference.get(name), name in reference) if ran_reference else not_run
                rows.append({**row, "differs": False, "reference": ref_side, "port": port_side})
    return rows


def _plain(value: Any, present: bool) -> Side:
    return Side(_short(_turn_value(value)) if present else Markup('<span class="glyph">absent</span>'), 0)


def _turn_value(value: Any) -> str:
    """An observation as text: strings as they are, anything else (null, booleans, lists) as JSON."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True, default=repr)


def _short(text: str) -> Markup:
    limit = TURN_BEFORE + TURN_AFTER
    if len(text) <= limit:
        return glyph_html(text)
    cut = len(text[limit:].encode("utf-8", "surrogatepass"))
    return glyph_html(text, 0, limit) + Markup(f'<span class="cut">… {cut} more bytes not shown</span>')


def result_keys(results: list[CaseResult]) -> Callable[[CaseResult], tuple[str, str]]:
    """How the page tells results apart: (case, reference), or with several implementations under test,
    (case, `implementation @ reference`): a grid column per implementation and reference."""
    several = len({r.implementation for r in results}) > 1

    def key(result: CaseResult) -> tuple[str, str]:
        return result.case_id, f"{result.implementation} @ {result.reference}" if several else result.reference

    return key


def anchors(results: list[CaseResult], key: Callable[[CaseResult], tuple[str, str]]) -> dict[tuple[str, str], str]:
    """A unique, stable HTML id for each result, from its position in the sorted results."""
    return {key(r): f"case-{n}-" + re.sub(r"[^A-Za-z0-9._-]+", "_", "--".join(key(r))) for n, r in enumerate(results)}


def _repeat_of(
    result: CaseResult,
    linked: dict[tuple[str, str], str],
    first_of: dict[str, CaseResult],
    key: Callable[[CaseResult], tuple[str, str]],
) -> dict:
    """For the second and later results of one cause: the anchor and name of the first (shown in full)."""
    first = first_of.setdefault(cause_of(result), result)
    if first is result:
        return {"first_of_cause": "", "first_label": ""}
    return {"first_of_cause": linked[key(first)], "first_label": f"{first.case_id} [{key(first)[1]}]"}


SUMMARY_REFERENCES = 8  # a conformance table lists this many references in full; past it, the all-passing ones fold


def conformance_tables(results: list[CaseResult]) -> list[dict[str, Any]]:
    """One table per implementation (report.summary): its summary, and its rows by reference split into those
    shown and those folded (all passed, when there are more than SUMMARY_REFERENCES)."""
    tables = []
    for summary in summarize(results):
        rows = list(summary.references.items())
        many = len(rows) > SUMMARY_REFERENCES
        shown = [(name, c) for name, c in rows if not many or c.passed != c.total]
        folded = [(name, c) for name, c in rows if many and c.passed == c.total]
        tables.append({"summary": summary, "references": shown, "folded": folded})
    return tables


def counts_pass(results: list[CaseResult]) -> int:
    """How many results passed."""
    return sum(1 for r in results if r.status == Status.PASS)


def page_data(
    results: list[CaseResult],
    references: list[str],
    linked: dict[tuple[str, str], str],
    key: Callable[[CaseResult], tuple[str, str]],
) -> str:
    """Every result as the page's script needs it to draw the grid and, on demand, the passing rows of the
    results table (a passing row is not in the file as HTML: at 35 references that would be megabytes).

    JSON for a `<script type="application/json">`: string tables (`cases` with their `tags`, `references`,
    `profiles`, `statuses`) and `rows`, one `[case, reference, profile, status]` index list per result in
    the table's order, with the anchor of its details section as a fifth item when it has one."""
    tables: dict[str, dict[str, int]] = {"cases": {}, "references": {}, "profiles": {}, "statuses": {}}
    tables["references"] = {name: number for number, name in enumerate(references)}  # the grid's column order

    def index(table: str, value: str) -> int:
        return tables[table].setdefault(value, len(tables[table]))

    tags: dict[str, str] = {}
    rows: list[list[Any]] = []
    for r in results:
        tags.setdefault(r.case_id, " ".join(r.tags))
        row: list[Any] = [
            index("cases", r.case_id),
            index("references", key(r)[1]),
            index("profiles", r.profile),
            index("statuses", str(r.status)),
        ]
        if key(r) in linked:
            row.append(linked[key(r)])
        rows.append(row)
    data = {name: list(table) for name, table in tables.items()}
    data["tags"] = [tags[c] for c in data["cases"]]
    text = json.dumps({**data, "rows": rows}, ensure_ascii=True, separators=(",", ":"))
    return text.replace("</", "<\\/")  # never ends the script element


def render_html(report: RunReport) -> str:
    """The whole page, as text."""
    env = Environment(loader=PackageLoader("harness.report", "templates"), autoescape=select_autoescape(["html", "j2"]))
    template = env.get_template("report.html.j2")
    results = sorted(report.results, key=lambda r: (r.case_id, release_key(r.reference), r.implementation))
    key = result_keys(results)
    ids = anchors(results, key)
    detailed = [r for r in results if r.status != Status.PASS]  # passing results: one light row each
    linked = {key(r): ids[key(r)] for r in detailed}
    matrix: dict[str, dict[str, CaseResult]] = {}
    for r in results:
        matrix.setdefault(r.case_id, {})[key(r)[1]] = r
    entries = report_entries(report)
    details = _details(detailed, linked, key, entries, shown_in_full(results, entries))
    references = sorted({key(r)[1] for r in results}, key=lambda column: (release_key(column.split(" @ ")[-1]), column))
    groups = failure_groups(results)
    return template.render(
        report=report,
        counts=report.counts,
        results=results,
        references=references,
        matrix=matrix,
        tags=sorted({t for r in results for t in r.tags}),
        details=details,
        groups=groups,
        run=report.extra.get("run") or {},
        passing=counts_pass(results),
        verdict=verdict(report, results, len(groups)),
        GOLDEN=GOLDEN,
        data=Markup(page_data(results, references, linked, key)),
        linked=linked,
        key=key,
        command=" ".join(shlex.quote(c) for c in report.command),
        show_before=SHOW_BEFORE,
        show_after=SHOW_AFTER,
        Status=Status,
        matrix_columns=MATRIX_COLUMNS,
        conformance=conformance_tables(results),
        columns=COLUMNS,
        families=FAMILIES,
        explained=explained_rows(entries, report.extra.get(RULES) or {}, linked, key),
    )


def _details(
    detailed: list[CaseResult],
    linked: dict[tuple[str, str], str],
    key: Callable[[CaseResult], tuple[str, str]],
    entries: list[Attribution],
    full: set[tuple[str, str, str]],
) -> list[dict[str, Any]]:
    """What the page shows of each result that did not pass: in full (its rule's and cause's representative),
    else its first differences and a link to the result shown in full."""
    attributed = attribution_of(entries)
    first_of: dict[str, CaseResult] = {}
    details = []
    for r in detailed:
        anchor, whole = linked[key(r)], (r.implementation, r.case_id, r.reference) in full
        found = attributed.get((r.implementation, r.case_id, r.reference))
        detail = {
            "result": r,
            "anchor": anchor,
            "reproduce": reproduce_commands(r),
            "whole": whole,
            "rule": found[0].name if found else "",
            "evidence": found[1] if found else "",
            "request": json.dumps(r.request, indent=1, ensure_ascii=False) if r.request else "",
            **_repeat_of(r, linked, first_of, key),
        }
        if whole:
            detail.update(views=side_by_side(r, anchor), fields=field_rows(r), turns=turn_rows(r, anchor))
        else:  # shown in full at its rule's smallest case: here its first differences, with their context
            first = found[0].representative if found else None
            detail.update(views=[], fields=field_rows(r), turns=[], brief=[field_diff_json(d) for d in r.diffs[:3]])
            if first is not None:
                detail.update(first_of_cause=linked[key(first)], first_label=f"{first.case_id} [{key(first)[1]}]")
        details.append(detail)
    return details
