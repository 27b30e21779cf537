"""The benchmark's port-side probes run (nox -s bench is not in the default test run, so this keeps it from rotting)."""

from __future__ import annotations

from pathlib import Path

from benchmarks import bench, corpus, workloads
from harness.cases.load import load_scenarios
from harness.repo.gitenv import isolated_env
from harness.runners.manifest import ReferenceSpec, default_reference

ROOT = Path(__file__).resolve().parent.parent


def test_the_bench_port_side_compiles_under_the_default_references_profile(tmp_path: Path) -> None:
    spec = ReferenceSpec.parse(default_reference())
    profile = bench.port_profile(spec)
    repo = workloads.materialize(workloads.v1_workload(10), tmp_path)
    port, paths, floor, process = bench.port_side(repo.memory_dir, profile, isolated_env(tmp_path / "home", tmp_path))
    assert len(paths) == 10
    assert port.runs >= 1 and floor.runs >= 1 and process.runs >= 1


def test_the_bench_python_only_corpus_pass_compiles_cases() -> None:
    loaded = load_scenarios(sorted((ROOT / "cases" / "compile").glob("*.yaml"))[:5])
    scenarios = [s for s in loaded.scenarios if s.kind == "compile"]
    measured = corpus.python_only(scenarios, ReferenceSpec.parse(default_reference()))
    assert measured["compiles"] >= 1
