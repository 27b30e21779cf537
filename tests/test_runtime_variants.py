"""Absent fields are compared, never skipped; a runtime/locale variant is judged against its bun baseline."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.cases.load import load_scenario
from harness.core.model import CompileRequest, Outcome, Status
from harness.core.reference import ReferenceSpec
from harness.run.session import Session
from harness.runners.base import Runner
from harness.runners.references import with_baselines
from harness.verdict.diff import ABSENT_BOTH, BOTH, IMPL_ONLY, REFERENCE_ONLY, outcome_diff, presence

BASE = {"content": "c", "compiledAt": "t", "rawSystemHash": "h"}


def test_a_field_neither_side_returns_is_compared_as_absent() -> None:
    states = presence(Outcome("ok", record=BASE), Outcome("ok", record=BASE))
    assert states["coreMemory"] == ABSENT_BOTH and states["memfsRevision"] == ABSENT_BOTH
    assert states["content"] == BOTH
    assert outcome_diff(Outcome("ok", record=BASE), Outcome("ok", record=BASE)) == []


def test_a_field_only_one_side_returns_is_a_difference_even_when_null() -> None:
    with_null = {**BASE, "coreMemory": None}
    assert [d.field for d in outcome_diff(Outcome("ok", record=BASE), Outcome("ok", record=with_null))] == [
        "coreMemory"
    ]
    assert presence(Outcome("ok", record=with_null), Outcome("ok", record=BASE))["coreMemory"] == REFERENCE_ONLY
    assert presence(Outcome("ok", record=BASE), Outcome("ok", record=with_null))["coreMemory"] == IMPL_ONLY


def test_baselines_are_added_before_their_variants_once() -> None:
    specs = [ReferenceSpec.parse(t) for t in ("npm:0.30.28@node", "npm:0.30.28@node/da_DK.UTF-8", "npm:0.32.18")]
    assert [s.label for s in with_baselines(specs)] == [
        "0.30.28",
        "0.30.28@node",
        "0.30.28@node/da_DK.UTF-8",
        "0.32.18",
    ]
    later = [ReferenceSpec.parse(t) for t in ("npm:0.32.18@node", "npm:0.25.3", "npm:0.32.18")]
    assert [s.label for s in with_baselines(later)] == ["0.32.18", "0.32.18@node", "0.25.3"]


class PortEcho(Runner):
    """A fabricated reference: the port's record for the profile, with some fields replaced (or an error)."""

    def __init__(self, name: str, alter: dict[str, str] | None = None, error: bool = False) -> None:
        self.name, self.alter, self.error = name, alter or {}, error

    def compile(self, request: CompileRequest) -> Outcome:
        from harness.runners.python_port import PythonPortRunner
        from memfs_prompt import profile_for_release

        if self.error:
            return Outcome("error", error="could not start")
        outcome = PythonPortRunner(profile_for_release("0.32.18")).compile(request)
        outcome.record = {**(outcome.record or {}), **self.alter}
        return outcome


@pytest.fixture
def scenario(tmp_path: Path):
    path = tmp_path / "compile" / "s.yaml"
    path.parent.mkdir()
    path.write_text('id: s\ndescription: d\nrepo:\n  commits:\n    - files:\n        system/a.md: "a\\n"\n')
    return load_scenario(path)


def run(tmp_path: Path, scenario, runners: dict[str, Runner], references: list[str]):
    specs = [ReferenceSpec.parse(r) for r in references]
    with Session(specs, cache=tmp_path / "cache", runner_factory=lambda spec, cache: runners[spec.label]) as session:
        return {r.reference: r for r in session.run([scenario])}


def test_a_variant_that_agrees_with_bun_is_judged_as_usual(tmp_path, scenario) -> None:
    results = run(
        tmp_path,
        scenario,
        {"0.32.18": PortEcho("letta-code@0.32.18"), "0.32.18@node": PortEcho("letta-code@0.32.18@node")},
        ["npm:0.32.18@node"],
    )
    assert [results[k].status for k in ("0.32.18", "0.32.18@node")] == [Status.PASS, Status.PASS]
    assert results["0.32.18@node"].baseline == "0.32.18" and results["0.32.18@node"].runtime_diffs == []
    assert results["0.32.18@node"].compared["coreMemory"] == BOTH


def test_a_variant_whose_upstream_output_differs_from_bun_is_runtime_divergence_not_failure(tmp_path, scenario) -> None:
    runners = {
        "0.32.18": PortEcho("letta-code@0.32.18"),
        "0.32.18@node/da_DK.UTF-8": PortEcho("letta-code@0.32.18@node/da_DK.UTF-8", {"content": "sorted otherwise"}),
    }
    results = run(tmp_path, scenario, runners, ["npm:0.32.18", "npm:0.32.18@node/da_DK.UTF-8"])
    variant = results["0.32.18@node/da_DK.UTF-8"]
    assert results["0.32.18"].status == Status.PASS
    assert variant.status == Status.RUNTIME
    assert [d.field for d in variant.runtime_diffs] == ["content"]
    assert [d.field for d in variant.diffs] == ["content"]  # the port still follows bun
    assert "runtime drift, not python's failure" in variant.reasons[0] and "da_DK.UTF-8" in variant.reasons[0]


def test_a_port_failure_shows_in_the_bun_column_and_a_broken_baseline_makes_the_variant_an_error(
    tmp_path, scenario
) -> None:
    runners = {
        "0.32.18": PortEcho("letta-code@0.32.18", {"content": "x"}),
        "0.32.18@node": PortEcho("letta-code@0.32.18@node", {"content": "x"}),
    }
    results = run(tmp_path, scenario, runners, ["npm:0.32.18@node"])
    assert results["0.32.18"].status == Status.FAIL and results["0.32.18@node"].status == Status.FAIL
    runners = {
        "0.32.18": PortEcho("letta-code@0.32.18", error=True),
        "0.32.18@node": PortEcho("letta-code@0.32.18@node"),
    }
    results = run(tmp_path, scenario, runners, ["npm:0.32.18@node"])
    assert results["0.32.18"].status == Status.ERROR and results["0.32.18@node"].status == Status.ERROR
    assert "runtime drift is unknown" in results["0.32.18@node"].reasons[0]
