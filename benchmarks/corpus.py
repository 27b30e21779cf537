"""Corpus throughput: the whole corpus with the reference, the same cases Python-only, repo materialization.

The full run is `conformance run` itself (a subprocess writing report.json, whose `references`
record how many reference processes were started); the Python-only run does the same per-case
work in process (materialize, build the request, compile with the profile the run would use)
without any reference. Materialization is timed in a private repos directory: once empty
(cold), once again (cached).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from harness.cases.load import load_scenarios
from harness.core.model import Scenario
from harness.core.reference import ReferenceSpec
from harness.repo.build import materialize_repo
from harness.run.corpus import RunOptions, open_session
from harness.run.session import build_request
from memfs_prompt.profiles import DEFAULT, resolve_profile

ROOT = Path(__file__).resolve().parent.parent


def compile_scenarios(cases: Path) -> list[Scenario]:
    loaded = load_scenarios([cases])
    if loaded.errors:
        raise RuntimeError(f"{len(loaded.errors)} scenario files do not load: {loaded.errors[0]}")
    return [s for s in loaded.scenarios if s.kind == "compile"]


def python_only(scenarios: list[Scenario], spec: ReferenceSpec) -> dict[str, Any]:
    """Every case's port compile with no reference: what the run costs without one."""
    with open_session(RunOptions([spec], memoize=False)) as session:  # the reference's own work, not the result store's
        ref_profile = session.references[0].profile
        for scenario in scenarios:
            materialize_repo(scenario, session.cache)  # built before timing, as the full run finds them
        started = time.perf_counter()
        compiles = 0
        for scenario in scenarios:
            repo = materialize_repo(scenario, session.cache)
            if scenario.expect:
                profile = resolve_profile(scenario.expect.get("profile", DEFAULT.name)).name
            elif scenario.profiles and ref_profile not in scenario.profiles and spec.value not in scenario.profiles:
                continue
            else:
                profile = ref_profile
            session.port(profile).compile(build_request(scenario, repo))
            compiles += 1
        seconds = time.perf_counter() - started
    return {"seconds": round(seconds, 3), "compiles": compiles}


def full_in_process(scenarios: list[Scenario], spec: ReferenceSpec) -> dict[str, Any]:
    """The run `conformance run` does (Session.run, -j 1), in process, to set against the Python-only run.

    A compile that follows a polluting case includes that restart (the driver exits after
    upstream code changes a shared prototype), so the reference's share is its first start-up
    plus the sum of its compile times.
    """
    with open_session(RunOptions([spec], memoize=False)) as session:  # the reference's own work, not the result store's
        for scenario in scenarios:
            materialize_repo(scenario, session.cache)
        started = time.perf_counter()
        session.start()
        startup_s = time.perf_counter() - started
        results = session.run(scenarios)
        seconds = time.perf_counter() - started
        info = session.describe_references()[0]
    outcomes = [r.reference_outcome for r in results if r.reference_outcome is not None]
    return {
        "seconds": round(seconds, 3),
        "startup_s": round(startup_s, 3),
        "reference_compiles": len(outcomes),
        "reference_compile_s_total": round(sum(o.elapsed_ms for o in outcomes) / 1000, 3),
        "reference_starts": info.get("starts"),
        "restarts_after_pollution": sum(1 for o in outcomes if o.polluted),
        "statuses": sorted({r.status for r in results}),
    }


def full_run(cases: Path, spec: ReferenceSpec, jobs: int) -> dict[str, Any]:
    """`conformance run CASES --reference SPEC -j JOBS --report TMP`, timed start to exit."""
    with tempfile.TemporaryDirectory(prefix="bench-corpus-") as tmp:
        argv = [
            sys.executable,
            "-m",
            "harness.cli",
            "run",
            str(cases),
            "--reference",
            f"{spec.kind}:{spec.value}",
            "-j",
            str(jobs),
            "--report",
            tmp,
            "--no-cache",
        ]
        started = time.perf_counter()
        done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, check=False)
        seconds = time.perf_counter() - started
        report_path = Path(tmp) / "report.json"
        if not report_path.exists():
            raise RuntimeError(f"conformance run wrote no report (exit {done.returncode}): {done.stderr[-2000:]}")
        report = json.loads(report_path.read_text(encoding="utf-8"))
    results = report["results"]
    reference_ms = sum((r.get("timing") or {}).get("reference_ms") or 0 for r in results)
    port_ms = sum((r.get("timing") or {}).get("impl_ms") or 0 for r in results)
    info = report["references"][0]
    return {
        "jobs": jobs,
        "seconds": round(seconds, 3),
        "exit_code": done.returncode,
        "ok": report["ok"],
        "results": len(results),
        "reference_compiles": sum(1 for r in results if r.get("reference_outcome") is not None),
        "reference_starts": info.get("starts"),
        "reference_import_ms": (info.get("info") or {}).get("importMs"),
        "reference_compile_ms_total": round(reference_ms, 1),
        "port_compile_ms_total": round(port_ms, 1),
    }


def materialization(scenarios: list[Scenario]) -> dict[str, Any]:
    """Per case: building every scenario's repository into an empty cache, then asking again (cached)."""
    with tempfile.TemporaryDirectory(prefix="bench-repos-") as tmp:
        cache = Path(tmp)
        timings = {}
        for label in ("cold", "cached"):
            started = time.perf_counter()
            for scenario in scenarios:
                materialize_repo(scenario, cache)
            timings[label] = (time.perf_counter() - started) * 1000 / len(scenarios)
    return {
        "cases": len(scenarios),
        "cold_ms_per_case": round(timings["cold"], 3),
        "cached_ms_per_case": round(timings["cached"], 3),
    }
