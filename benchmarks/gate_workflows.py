"""The gate's workflows, timed one after the other in one run, on a private cache: the shared cache's
releases and bun (linked, read only) with an empty result store, repositories and reference home of its own.

- cold: `conformance matrix` with nothing stored;
- warm: the same command again, nothing changed;
- one new case: the corpus plus one case no run has seen;
- one new release: the newest pinned release's stored outcomes dropped, as if it had just been pinned.

Each as wall seconds and as its ratio to the cold run, and whether the warm report equals the cold one
(report.json with --no-timing, but for the `cached` marks; junit.xml and drift.md byte for byte).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from harness.acquire.releases import cache_root
from harness.core.reference import pinned_references
from harness.core.registries import REGISTRIES
from harness.runners.result_store.store import ResultStore, store_path

RUNS = ("cold", "warm", "new-case", "new-release")  # report directories, in the order they run
SHARED_PARTS = ("bun", "node", *(row.cache_part for row in REGISTRIES))  # what a matrix reads and never changes
NEW_CASE = """\
id: bench-gate-new-case
description: a case no earlier run has seen (benchmarks/gate_workflows.py writes it)
repo:
  commits:
    - files:
        system/persona.md: "I am the case the gate benchmark adds.\\n"
        reference/notes.md: "---\\ndescription: added last\\n---\\nnotes\\n"
"""


def cache_sharing_releases(dest: Path) -> Path:
    """A cache directory whose releases and bun are links into the shared cache; nothing else in it."""
    shared = cache_root()
    dest.mkdir(parents=True, exist_ok=True)
    for part in SHARED_PARTS:
        if (shared / part).exists():
            (dest / part).symlink_to(shared / part, target_is_directory=True)
    return dest


def run_matrix(cache: Path, cases: list[Path], out: Path, jobs: int, select: str | None) -> float:
    """One `conformance matrix --no-timing` with `cache` as the cache; its wall seconds."""
    argv = [
        sys.executable,
        "-m",
        "harness.cli.main",
        "matrix",
        *map(str, cases),
        "-j",
        str(jobs),
        "--no-timing",
        "--report",
        str(out),
    ]
    if select:
        argv += ["-k", select]
    env = {**os.environ, "LETTA_CONFORMANCE_CACHE": str(cache)}
    env.pop("LETTA_CONFORMANCE_NO_CACHE", None)
    started = time.perf_counter()
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - started
    if done.returncode not in (0, 1):  # 1: a failing case or drift, still a measured run
        raise RuntimeError(f"{' '.join(argv)} exited {done.returncode}:\n{done.stderr[-2000:]}")
    return seconds


def _without_cache_marks(report: dict[str, Any]) -> dict[str, Any]:
    report.get("run", {}).pop("command", None)  # names the report directory, which differs
    for result in report.get("results", []):
        result.pop("cached", None)
        result.pop("cache_key", None)
    for reference in report.get("references", []):
        reference.pop("starts", None)  # a run the store answers starts no process
    report.get("summary", {}).pop("cached", None)
    return report


def same_report(cold: Path, warm: Path) -> dict[str, bool]:
    """Whether the warm run's reports equal the cold run's, file by file, the cached marks aside."""
    cold_json = _without_cache_marks(json.loads((cold / "report.json").read_text(encoding="utf-8")))
    warm_json = _without_cache_marks(json.loads((warm / "report.json").read_text(encoding="utf-8")))
    return {
        "report.json": cold_json == warm_json,
        "junit.xml": (cold / "junit.xml").read_bytes() == (warm / "junit.xml").read_bytes(),
        "drift.md": (cold / "drift.md").read_bytes() == (warm / "drift.md").read_bytes(),
    }


def cached_count(report_dir: Path) -> int:
    report = json.loads((report_dir / "report.json").read_text(encoding="utf-8"))
    return sum(1 for result in report.get("results", []) if result.get("cached"))


def drop_release(cache: Path, name: str) -> int:
    """Forget every stored outcome of the reference runner named `name`; how many."""
    store = ResultStore(store_path(cache))
    try:
        return store.forget_reference(name)
    finally:
        store.close()


def newest_release() -> tuple[str, str]:
    """The newest pinned release: its spec label and the name its runner stores outcomes under."""
    spec = pinned_references()[-1]  # release order: by version, the table's last registry last
    return spec.label, spec.runner_name


def measure_gate(
    cases: list[Path], jobs: int = 2, select: str | None = None, keep: Path | None = None
) -> dict[str, Any]:
    """The four workflows in one run; `keep`: leave the private cache and reports there (else a temporary one)."""
    root = Path(tempfile.mkdtemp(prefix="bench-gate-")) if keep is None else keep
    try:
        cache = cache_sharing_releases(root / "cache")
        # the four runs must read the same corpus, whatever is edited meanwhile: a copy, taken once
        cases = [
            shutil.copytree(c, root / "corpus" / f"{i}-{c.name}") if c.is_dir() else c for i, c in enumerate(cases)
        ]
        reports = root / "reports"
        timings: dict[str, float] = {}
        timings["cold"] = run_matrix(cache, cases, reports / "cold", jobs, select)
        timings["warm"] = run_matrix(cache, cases, reports / "warm", jobs, select)
        with_new = root / "cases-plus-one"
        with_new.mkdir()
        (with_new / "bench-gate-new-case.yaml").write_text(NEW_CASE, encoding="utf-8")
        timings["one_new_case"] = run_matrix(cache, [*cases, with_new], reports / "new-case", jobs, select)
        label, stored_as = newest_release()
        dropped = drop_release(cache, stored_as)
        timings["one_new_release"] = run_matrix(cache, cases, reports / "new-release", jobs, select)
        store_bytes = store_path(cache).stat().st_size
        return {
            "cases": [str(c) for c in cases],
            "select": select,
            "jobs": jobs,
            "seconds": {k: round(v, 2) for k, v in timings.items()},
            "ratio_to_cold": {k: round(v / timings["cold"], 4) for k, v in timings.items()},
            "cached_results": {name: cached_count(reports / name) for name in RUNS},
            "warm_equals_cold": same_report(reports / "cold", reports / "warm"),
            "new_release": {"reference": label, "stored_outcomes_dropped": dropped},
            "store_bytes_on_disk": store_bytes,
        }
    finally:
        if keep is None:
            shutil.rmtree(root, ignore_errors=True)


def summary(gate: dict[str, Any]) -> str:
    seconds, ratio = gate["seconds"], gate["ratio_to_cold"]
    lines = ["gate workflows (conformance matrix, private store):"]
    for name in ("cold", "warm", "one_new_case", "one_new_release"):
        lines.append(f"  {name:16} {seconds[name]:8.1f} s  {ratio[name]:7.3f}x cold")
    same = all(gate["warm_equals_cold"].values())
    lines.append(f"  warm report equals cold (cached marks aside): {'yes' if same else gate['warm_equals_cold']}")
    lines.append(f"  store after the runs: {gate['store_bytes_on_disk'] / 2**20:.1f} MiB on disk")
    return "\n".join(lines)
