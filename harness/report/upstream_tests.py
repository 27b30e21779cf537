"""The report of `conformance upstream-tests`: report.json (schema `letta-conformance/upstream-tests/1`),
index.html (templates/upstream_tests.html.j2), both written by harness.report.writers, and the terminal's
tables, all from the records of harness.report.upstream_records (this module imports no runner, bridge or bun code).

Each revision gets one table: every selected test file with its counts, then every test that did not pass,
with its verdict, who is at fault and why; a failure carries upstream's assertion message and the call that
produced the value (its request and the implementation's answer). Timing lives only under `timing` keys.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import asdict, dataclass
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape

from harness.report.upstream_records import FileRun, Outcome, RevisionResult, TestVerdict, UpstreamRun, Verdict
from harness.run.meta import run_metadata

SCHEMA = "letta-conformance/upstream-tests/1"
SHOWN = 4000  # characters of one string of a call shown in the report (the rest counted)


def _cut(value: Any) -> Any:
    """A call's request or answer with every long string cut to SHOWN characters (saying how much was left out)."""
    if isinstance(value, str) and len(value) > SHOWN:
        return value[:SHOWN] + f"... [{len(value) - SHOWN} more characters]"
    if isinstance(value, dict):
        return {key: _cut(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_cut(item) for item in value]
    return value


def _file_json(run: FileRun | None, timing: bool) -> dict[str, Any] | None:
    if run is None:
        return None
    data: dict[str, Any] = {
        "exit_code": run.exit_code,
        "tests": len(run.tests),
        "load_error": run.load_error,
        "calls": len(run.calls),
        "calls_attributed": run.attributed,
    }
    if timing:
        data["timing"] = {"seconds": run.seconds}
    return data


def test_json(test: TestVerdict) -> dict[str, Any]:
    data = test.to_json()
    data["call"] = _cut(test.call)
    data["call_log"] = [_cut(call) for call in test.call_log] if test.verdict == Verdict.FAIL else []
    return data


def revision_json(revision: RevisionResult, timing: bool) -> dict[str, Any]:
    control = {run.file: run for run in revision.control_runs}
    shim = {run.file: run for run in revision.shim_runs}
    counts = revision.counts()
    data: dict[str, Any] = {
        "label": revision.label,
        "repo": revision.repo,
        "rev": revision.rev,
        "commit": revision.commit,
        "version": revision.version,
        "profile": revision.profile,
        "implementation": revision.implementation,
        "implementation_info": revision.implementation_info,
        "error": revision.error,
        "notes": revision.notes,
        "packages": revision.packages,
        "forwarded": revision.forwarded,
        "kept_upstream": revision.kept,
        "swaps": revision.swaps,
        "targets": target_rows(revision),
        "files": [
            {
                "path": f.path,
                "reasons": f.reasons,
                "imports": f.imports,
                "targets": f.targets,
                "control": _file_json(control.get(f.path), timing),
                "shim": _file_json(shim.get(f.path), timing),
            }
            for f in revision.files
        ],
        "counts": asdict(counts),
        "tests": [test_json(t) for t in revision.tests],
    }
    if timing:
        data["timing"] = revision.timing
    return data


def report_json(run: UpstreamRun, timing: bool = True, started: float | None = None) -> dict[str, Any]:
    counts = run.counts()
    references = [
        {"label": r.label, "commit": r.commit, "version": r.version, "profile": r.profile} for r in run.revisions
    ]
    return {
        "schema": SCHEMA,
        "run": run_metadata(run.command, references, run.seconds if timing else None, started if timing else None),
        "implementation": run.implementation,
        "summary": {**asdict(counts), "line": counts.line()},
        "revisions": [revision_json(r, timing) for r in run.revisions],
    }


def file_rows(revision: RevisionResult) -> list[dict[str, Any]]:
    """Per selected file: its verdict counts and the control run's passes."""
    control = {run.file: run for run in revision.control_runs}
    rows = []
    for selected in revision.files:
        verdicts = Counter(t.verdict for t in revision.tests if t.file == selected.path)
        run = control.get(selected.path)
        passed = sum(t.outcome == Outcome.PASSED for t in run.tests) if run else 0
        row = {
            "file": selected.path,
            "reasons": selected.reasons,
            "pass": verdicts[Verdict.PASS],
            "fail": verdicts[Verdict.FAIL],
            "na": verdicts[Verdict.NOT_APPLICABLE],
            "broken": verdicts[Verdict.BROKEN],
        }
        rows.append({**row, "targets": selected.targets, "control": f"{passed}/{len(run.tests) if run else 0}"})
    return rows


def target_rows(revision: RevisionResult) -> list[dict[str, Any]]:
    """Per swap target with selected files at the revision, in the table's order: its files' verdict counts and
    control passes (a file selected by two targets counts for both)."""
    rows: dict[str, dict[str, Any]] = {}
    for row in file_rows(revision):
        for target in row["targets"]:
            into = rows.setdefault(target, {"target": target, "files": 0, "pass": 0, "fail": 0, "na": 0, "broken": 0})
            into["files"] += 1
            for key in ("pass", "fail", "na", "broken"):
                into[key] += row[key]
            passed, total = (int(n) for n in row["control"].split("/"))
            done, of = (int(n) for n in into.get("control", "0/0").split("/"))
            into["control"] = f"{done + passed}/{of + total}"
    order = [str(swap.get("target")) for swap in revision.swaps]  # the table's order (the compiler first)
    return sorted(rows.values(), key=lambda row: order.index(row["target"]) if row["target"] in order else len(order))


def render_html(run: UpstreamRun, data: dict[str, Any]) -> str:
    env = Environment(loader=PackageLoader("harness.report", "templates"), autoescape=select_autoescape(["html", "j2"]))
    template = env.get_template("upstream_tests.html.j2")
    rank = {Verdict.FAIL: 0, Verdict.BROKEN: 1, Verdict.NOT_APPLICABLE: 2, Verdict.PASS: 3}
    revisions = []
    for revision, stored in zip(run.revisions, data["revisions"], strict=True):
        tests = sorted(stored["tests"], key=lambda t: rank[Verdict(t["verdict"])])  # what did not pass first
        revisions.append((revision, file_rows(revision), {**stored, "tests": tests}))
    return template.render(
        run=run,
        data=data,
        revisions=revisions,
        Verdict=Verdict,
        dumps=lambda v: json.dumps(v, indent=1, ensure_ascii=False),
    )


@dataclass(frozen=True)
class UpstreamReport:
    """What upstream-tests' report files are written from (harness.report.writers): the run, whether it is timed,
    and when it started."""

    run: UpstreamRun
    timing: bool = True
    started: float | None = None


def upstream_json(report: UpstreamReport) -> bytes:
    """report.json's bytes."""
    data = report_json(report.run, report.timing, report.started)
    return (json.dumps(data, indent=1, ensure_ascii=False) + "\n").encode("utf-8")


def upstream_html(report: UpstreamReport) -> bytes:
    """index.html's bytes."""
    return render_html(report.run, report_json(report.run, report.timing, report.started)).encode("utf-8")


def _first_line(text: str, width: int = 160) -> str:
    line = next((part for part in text.splitlines() if part.strip()), "")
    return line if len(line) <= width else line[: width - 3] + "..."


def call_text(call: dict[str, Any] | None) -> str:
    """A forwarded call as one line: the function, where the test called it, the op it became."""
    if not call:
        return ""
    site = f" at {call['site']}" if call.get("site") else ""
    op = (call.get("request") or {}).get("op", "?")
    return f"{call.get('call')}{site} (op {op})"


def terminal_lines(run: UpstreamRun) -> list[str]:
    """The tables a terminal shows, per revision, and the closing line."""
    lines = []
    for revision in run.revisions:
        seconds = revision.timing.get("total")
        head = f"{revision.label}  {revision.commit[:12]}  letta-code {revision.version}  profile {revision.profile}"
        lines.append(f"{head}  impl {revision.implementation}" + (f"  {seconds:.1f} s" if seconds else ""))
        if revision.error:
            lines.append(f"  error: {revision.error}")
        lines.extend(f"  note: {note}" for note in revision.notes)
        rows = file_rows(revision)
        width = max([len(r["file"]) for r in rows] + [4])
        lines.append(f"  {'file':<{width}}  pass  fail   n/a  broken  control")
        for row in rows:
            lines.append(
                f"  {row['file']:<{width}}  {row['pass']:>4}  {row['fail']:>4}  {row['na']:>4}  "
                f"{row['broken']:>6}  {row['control']:>7}"
            )
        lines.extend(not_passing_lines(revision))
        for row in target_rows(revision):
            lines.append(
                f"  target {row['target']}: {row['files']} file(s), {row['pass']} passed, {row['fail']} failed, "
                f"{row['na']} not applicable, {row['broken']} broken (control: {row['control']} passed)"
            )
        lines.append(f"  {revision.counts().line()}")
    lines.append(run.counts().line())
    return lines


def not_passing_lines(revision: RevisionResult) -> list[str]:
    """Failures and broken tests one by one; not-applicable ones grouped by reason."""
    lines = []
    for test in revision.tests:
        if test.verdict == Verdict.FAIL:
            lines.append(f"  FAIL    {test.key}: {_first_line(test.message or test.reason)}")
            if test.message and test.reason:
                lines.append(f"          why: {_first_line(test.reason, 400)}")
            if test.call:
                lines.append(f"          call: {call_text(test.call)}")
        elif test.verdict == Verdict.BROKEN:
            lines.append(f"  broken  {test.key}: {_first_line(test.control_message or test.reason)}")
    reasons = Counter(t.reason for t in revision.tests if t.verdict == Verdict.NOT_APPLICABLE)
    for reason, count in sorted(reasons.items(), key=lambda item: (-item[1], item[0])):
        lines.append(f"  n/a     {count} test{'s' if count != 1 else ''}: {_first_line(reason)}")
    return lines
