"""What index.html builds beyond each result: the verdict banner, failures grouped by cause, and the
line-level unified diff of a differing value.

The banner counts results against real references apart from golden checks (`harness.core.model.GOLDEN`: the
port against expected bytes stored in the case, no release), which it names on a line of their own.

A cause is the failing status, each differing field with its kind (verdict.signature.field_kind) and the
first differing characters named (verdict.text); an error's cause is its first reason. The reference is
not part of a cause, so one cause seen against 35 releases is one group. Reasons are grouped with their numbers
masked (`cause_of`: `exit status 1` and `exit status 2` are one cause), but a group shows the real text of its
first result (`cause_text`), digits and all.
"""

from __future__ import annotations

import difflib
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from markupsafe import Markup

from harness.core.model import CaseResult, RunReport, Status, is_golden
from harness.core.plural import counted
from harness.core.reference import release_key
from harness.verdict.diff import field_diff_json
from harness.verdict.signature import field_kind
from harness.verdict.text import first_difference

DIFF_LINES = 400  # most lines of a unified diff shown per value
DIFF_INPUT_LINES = 5_000  # lines of each side given to difflib around the first difference
_NUMBERS = re.compile(r"\d+")
_TURN = re.compile(r"^turn \d+: ")  # a lifecycle diff's field names its turn: one cause whichever turns it hits


@dataclass
class Group:
    """Failing results that share one cause."""

    cause: str
    status: str
    results: list[CaseResult] = field(default_factory=list)

    @property
    def cases(self) -> list[str]:
        return sorted({r.case_id for r in self.results})

    @property
    def references(self) -> list[str]:
        return sorted({r.reference for r in self.results}, key=release_key)


def cause_of(result: CaseResult) -> str:
    """What groups results into one cause: cause_text with every number of a reason masked."""
    return cause_text(result, masked=True)


def cause_text(result: CaseResult, masked: bool = False) -> str:
    """A result's cause as people read it: its differing fields and first difference, else its first reason."""
    if result.diffs:
        first = field_diff_json(result.diffs[0])
        kinds = ", ".join(dict.fromkeys(f"{_TURN.sub('', d.field)} ({field_kind(d)})" for d in result.diffs))
        return f"{kinds}; first: {first['difference']}"
    if result.turns:
        observed = sorted({d.get("observation", "") for t in result.turns for d in t.get("diffs") or []})
        return f"lifecycle observations differ: {', '.join(observed)}" if observed else "lifecycle"
    reason = result.reasons[0] if result.reasons else str(result.status)
    line = reason.splitlines()[0] if reason else ""
    return (_NUMBERS.sub("N", line) if masked else line)[:240] if line else str(result.status)


def failure_groups(results: list[CaseResult]) -> list[Group]:
    """The failing and diverging (non-passing) results by cause, largest group first."""
    groups: dict[tuple[str, str], Group] = {}
    for result in results:
        if result.status == Status.PASS:
            continue
        key = (str(result.status), cause_of(result))
        groups.setdefault(key, Group(cause_text(result), key[0])).results.append(result)
    return sorted(groups.values(), key=lambda g: (not _failing(g), -len(g.results), g.cause))


def _failing(group: Group) -> bool:
    return any(r.status.failing for r in group.results)


def unified_lines(reference: Any, port: Any) -> list[tuple[str, str]] | None:
    """The line-level unified diff of two texts, as (kind, line) with kind `hunk`, `del`, `ins` or `same`;
    None when a side is not text. Long inputs are cut to DIFF_INPUT_LINES around the first differing line."""
    if not isinstance(reference, str) or not isinstance(port, str):
        return None
    left, right = reference.splitlines(keepends=True), port.splitlines(keepends=True)
    start = 0
    while start < min(len(left), len(right)) and left[start] == right[start]:
        start += 1
    start = max(0, start - 3)
    left, right = left[start : start + DIFF_INPUT_LINES], right[start : start + DIFF_INPUT_LINES]
    lines: list[tuple[str, str]] = []
    for line in list(difflib.unified_diff(left, right, "reference", "implementation", n=2, lineterm=""))[2:]:
        if line.startswith("@@"):
            numbers = [int(n) + (start if i in (0, 2) else 0) for i, n in enumerate(_NUMBERS.findall(line)[:4])]
            label = f"@@ -{numbers[0]},{numbers[1]} +{numbers[2]},{numbers[3]} @@" if len(numbers) == 4 else line
            lines.append(("hunk", label))
        else:
            lines.append(({"-": "del", "+": "ins"}.get(line[:1], "same"), line[1:]))
        if len(lines) >= DIFF_LINES:
            lines.append(("hunk", f"… (the diff is cut after {DIFF_LINES} lines)"))
            break
    return lines


def diff_key(lines: list[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
    """What makes two unified diffs the same change: their differing lines."""
    return tuple(line for line in lines if line[0] in ("del", "ins"))


def mark_lines(lines: list[tuple[str, str]], render: Any) -> list[dict[str, Any]]:
    """Rows for the template: each line's kind, its sign and its HTML (glyphs for invisible characters), the
    first differing character of the first removed and first added line marked as in the side-by-side view."""
    sign = {"del": "-", "ins": "+", "same": " ", "hunk": ""}
    first = {kind: next((i for i, (k, _) in enumerate(lines) if k == kind), None) for kind in ("del", "ins")}
    column = None
    if first["del"] is not None and first["ins"] is not None:
        column = first_difference(lines[first["del"]][1], lines[first["ins"]][1])
    rows = []
    for index, (kind, text) in enumerate(lines):
        html = Markup(render(text))
        if column is not None and index in (first["del"], first["ins"]):
            at = render(text, column, column + 1) if column < len(text) else Markup('<span class="glyph">END</span>')
            html = Markup(render(text, 0, column)) + Markup('<mark class="first-diff">') + at + Markup("</mark>")
            html += Markup(render(text, min(column + 1, len(text)), len(text)))
        rows.append({"kind": kind, "sign": sign[kind], "html": html})
    return rows


def verdict(report: RunReport, results: list[CaseResult], causes: int) -> dict[str, str]:
    """The banner's text: `head` (INTERRUPTED / PASS / FAILING / NOTHING RAN, counting every result, as the counts
    beneath it do), `shape` (cases x references) and `golden` (the golden checks among the results, which no
    reference ran; empty when there are none)."""
    real = [r for r in results if not is_golden(r.reference)]
    golden = [r for r in results if is_golden(r.reference)]
    failing, golden_failing = sum(r.failed for r in results), sum(r.failed for r in golden)
    known = sum(r.status == Status.KNOWN for r in results)
    stopped = report.extra.get("run", {}).get("interrupted")  # a partial run (harness.run.meta.interrupted)
    if stopped:
        left = counted(len(stopped["not_run"]), "case")
        head = f"INTERRUPTED ({stopped['by']}): {counted(len(results), 'result')}, {failing} failing; {left} not run"
    elif not results:
        head = "NOTHING RAN"
    elif report.ok:
        head = "PASS: the 1 result agrees" if len(results) == 1 else f"PASS: all {len(results)} results agree"
        head += f" ({counted(known, 'known divergence')})" if known else ""
    else:
        among = f" ({counted(golden_failing, 'golden check')})" if golden_failing else ""
        parts = [f"{failing} of {counted(len(results), 'result')}{among}"]
        parts += [f"{counted(len(report.load_errors), 'scenario file')} not loaded"] if report.load_errors else []
        head = "FAILING: " + ", ".join(parts) + (f", {counted(causes, 'distinct cause')}" if causes else "")
    references = {r.reference for r in real}
    shape = f"{counted(len({r.case_id for r in real}), 'case')} × {counted(len(references), 'reference')}"
    note = ""
    if golden:
        statuses = Counter(r.status for r in golden)  # pass, and each other status named: never counted as a pass
        note = (
            f"{counted(len(golden), 'golden check')} among the results, not a reference: "
            f"{counted(len({r.case_id for r in golden}), 'case')} checked against the expected bytes stored in the "
            f"case, {statuses[Status.PASS]} of {len(golden)} pass"
        )
        note += "".join(f", {statuses[s]} {s}" for s in Status if s != Status.PASS and statuses[s])
    return {"head": head, "shape": shape, "golden": note}
