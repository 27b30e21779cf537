"""The benchmark's port-side probes run (nox -s bench is not in the default test run, so this keeps it from rotting)."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# benchmarks/ is not an installed package, and the project root must not go on every test's path (pytest's
# `pythonpath`): the mutation tool runs a mutant's tests with the mutated copy of memfs_prompt/ first on the path.
sys.path.insert(1, str(ROOT))

from benchmarks import bench, corpus, gate_workflows, workloads  # noqa: E402
from harness.cases.load import load_scenarios  # noqa: E402
from harness.core.reference import ReferenceSpec, default_reference  # noqa: E402
from harness.repo.gitenv import isolated_env  # noqa: E402


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


def test_the_gate_benchmark_counts_a_warm_report_equal_to_the_cold_one_but_for_its_cached_marks(tmp_path: Path) -> None:
    import json

    result = {"case": "c", "reference": "0.34.12", "status": "pass"}
    cold = {"run": {"command": ["a", "cold"]}, "references": [{"starts": 3}], "results": [result]}
    warm = {
        "run": {"command": ["a", "warm"]},
        "references": [{"starts": 0}],
        "results": [{**result, "cached": True, "cache_key": "k"}],
    }
    other = {**warm, "results": [{**result, "status": "fail"}]}
    for name, report in (("cold", cold), ("warm", warm), ("other", other)):
        (tmp_path / name).mkdir()
        (tmp_path / name / "report.json").write_text(json.dumps(report))
        (tmp_path / name / "junit.xml").write_text("<x/>")
        (tmp_path / name / "drift.md").write_text("d")
    assert gate_workflows.same_report(tmp_path / "cold", tmp_path / "warm") == dict.fromkeys(
        ("report.json", "junit.xml", "drift.md"), True
    )
    assert gate_workflows.same_report(tmp_path / "cold", tmp_path / "other")["report.json"] is False


def test_the_porter_loop_times_a_run_and_keeps_what_a_porter_sees(release_bundle: object) -> None:
    from benchmarks import porter_loop

    measured = porter_loop.timed_run(ROOT / "cases", porter_loop.V2_ONLY, "-k", "bom-double")
    assert measured["counts"] == {"fail": 1} and measured["first_rule"].startswith("memfs-v1")
    assert measured["terminal_lines"] >= 5 and measured["bytes"]["index.html"] > 0
    fake = {
        "seconds": 1.0,
        "of_cold": 0.1,
        "terminal_lines": 11,
        "bytes": {"index.html": 1, "report.json": 2},
        "first_rule": "memfs-v1 + metadata-block",
    }
    text = porter_loop.summary(
        {"cold_python": {"seconds": 10.0}, "warm_python": fake, "warm_v2_only": fake, "warm_v2_only_j2": fake}
    )
    assert "warm --impl v2_only: 1.00 s (0.10 of cold), 11 terminal lines" in text
