"""What a run says on the terminal: live progress on a TTY, the failures explained by rule (the rules an
implementation breaks, most explaining first: report.explained), the closing list of failing results with
their first difference (`-v`), the conformance summary per implementation (report.summary), and the
slowest results (--durations). Shared by `run` and `matrix`."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TextIO

from harness.core.model import CaseResult, RunReport, Status
from harness.core.plural import counted
from harness.report.explained import RULES, report_entries
from harness.report.reproduce import reproduce_commands
from harness.report.summary import counts_text, summarize
from harness.verdict.attribute import EVERY_CASE, Attribution
from harness.verdict.diff import first_difference_line, render_field_diff

RULES_SHOWN = 10  # rules (or causes) the explained summary lists per implementation; -v lists them all


class Progress:
    """`[done/total] failures: N  case-id` on a terminal, rewritten in place; silent otherwise.

    Also counts failing results for -x/--maxfail (`stop`), from `failures` (the files that did not load)."""

    def __init__(self, total: int, stream: TextIO | None = None, maxfail: int | None = None, failures: int = 0) -> None:
        self.total, self.done, self.failures, self.maxfail = total, 0, failures, maxfail
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty()

    def __call__(self, result: CaseResult) -> None:
        self.done += 1
        if result.status.failing:
            self.failures += 1
        if self.enabled:
            line = f"[{self.done}/{self.total}] failures: {self.failures}  {result.case_id[:40]}"
            self.stream.write(f"\r{line:<72}")
            self.stream.flush()

    def stop(self) -> bool:
        return self.maxfail is not None and self.failures >= self.maxfail

    def finish(self) -> None:
        if self.enabled:
            self.stream.write("\n")
            self.stream.flush()


def cached_text(results: list[CaseResult]) -> str:
    """`, N cached` for the closing count line when N results took the reference's side from the result store."""
    cached = sum(1 for r in results if r.cached)
    return f", {cached} cached" if cached else ""


def summary_lines(results: list[CaseResult]) -> list[str]:
    """The closing short summary: one line per failing result (pytest's `short test summary info`)."""
    failing = [r for r in results if r.failed]
    if not failing:
        return []
    lines = [f"=== {counted(len(failing), 'failing result')} ==="]
    lines += [f"{r.status.upper()} {r.case_id} [{r.reference}]: {first_difference_line(r)}" for r in failing]
    return lines


def explained_lines(entries: list[Attribution], table: dict, shown: int | None = RULES_SHOWN) -> list[str]:
    """The failures explained by rule, per implementation, most explaining first: each rule with how many failing
    results it explains and how surely, its statement, its smallest failing case with that case's first
    difference, and the command that reproduces it. `shown` entries per implementation (None: all)."""
    lines: list[str] = []
    by_impl: dict[str, list[Attribution]] = {}
    for entry in entries:
        by_impl.setdefault(entry.implementation, []).append(entry)
    for implementation, mine in by_impl.items():
        failing = sum(e.explains for e in mine)
        rules = sum(1 for e in mine if e.rule is not None)
        lines.append(
            f"=== {implementation}: {counted(failing, 'failing result')} explained by "
            f"{counted(rules, 'rule')}, most explaining first ==="
        )
        for number, entry in enumerate(mine[:shown] if shown is not None else mine, 1):
            lines += _entry_lines(number, entry, table)
        hidden = mine[shown:] if shown is not None else []
        if hidden:
            more = sum(e.explains for e in hidden)
            lines.append(
                f"... and {counted(len(hidden), 'more rule or cause', 'more rules or causes')} explaining "
                f"{counted(more, 'failing result')} (-v lists them all)"
            )
    return lines


def _entry_lines(number: int, entry: Attribution, table: dict) -> list[str]:
    first = entry.representative
    if entry.rule is None:
        head = f"{number}. no rule named: {entry.explains} × {entry.cause}"
        statement = "  (the failing cases name no rule of cases/rules.yaml: grouped by their first difference)"
    else:
        kind = (" (layout features, failing together)" if entry.also else " (layout feature)") if entry.feature else ""
        if entry.guesses == entry.explains:
            how = "a guess: its cases name other rules too"
        elif entry.guesses:
            how = f"{entry.guesses} of them a guess"
        else:
            how = EVERY_CASE if all(e == EVERY_CASE for e in entry.evidence.values()) else "each pinned by it"
        head = (
            f"{number}. {entry.name}{kind}: explains {counted(entry.explains, 'failure')} ({how}; "
            f"{entry.failing} of its {entry.applicable} applicable results fail)"
        )
        statement = f"  {table.get(entry.rule, {}).get('statement', '')}"
    return [
        head,
        statement,
        f"  smallest: {first.case_id} [{first.reference}]: {first_difference_line(first)}"[:400],
        f"  reproduce: {reproduce_commands(first)[0]}"[:400],
    ]


def not_applicable_lines(results: list[CaseResult], shown: int = 3) -> list[str]:
    """Why results are not applicable: one line per reason, with how many results give it and the first cases."""
    by_reason: dict[str, list[CaseResult]] = {}
    for result in results:
        if result.status == Status.NOT_APPLICABLE:
            by_reason.setdefault("; ".join(result.reasons) or "no reason given", []).append(result)
    lines = []
    for reason, group in by_reason.items():
        cases = list(dict.fromkeys(f"{r.case_id} [{r.reference}]" for r in group))
        more = f" and {len(cases) - shown} more" if len(cases) > shown else ""
        lines.append(f"NOT-APPLICABLE: {', '.join(cases[:shown])}{more}: {reason}")
    return lines


def durations_lines(results: list[CaseResult], count: int) -> list[str]:
    """The `count` slowest results (0: all), slowest first."""
    slowest = sorted(results, key=lambda r: (-r.seconds, r.case_id, r.reference))
    chosen = slowest if count == 0 else slowest[:count]
    return [f"=== slowest {counted(len(chosen), 'result')} ==="] + [
        f"{r.seconds:8.3f}s {r.case_id} [{r.reference}]" for r in chosen
    ]


def conformance_lines(results: list[CaseResult], families: bool = True) -> list[str]:
    """The conformance summary, compact: one line per implementation with its totals, then (`families`), indented,
    each tag family in which it has failing results (report.summary decides the families and the columns)."""
    summaries = summarize(results)
    if not summaries:
        return []
    lines = [f"=== conformance by implementation ({len(summaries)}) ==="]
    for summary in summaries:
        lines.append(f"{summary.implementation}: {counts_text(summary.total)}")
        if families:
            lines += [f"  {name}: {counts_text(counts)}" for name, counts in summary.failing_families.items()]
    return lines


def print_conformance(results: list[CaseResult], stream: TextIO | None = None, families: bool = True) -> None:
    """Print conformance_lines (the closing summary `conformance run` prints before its counts line)."""
    for line in conformance_lines(results, families):
        print(line, file=stream or sys.stdout)


PER_RESULT = 10  # up to this many failing results, a run also lists each one (and always with -v)


def print_results(report: RunReport, verbose: bool, durations: int | None) -> None:
    """What a run prints at the end: the failures explained by rule (harness.verdict.attribute), most explaining
    first; each failing result (with -v, or when there are at most PER_RESULT); why results are not applicable;
    the conformance summary (its failing tag families with -v or few failures); --durations."""
    results = report.results
    failing = [r for r in results if r.failed]
    each = verbose or len(failing) <= PER_RESULT
    if each:
        for result in failing:
            where = f"[{result.reference}] {result.implementation}"
            print(f"{result.status.upper()}: {result.case_id} {where} ({result.path})", file=sys.stderr)
            for reason in result.reasons:
                print(f"  {reason}", file=sys.stderr)
            for diff in result.diffs[:3]:
                print("  " + render_field_diff(diff).replace("\n", "\n  "), file=sys.stderr)
    for line in not_applicable_lines(results):
        print(line, file=sys.stderr)
    lines = summary_lines(results) if each else []
    lines += explained_lines(report_entries(report), report.extra.get(RULES) or {}, None if verbose else RULES_SHOWN)
    lines += durations_lines(results, durations) if durations is not None else []
    for line in lines:
        print(line)
    print_conformance(results, families=each)


def reports_line(paths: dict[str, Path]) -> str:
    """The files a command wrote (harness.report.writers.write_reports), as the terminal names them."""
    return "reports: " + " ".join(str(path) for path in paths.values())
