"""`conformance merge-reports DIR... --out DIR`: shard reports (`run --shard K/N`) into one report.

Each input is a directory holding report.json (or the file itself). Results are read back into
CaseResults and written by harness.report's own writers, so the merged report.json, junit.xml and
index.html are what one unsharded run would have written (timings aside). A (case, reference)
pair in two inputs means the shards overlapped: an error, never a silent pick.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from harness.model import CaseResult, RunReport, ScenarioError
from harness.report.write import SCHEMA, result_from_json


class MergeError(Exception):
    """Inputs that cannot be merged; the message names the file and what is wrong."""


def read_report(path: Path) -> tuple[Path, dict[str, Any]]:
    file = path / "report.json" if path.is_dir() else path
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except OSError as error:
        raise MergeError(f"{file}: cannot read it ({error.strerror}); give a report directory or report.json") from None
    except ValueError as error:
        raise MergeError(f"{file}: not JSON ({error})") from None
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        got = data.get("schema") if isinstance(data, dict) else None
        raise MergeError(f"{file}: schema {got!r}, expected {SCHEMA!r} (a report.json from `conformance run`)")
    return file, data


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


def merge_reports(paths: list[Path], command: list[str]) -> RunReport:
    reports = [read_report(path) for path in paths]
    if not reports:
        raise MergeError("no reports given")
    results: list[CaseResult] = []
    seen: dict[tuple[str, str], Path] = {}
    timing = True
    for file, data in reports:
        for entry in data["results"]:
            key = (entry["case"], entry["reference"])
            if key in seen:
                raise MergeError(
                    f"{file}: case {key[0]!r} against {key[1]!r} is also in {seen[key]}: the shards overlap "
                    "(run every shard with the same N and the same cases)"
                )
            seen[key] = file
            timing = timing and "timing" in entry
            results.append(result_from_json(entry))
    load_errors: dict[tuple[str, int | None, str], ScenarioError] = {}
    for _, data in reports:
        for error in data["load_errors"]:
            load_errors.setdefault((error["path"], error["line"], error["message"]), _load_error(error))
    references = _merge_references([data for _, data in reports])
    return RunReport(results, references, list(load_errors.values()), command, timing=timing)
