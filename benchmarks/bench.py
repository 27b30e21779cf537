"""`python -m benchmarks` (`nox -s bench`): the port against the reference, measured in one run.

Prints a table and writes reports/bench.json. Targets (issue 9), checked and reported, never
asserted: on the 1,000-file repo the port's in-process compile is at least 20x faster than the
reference's warm compile and within 2x of the floor (one `git ls-tree -r` plus one
`git cat-file --batch` over the same blobs); the whole `python -m memfs_prompt compile`
process is at least 5x faster than the reference's warm compile.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from harness.acquire.releases import cache_root
from harness.core.reference import ReferenceSpec, default_reference
from harness.repo.gitenv import isolated_env
from harness.runners.bun_reference import BunReferenceRunner
from harness.runners.references import profile_for_reference
from memfs_prompt.compiler import listed_memory_paths
from memfs_prompt.git_head import open_committed_head
from memfs_prompt.profiles import PROFILES, Profile
from memfs_prompt.render_v2 import is_v2_repository, v2_reads_body

from . import corpus, fuzz_throughput, gate_workflows, porter_loop, probes, startup, workloads

ROOT = Path(__file__).resolve().parent.parent


def read_paths(memory_dir: Path, profile: Profile, git_env: dict[str, str]) -> list[str]:
    """The paths whose blobs the port reads (every listed `.md`; for memfs-v2 only root files and indexes)."""
    head = open_committed_head(memory_dir, git_env)
    try:
        paths = listed_memory_paths(head)
    finally:
        head.close()
    if profile.memfs_v2 and is_v2_repository(paths):
        return [p for p in paths if v2_reads_body(p, set(paths))]
    return paths


def port_side(memory_dir: Path, profile: Profile, git_env: dict[str, str]) -> tuple[Any, list[str], Any, Any]:
    """The port's in-process compile, the blobs it reads, the git floor over them, and the whole process."""
    port = probes.timed(probes.port_compile(memory_dir, profile, git_env))
    paths = read_paths(memory_dir, profile, git_env)
    floor = probes.timed(probes.floor(memory_dir, paths, git_env))
    process = probes.timed(probes.port_process(memory_dir, profile, git_env), least=3, most=10)
    return port, paths, floor, process


def growth(rows: list[dict[str, Any]], key: str) -> None:
    """Add `<key>_growth`: the exponent k in time ~ files^k between each row and the one before."""
    for before, after in itertools.pairwise(rows):
        if before.get(key) and after.get(key):
            k = math.log(after[key] / before[key]) / math.log(after["files"] / before["files"])
            after[f"{key}_growth"] = round(k, 2)


def port_profile(spec: ReferenceSpec) -> Profile:
    """The port's profile for the reference it is measured against (the one a run would judge it under)."""
    return PROFILES[profile_for_reference(spec, None)]


def measure_compiles(args: argparse.Namespace, spec: ReferenceSpec, cache: Path) -> dict[str, Any]:
    git_env = isolated_env(cache / "home", cache / "repos")
    profile = port_profile(spec)
    v1 = [workloads.v1_workload(n) for n in args.sizes]
    v2 = [workloads.v2_workload(n) for n in args.v2_sizes]
    built: dict[str, float] = {}
    repos = {}
    for workload in v1 + v2:
        started = time.perf_counter()
        repos[workload.name] = workloads.materialize(workload, cache)
        built[workload.name] = round(time.perf_counter() - started, 3)
        log(f"repository {workload.name}: {repos[workload.name].memory_dir} ({built[workload.name]} s)")

    runner = BunReferenceRunner(spec, cache / "home", cache / "repos", timeout=1800)
    v1_rows = []
    try:
        runner.start()
        if runner.start_error:
            raise RuntimeError(f"the reference did not start: {runner.start_error}")
        probes.reference_compile(runner, repos[v1[0].name].memory_dir)()  # the first compile initialises
        for workload in v1:
            memory_dir = repos[workload.name].memory_dir
            log(f"v1 {workload.files} files")
            port, paths, floor, process = port_side(memory_dir, profile, git_env)
            big = workload.files >= 5000
            compile_reference, answers = probes.recorded(probes.reference_compile(runner, memory_dir))
            reference = probes.timed(compile_reference, budget=3.0, least=1 if big else 3, most=10, warmup=not big)
            ours = probes.port_compile(memory_dir, profile, git_env)().to_json()
            theirs = answers[-1].record
            v1_rows.append(
                {
                    "files": workload.files,
                    "blobs_read": len(paths),
                    "repository": workload.name,
                    "port_ms": round(port.median_ms, 2),
                    "floor_ms": round(floor.median_ms, 2),
                    "process_ms": round(process.median_ms, 2),
                    "reference_ms": round(reference.median_ms, 2),
                    "reference_ms_per_file": round(reference.median_ms / workload.files, 3),
                    "port_vs_floor": round(port.median_ms / floor.median_ms, 2),
                    "reference_vs_port": round(reference.median_ms / port.median_ms, 1),
                    "reference_vs_process": round(reference.median_ms / process.median_ms, 1),
                    "fastest": {
                        "port_ms": round(port.min_ms, 2),
                        "floor_ms": round(floor.min_ms, 2),
                        "process_ms": round(process.min_ms, 2),
                        "reference_ms": round(reference.min_ms, 2),
                    },
                    "identical_output": theirs == ours,
                    "runs": {
                        "port": port.runs,
                        "floor": floor.runs,
                        "process": process.runs,
                        "reference": reference.runs,
                    },
                }
            )
        v2_rows = [v2_row(workload, repos[workload.name].memory_dir, profile, runner, git_env) for workload in v2]
    finally:
        runner.close()
    for key in ("port_ms", "floor_ms", "reference_ms"):
        growth(v1_rows, key)

    for key in ("port_ms", "reference_ms"):
        growth(v2_rows, key)

    rss: dict[str, Any] = {}
    biggest = v1[-1]
    memory_dir = repos[biggest.name].memory_dir
    log(f"peak RSS on {biggest.files} files")
    rss["files"] = biggest.files
    rss["port"] = probes.port_peak_rss(memory_dir, profile, git_env)
    fresh = BunReferenceRunner(spec, cache / "home", cache / "repos", timeout=1800)
    try:
        rss["reference"] = probes.reference_peak_rss(fresh, memory_dir)
    finally:
        fresh.close()
    return {"profile": profile.name, "v1": v1_rows, "v2": v2_rows, "peak_rss": rss, "build_seconds": built}


def v2_row(
    workload: workloads.Workload,
    memory_dir: Path,
    profile: Profile,
    runner: BunReferenceRunner,
    git_env: dict[str, str],
) -> dict[str, Any]:
    """A memfs-v2 repository: the port under the reference's profile (releases render memfs-v2 from 0.33.3 on)
    against the reference's warm compile, and the floor."""
    log(f"v2 {workload.files} files")
    port, paths, floor, process = port_side(memory_dir, profile, git_env)
    compile_reference, answers = probes.recorded(probes.reference_compile(runner, memory_dir))
    reference = probes.timed(compile_reference, budget=3.0, least=1 if workload.files >= 5000 else 3, most=10)
    ours = probes.port_compile(memory_dir, profile, git_env)().to_json()
    return {
        "files": workload.files,
        "blobs_read": len(paths),
        "repository": workload.name,
        "port_ms": round(port.median_ms, 2),
        "floor_ms": round(floor.median_ms, 2),
        "process_ms": round(process.median_ms, 2),
        "reference_ms": round(reference.median_ms, 2),
        "port_vs_floor": round(port.median_ms / floor.median_ms, 2),
        "reference_vs_port": round(reference.median_ms / port.median_ms, 1),
        "identical_output": answers[-1].record == ours,
    }


def targets(v1_rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The issue's targets on the 1,000-file repository, from the medians (and, for a loaded machine, the minima)."""
    row = next((r for r in v1_rows if r["files"] == 1000), None)
    if row is None:
        return {}
    fast = row["fastest"]
    ratios = {
        "port_vs_reference_at_1000": (row["reference_vs_port"], fast["reference_ms"] / fast["port_ms"], ">=", 20.0),
        "port_vs_floor_at_1000": (row["port_vs_floor"], fast["port_ms"] / fast["floor_ms"], "<=", 2.0),
        "process_vs_reference_at_1000": (
            row["reference_vs_process"],
            fast["reference_ms"] / fast["process_ms"],
            ">=",
            5.0,
        ),
    }
    out = {}
    for name, (median, fastest, sense, bound) in ratios.items():
        met = median >= bound if sense == ">=" else median <= bound
        out[name] = {
            "value": median,
            "value_from_minima": round(fastest, 2),
            "target": f"{sense} {bound:g}x",
            "met": met,
        }
    return out


def machine() -> dict[str, Any]:
    git = subprocess.run(["git", "--version"], capture_output=True, text=True, check=False).stdout.strip()
    return {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "git": git,
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }


def log(message: str) -> None:
    print(f"[bench] {message}", file=sys.stderr, flush=True)


def grid(headers: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    line = "  ".join(h.rjust(w) for h, w in zip(headers, widths, strict=True))
    return [line, "-" * len(line)] + ["  ".join(c.rjust(w) for c, w in zip(r, widths, strict=True)) for r in rows]


def v1_table(rows: list[dict[str, Any]]) -> list[str]:
    same = {True: "yes", False: "NO", None: "-"}
    headers = [
        "files",
        "port ms",
        "floor ms",
        "port/floor",
        "process ms",
        "ref ms",
        "ref ms/file",
        "ref/port",
        "ref/process",
        "growth port",
        "growth ref",
        "same output",
    ]
    body = [
        [
            str(r["files"]),
            f"{r['port_ms']:.2f}",
            f"{r['floor_ms']:.2f}",
            f"{r['port_vs_floor']:.2f}x",
            f"{r['process_ms']:.1f}",
            f"{r['reference_ms']:.1f}",
            f"{r['reference_ms_per_file']:.3f}",
            f"{r['reference_vs_port']:.1f}x",
            f"{r['reference_vs_process']:.1f}x",
            str(r.get("port_ms_growth", "-")),
            str(r.get("reference_ms_growth", "-")),
            same[r["identical_output"]],
        ]
        for r in rows
    ]
    return grid(headers, body)


def v2_table(rows: list[dict[str, Any]]) -> list[str]:
    headers = [
        "files",
        "blobs read",
        "port ms",
        "floor ms",
        "port/floor",
        "process ms",
        "ref ms",
        "ref/port",
        "growth port",
        "growth ref",
        "same output",
    ]
    same = {True: "yes", False: "NO"}
    body = [
        [
            str(r["files"]),
            str(r["blobs_read"]),
            f"{r['port_ms']:.2f}",
            f"{r['floor_ms']:.2f}",
            f"{r['port_vs_floor']:.2f}x",
            f"{r['process_ms']:.1f}",
            f"{r['reference_ms']:.1f}",
            f"{r['reference_vs_port']:.1f}x",
            str(r.get("port_ms_growth", "-")),
            str(r.get("reference_ms_growth", "-")),
            same[r["identical_output"]],
        ]
        for r in rows
    ]
    return grid(headers, body)


def mib(kib: int) -> str:
    return f"{kib / 1024:.0f} MiB"


def table(result: dict[str, Any]) -> str:
    compiles = result["compiles"]
    lines = [f"compile, memfs-v1: port (profile {compiles['profile']}) vs letta-code {result['reference']} (warm)"]
    lines += v1_table(compiles["v1"])
    lines += ["", f"compile, memfs-v2 (deferred files): port (profile {compiles['profile']}) vs the same reference"]
    lines += v2_table(compiles["v2"])
    lines.append("")
    for name, check in result["targets"].items():
        verdict = "met" if check["met"] else "MISSED"
        lines.append(
            f"target {name}: {check['value']}x from medians, {check['value_from_minima']}x from minima "
            f"(want {check['target']}): {verdict}"
        )
    s = result.get("startup")
    if s:
        lines.append(
            f"reference start-up: cold {s['cold_ms']:.0f} ms (bundle import {s['cold_import_ms']:.0f} ms), "
            f"warm {s['warm_ms']:.0f} ms (bundle import {s['warm_import_ms']:.0f} ms)"
        )
    rss = compiles["peak_rss"]
    port, ref = rss["port"], rss["reference"]
    lines.append(
        f"peak RSS on {rss['files']} files: port {mib(port['peak_kib'])} (after imports {mib(port['baseline_kib'])}; "
        f"git child {mib(port['git_peak_kib'])}), reference {mib(ref['peak_kib'])} "
        f"(after start-up {mib(ref['baseline_kib'])})"
    )
    c = result.get("corpus")
    if c:
        py, ref, m = c["python_only"], c["with_reference"], c["materialization"]
        lines.append(
            f"corpus, {c['cases']} cases, in process: with the reference {ref['seconds']:.1f} s, Python only "
            f"{py['seconds']:.1f} s ({py['compiles']} compiles)"
        )
        lines.append(
            f"  reference share {c['reference_share_s']:.1f} s vs its start-up + its {ref['reference_compiles']} "
            f"compiles {c['startup_plus_compiles_s']:.1f} s; processes started: {ref['reference_starts']} "
            f"(1 + {ref['restarts_after_pollution']} restarts after cases that polluted a prototype)"
        )
        base = c["cli"][0]["seconds"]
        for run in c["cli"]:
            lines.append(
                f"  conformance run -j {run['jobs']}: {run['seconds']:.1f} s ({base / run['seconds']:.2f}x -j 1), "
                f"report.json starts {run['reference_starts']}, ok {run['ok']}"
            )
        lines.append(
            f"  materialization per case: cold {m['cold_ms_per_case']:.1f} ms, cached {m['cached_ms_per_case']:.2f} ms"
        )
    if result.get("fuzz"):
        lines.append(fuzz_throughput.summary(result["fuzz"]))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.split("\n\n")[0])
    parser.add_argument("--reference", default=default_reference())
    parser.add_argument("--sizes", type=int, nargs="+", default=list(workloads.V1_SIZES))
    parser.add_argument("--v2-sizes", type=int, nargs="+", default=list(workloads.V2_DEFERRED_SIZES))
    parser.add_argument(
        "--cases",
        type=Path,
        default=ROOT / "cases" / "compile",
        help="compile cases (lifecycle probes have no Python-only run)",
    )
    parser.add_argument("--jobs", type=int, nargs="*", default=[2], help="-j values for parallel corpus runs")
    parser.add_argument("--skip-corpus", action="store_true")
    parser.add_argument("--skip-startup", action="store_true")
    parser.add_argument("--fuzz-seconds", type=float, default=30.0, help="length of the fuzz-throughput run")
    parser.add_argument("--skip-fuzz", action="store_true")
    parser.add_argument("--fuzz-only", action="store_true", help="only the fuzz-throughput run")
    parser.add_argument("--skip-gate", action="store_true", help="skip the gate workflows (four matrix runs)")
    parser.add_argument("--gate-k", help="the gate workflows on the cases -k selects (default: the whole corpus)")
    parser.add_argument("--gate-jobs", type=int, default=2)
    parser.add_argument("--gate-only", action="store_true", help="only the gate workflows")
    parser.add_argument("--skip-porter", action="store_true", help="skip the porter's loop (cold and warm corpus runs)")
    parser.add_argument("--porter-only", action="store_true", help="only the porter's loop")
    parser.add_argument("--out", type=Path, default=ROOT / "reports" / "bench.json")
    args = parser.parse_args(argv)
    spec = ReferenceSpec.parse(args.reference)
    cache = cache_root()
    result: dict[str, Any] = {
        "schema": "letta-conformance/bench/1",
        "command": ["python", "-m", "benchmarks", *(argv if argv is not None else sys.argv[1:])],
        "reference": spec.label,
        "machine": machine(),
    }
    if args.gate_only:
        result["gate"] = gate_workflows.measure_gate([ROOT / "cases"], args.gate_jobs, args.gate_k)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
        print(gate_workflows.summary(result["gate"]))
        return 0
    if args.porter_only:
        result["porter_loop"] = porter_loop.measure_porter_loop(args.cases)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
        print(porter_loop.summary(result["porter_loop"]))
        return 0
    if args.fuzz_only:
        result["fuzz"] = fuzz_throughput.measure_fuzz(spec, args.fuzz_seconds)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
        print(fuzz_throughput.summary(result["fuzz"]))
        return 0
    result["compiles"] = measure_compiles(args, spec, cache)
    result["targets"] = targets(result["compiles"]["v1"])
    if not args.skip_startup:
        log("reference start-up, cold and warm")
        with tempfile.TemporaryDirectory(prefix="bench-startup-") as tmp:
            result["startup"] = startup.measure_startup(spec, Path(tmp))
    if not args.skip_corpus:
        scenarios = corpus.compile_scenarios(args.cases)
        log(f"corpus: {len(scenarios)} cases, materialization")
        materialized = corpus.materialization(scenarios)
        log("corpus: Python only")
        python_only = corpus.python_only(scenarios, spec)
        log("corpus: the same cases with the reference, in process")
        in_process = corpus.full_in_process(scenarios, spec)
        runs = []
        for jobs in [1, *args.jobs]:
            log(f"corpus: conformance run -j {jobs}")
            runs.append(corpus.full_run(args.cases, spec, jobs))
        result["corpus"] = {
            "cases": len(scenarios),
            "materialization": materialized,
            "python_only": python_only,
            "with_reference": in_process,
            "cli": runs,
            "reference_share_s": round(in_process["seconds"] - python_only["seconds"], 3),
            "startup_plus_compiles_s": round(in_process["startup_s"] + in_process["reference_compile_s_total"], 3),
        }
    if not args.skip_porter:
        log("porter's loop: the corpus cold, then warm for the in-process port and a v2-only port")
        result["porter_loop"] = porter_loop.measure_porter_loop(args.cases)
        print(porter_loop.summary(result["porter_loop"]))
    if not args.skip_fuzz:
        log(f"fuzz loop: {args.fuzz_seconds:g} s, seed 1")
        result["fuzz"] = fuzz_throughput.measure_fuzz(spec, args.fuzz_seconds)
    if not args.skip_gate:
        log("gate workflows: cold matrix, warm, one new case, one new release")
        result["gate"] = gate_workflows.measure_gate([ROOT / "cases"], args.gate_jobs, args.gate_k)
        print(gate_workflows.summary(result["gate"]))
    result["machine"]["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(table(result))
    print(f"written: {args.out}")
    return 0
