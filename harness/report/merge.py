"""`conformance merge-reports DIR... --out DIR`: shard reports (`run --shard K/N`) into one report; and
`run --lf --report DIR`'s re-run into DIR's previous report (merge_rerun).

Each input is a directory holding report.json (or the file itself). Results are read back into
CaseResults and written by harness.report's own writers, so the merged report.json, junit.xml and
index.html are what one unsharded run would have written (timings aside); so is report.json's `summary`,
recomputed from the merged results (report.summary), never added up from the inputs' own. A (case,
reference, implementation) in two inputs means the shards overlapped: an error, never a silent pick.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from harness.core.model import CaseResult, RunReport, ScenarioError
from harness.report.explained import RULES
from harness.report.stored import ReportError, full_entries, read_report
from harness.report.write import result_from_json

MergeError = ReportError  # inputs that cannot be merged; the message names the file and what is wrong


def _load_error(data: dict[str, Any]) -> ScenarioError:
    path, line, message = Path(data["path"]), data["line"], data["message"]
    prefix = f"{path}:{line}: " if line else f"{path}: "
    return ScenarioError(path, line, message.removeprefix(prefix))


def _merge_references(reports: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One entry per reference, in the first report's order: the most started one, with every shard's starts."""
    order: list[str] = []
    entries: dict[str, list[dict[str, Any]]] = {}
    for data in reports:
        for info in data["references"]:
            key = info.get("name", json.dumps(info, sort_keys=True))
            if key not in entries:
                order.append(key)
                entries[key] = []
            entries[key].append(info)
    merged = []
    for key in order:
        infos = entries[key]
        best = max(infos, key=lambda info: (info.get("starts", 0), bool(info.get("info"))))
        if any("starts" in info for info in infos):
            best = {**best, "starts": sum(info.get("starts", 0) for info in infos)}
        merged.append(best)
    return merged


def missing_shards(reports: list[tuple[Path, dict[str, Any]]]) -> list[str]:
    """The shards (`K/N`) of a sharded run that no input holds; refuses inputs from runs of different N.

    A report says which shard it is in its `run` metadata; reports that do not say are not counted."""
    shards: dict[Path, tuple[int, int]] = {}
    for file, data in reports:
        text = (data.get("run") or {}).get("shard")
        if text:
            k, _, n = str(text).partition("/")
            shards[file] = (int(k), int(n))
    counts = {count for _, count in shards.values()}
    if len(counts) > 1:
        named = ", ".join(f"{file} is {k}/{n}" for file, (k, n) in shards.items())
        raise MergeError(f"the reports come from runs split different ways ({named}): merge shards of one run")
    if not counts:
        return []
    count = counts.pop()
    present = {index for index, _ in shards.values()}
    return [f"{k}/{count}" for k in range(1, count + 1) if k not in present]


def merge_reports(paths: list[Path], command: list[str], *, allow_partial: bool = False) -> RunReport:
    reports = [read_report(path) for path in paths]
    if not reports:
        raise MergeError("no reports given")
    missing = missing_shards(reports)
    if missing and not allow_partial:
        raise MergeError(
            f"shard(s) {', '.join(missing)} missing: merge every shard's report, or pass --allow-partial "
            "to merge what is there (the merged report then says which shards it lacks)"
        )
    results: list[CaseResult] = []
    seen: dict[tuple[str, str, str], Path] = {}
    timing = True
    for file, data in reports:
        for entry in full_entries(data):
            result = result_from_json(entry, data.get("outputs"))
            key = (result.case_id, result.reference, result.implementation)
            if key in seen:
                raise MergeError(
                    f"{file}: case {key[0]!r} against {key[1]!r} ({key[2]}) is also in {seen[key]}: the shards "
                    "overlap (run every shard with the same N and the same cases)"
                )
            seen[key] = file
            timing = timing and "timing" in entry
            results.append(result)
    load_errors: dict[tuple[str, int | None, str], ScenarioError] = {}
    for _, data in reports:
        for error in data["load_errors"]:
            load_errors.setdefault((error["path"], error["line"], error["message"]), _load_error(error))
    references = _merge_references([data for _, data in reports])
    first_run = next((data["run"] for _, data in reports if data.get("run")), None)
    extra: dict[str, Any] = {}
    if first_run is not None:
        run = {k: v for k, v in first_run.items() if k not in ("timing", "shard")}
        extra["run"] = {
            **run,
            "command": command,
            "merged": len(reports),
            **({"missing_shards": missing} if missing else {}),
        }
    rules = {rule_id: rule for _, data in reports for rule_id, rule in (data.get(RULES) or {}).items()}
    if rules:
        extra[RULES] = rules  # the attribution is made again from the merged results (report.explained)
    return RunReport(results, references, list(load_errors.values()), command, timing=timing, extra=extra)


def merge_rerun(previous: Path, rerun: RunReport) -> RunReport:
    """`run --lf --report DIR`: DIR's previous report with the re-run's results in place of the ones they
    re-ran (same case, reference and implementation), every other previous result kept where it was, so DIR
    still holds the whole run (pytest keeps a last-failed set beside its results, never a subset in their place).
    The load errors are the re-run's (it loaded the corpus again); each reference is named once, as by
    merge_reports; `run.last_failed` says how many results were re-run and how many kept."""
    file, data = read_report(previous)
    entries = full_entries(data)
    fresh = {(r.case_id, r.reference, r.implementation): r for r in rerun.results}
    results: list[CaseResult] = []
    kept = 0
    for entry in entries:
        old = result_from_json(entry, data.get("outputs"))
        key = (old.case_id, old.reference, old.implementation)
        if key in fresh:
            results.append(fresh.pop(key))
        else:
            results.append(old)
            kept += 1
    results += fresh.values()  # a result the previous report did not have (a case added since)
    timing = rerun.timing and all("timing" in entry for entry in entries)
    references = _merge_references([{"references": rerun.references}, data])
    extra = dict(rerun.extra)
    if "run" in extra:
        extra["run"] = {**extra["run"], "last_failed": {"report": str(file), "rerun": len(rerun.results), "kept": kept}}
    return RunReport(results, references, rerun.load_errors, rerun.command, timing=timing, extra=extra)
