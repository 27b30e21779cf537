"""The release matrix on real references, kept cheap: two cases, 0.25.9 and 0.30.28 under bun,
0.25.9 under node, 0.30.28 under node with LANG=da_DK.UTF-8. Skipped only when LETTA_CONFORMANCE_OFFLINE=1."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness.cases.load import load_scenario
from harness.core.model import Status
from harness.core.reference import ReferenceSpec
from harness.run.session import Session
from harness.tools.releases.drift import drift_report
from harness.tools.releases.matrix import field_comparison_summary, matrix_json, reference_outcomes, release_order

pytestmark = pytest.mark.integration

CASES = Path(__file__).resolve().parent.parent / "cases" / "compile"
PICKED = ("collation-locale-danish", "inputs-include-memfs-false")


@pytest.fixture(scope="module")
def matrix_run(reference_bun, release_bundle, tmp_path_factory):
    if shutil.which("node") is None:
        pytest.fail("node is not on PATH: the node runtime needs it")
    for version in ("0.25.9", "0.30.28"):
        release_bundle(version)
    scenarios = [load_scenario(CASES / f"{case}.yaml") for case in PICKED]
    specs = [
        ReferenceSpec.parse(t) for t in ("npm:0.25.9", "npm:0.30.28", "npm:0.25.9@node", "npm:0.30.28@node/da_DK.UTF-8")
    ]
    with Session(specs, timeout=120) as session:
        results = session.run(scenarios)
    return scenarios, specs, results


def test_each_release_passes_against_its_profile_and_node_shows_as_runtime_drift(matrix_run) -> None:
    _, _, results = matrix_run
    statuses = {(r.case_id, r.reference): (r.status, r.profile) for r in results}
    assert statuses[("collation-locale-danish", "0.25.9")] == (Status.PASS, "letta-code@0.25.9")
    assert statuses[("collation-locale-danish", "0.30.28")] == (Status.PASS, "letta-code@0.30.28")
    # under node the `// @bun` pragma means nothing: upstream's own connectors differ from bun's
    assert statuses[("collation-locale-danish", "0.25.9@node")][0] == Status.RUNTIME
    node = next(r for r in results if r.reference == "0.25.9@node" and r.case_id == "collation-locale-danish")
    assert node.baseline == "0.25.9" and [d.field for d in node.runtime_diffs] == ["content"]
    assert "└── " in node.reference_outcome.record["content"]
    # no box drawing to decode: node and bun agree, and the port is judged as usual
    assert statuses[("inputs-include-memfs-false", "0.25.9@node")][0] == Status.PASS
    # node follows LANG: Danish order (uppercase first, "aa" last); bun's en-US order is what the port reproduces
    danish = next(
        r for r in results if r.reference == "0.30.28@node/da_DK.UTF-8" and r.case_id == "collation-locale-danish"
    )
    assert danish.status == Status.RUNTIME and [d.field for d in danish.runtime_diffs] == ["content", "coreMemory"]
    lines = danish.reference_outcome.record["coreMemory"].splitlines()
    labels = [line for line in lines if line.startswith("<") and not line.startswith("</")]
    assert labels[:6] == ["<memory>", "<ab>", "<B>", "<b>", "<z>", "<aa>"]


def test_a_release_without_core_memory_is_compared_as_absent(matrix_run) -> None:
    _, _, results = matrix_run
    fields = field_comparison_summary(results)
    assert fields["0.25.9"]["coreMemory"] == {"summary": "compared-as-absent", "cases": {"compared-as-absent": 2}}
    assert fields["0.30.28"]["coreMemory"]["summary"] == "compared"


def test_drift_between_the_two_releases_and_the_runtimes_is_explained_by_the_cases(matrix_run) -> None:
    scenarios, specs, results = matrix_run
    report = drift_report(reference_outcomes(results), scenarios, specs, release_order())
    changes = {(g.pair.name, g.change): g for g in report.groups}
    assert ("0.25.9 -> 0.30.28", "coreMemory (added)") in changes
    assert changes[("0.25.9 -> 0.30.28", "content/external_projection")].cases == ["collation-locale-danish"]
    assert changes[("0.25.9 -> 0.25.9@node", "content/external_projection")].explained
    assert changes[("0.30.28 -> 0.30.28@node/da_DK.UTF-8", "coreMemory/system-tree")].explained
    assert [g.change for g in report.unexplained] == ["coreMemory (added)"]  # pinned by smoke-basic, not run here
    assert report.stale == []
    data = matrix_json(results, specs, None)
    assert [r["label"] for r in data["references"]] == ["0.25.9", "0.30.28", "0.25.9@node", "0.30.28@node/da_DK.UTF-8"]
    assert [(e["case"], e["reference"], e["fields"]) for e in data["runtime_effects"]] == [
        ("collation-locale-danish", "0.25.9@node", ["content"]),
        ("collation-locale-danish", "0.30.28@node/da_DK.UTF-8", ["content", "coreMemory"]),
    ]


def test_conformance_bisect_names_the_first_release_that_changed(matrix_run) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "harness.cli",
            "bisect",
            "collation-locale-danish",
            "--from",
            "0.25.9",
            "--to",
            "0.30.28",
            "--field",
            "content",
            "--cases",
            str(CASES / "collation-locale-danish.yaml"),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "first changed at 0.30.28 (after 0.25.9)" in done.stdout
    assert done.stdout.rstrip().endswith("content/external_projection")
