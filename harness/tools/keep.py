"""`conformance run --keep DIR`: what a run built and what each side answered, passing results included, kept in a
documented layout (docs/keep.md) so a case can be looked at afterwards without rebuilding it by hand.

    DIR/index.json                      every case: its repository, its results (reference, implementation, status,
                                        directory), in the run's order
    DIR/CASE/case.yaml                  the scenario file as it was read
    DIR/CASE/repository/                the repository as built (work tree and git directory; `memory` in index.json
                                        names the directory the compilers were pointed at, relative to it)
    DIR/CASE/request.json               the compile request both sides were sent (its memoryDir is the run's copy)
    DIR/CASE/NN-REFERENCE--IMPL/        one per result, numbered in the run's order:
        verdict.json                    status, reasons, the fields that differ
        reference.json, implementation.json   each side's raw outcome: status, record (or thrown, error), notes
        reference.content, implementation.content   the record's `content` as bytes (UTF-8; a lone surrogate,
                                        which a JavaScript string may hold, as its three WTF-8 bytes)
        *.systemPromptWithSkills        the same for `systemPromptWithSkills`, when the request gave client skills
        turns.json                      a lifecycle probe's turns, both sides' observations

Nothing here depends on timing (elapsed times are left out), so two runs of the same corpus keep the same bytes
but for paths to the cache inside request.json and the records.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

from harness.core.model import CaseResult, Outcome, Scenario
from harness.repo.build import materialize_repo

LAYOUT = "letta-conformance/keep/1"
BYTE_FIELDS = ("content", "systemPromptWithSkills")


def keep_run(directory: Path, scenarios: list[Scenario], results: list[CaseResult], cache: Path) -> int:
    """Write every scenario that has results into `directory` (which must be new or empty); the number of cases."""
    directory.mkdir(parents=True, exist_ok=True)
    by_case: dict[str, list[CaseResult]] = {}
    for result in results:
        by_case.setdefault(result.case_id, []).append(result)
    index: list[dict[str, Any]] = []
    for scenario in scenarios:
        found = by_case.get(scenario.id)
        if found:
            index.append(_keep_case(directory / _safe(scenario.id), scenario, found, cache))
    document = {"layout": LAYOUT, "cases": index}
    (directory / "index.json").write_text(json.dumps(document, indent=1, ensure_ascii=True) + "\n", encoding="ascii")
    return len(index)


def _keep_case(where: Path, scenario: Scenario, results: list[CaseResult], cache: Path) -> dict[str, Any]:
    where.mkdir(parents=True)
    entry: dict[str, Any] = {"case": scenario.id, "kind": scenario.kind, "directory": where.name}
    if scenario.path and Path(scenario.path).is_file():
        shutil.copyfile(scenario.path, where / "case.yaml")
    try:
        built = materialize_repo(scenario, cache)  # built by the run already: read back from the cache
    except Exception as error:  # a case whose repository cannot be built is an error of the run: say why here too
        entry["repository_error"] = f"{type(error).__name__}: {error}"
    else:
        shutil.copytree(built.root, where / "repository", symlinks=True, ignore=shutil.ignore_patterns(".complete"))
        entry["repository"] = "repository"
        entry["memory"] = str(built.memory_dir.relative_to(built.root))
    request = next((r.request for r in results if r.request), None)
    if request:
        _write_json(where / "request.json", request)
    entry["results"] = []
    for number, result in enumerate(results, 1):
        name = f"{number:02d}-{_safe(result.reference)}--{_safe(result.implementation)}"[:120]
        _keep_result(where / name, result)
        entry["results"].append(
            {
                "reference": result.reference,
                "implementation": result.implementation,
                "profile": result.profile,
                "status": result.status.value,
                "directory": name,
            }
        )
    return entry


def _keep_result(where: Path, result: CaseResult) -> None:
    where.mkdir()
    verdict = {
        "case": result.case_id,
        "reference": result.reference,
        "profile": result.profile,
        "implementation": result.implementation,
        "status": result.status.value,
        "reasons": result.reasons,
        "differing_fields": [diff.field for diff in result.diffs],
    }
    _write_json(where / "verdict.json", verdict)
    for side, outcome in (("reference", result.reference_outcome), ("implementation", result.impl_outcome)):
        if outcome is not None:
            _keep_outcome(where, side, outcome)
    if result.turns:
        _write_json(where / "turns.json", result.turns)


def _keep_outcome(where: Path, side: str, outcome: Outcome) -> None:
    data = {k: v for k, v in outcome.to_json().items() if k != "elapsed_ms"}  # no timing: the same bytes each run
    _write_json(where / f"{side}.json", data)
    for name in BYTE_FIELDS:
        value = (outcome.record or {}).get(name)
        if isinstance(value, str):
            (where / f"{side}.{name}").write_bytes(value.encode("utf-8", "surrogatepass"))


def _write_json(path: Path, data: Any) -> None:
    """ASCII JSON (a lone surrogate as its escape), keys in the record's own order."""
    path.write_text(json.dumps(data, indent=1, ensure_ascii=True) + "\n", encoding="ascii")


def _safe(label: str) -> str:
    """A label as a directory name: anything but letters, digits and `._@+-` becomes `_`."""
    return re.sub(r"[^A-Za-z0-9._@+-]+", "_", label).strip("._") or "_"
