"""harness.gate (regressions and advice) and harness.bisect (the search) on fabricated results and outcomes."""

from __future__ import annotations

import argparse
import os
import subprocess
from pathlib import Path

import pytest

from harness.core.model import CaseResult, FieldDiff, Outcome, Status
from harness.core.reference import ReferenceSpec
from harness.tools.releases.bisect import first_change, release_range
from harness.tools.releases.gate import evaluate, render
from harness.tools.releases.matrix import matrix_specs


def result(case: str, reference: str, status: str, profile: str = "letta-code@0.32.17", *fields: str) -> CaseResult:
    return CaseResult(
        case,
        reference,
        profile,
        status,
        (),
        f"cases/compile/{case}.yaml",
        diffs=[FieldDiff(f, "a", "b", 0) for f in fields],
        reasons=[f"{status} because"],
    )


def test_gate_fails_only_on_cases_that_were_good_before_and_fail_now() -> None:
    results = [
        result("stays-good", "0.32.17", Status.PASS),
        result("stays-good", "0.32.18", Status.PASS),
        result("regresses", "0.32.17", Status.PASS),
        result("regresses", "0.32.18", Status.FAIL, "letta-code@0.32.17", "content"),
        result("was-known", "0.32.17", Status.KNOWN),
        result("was-known", "0.32.18", Status.STALE),
        result("was-bad", "0.32.17", Status.FAIL),
        result("was-bad", "0.32.18", Status.FAIL),
        result("now-errors", "0.32.17", Status.PASS),
        result("now-errors", "0.32.18", Status.ERROR),
        result("only-before", "0.32.17", Status.PASS),
    ]
    gate = evaluate(results, "0.32.17", "0.32.18")
    assert not gate.ok
    assert [(r.case, r.previous_status, r.new_status) for r in gate.regressions] == [
        ("now-errors", Status.PASS, Status.ERROR),
        ("regresses", Status.PASS, Status.FAIL),
        ("was-known", Status.KNOWN, Status.STALE),
    ]
    assert gate.regressions[1].fields == ["content"]
    assert gate.not_run == ["only-before"]
    assert gate.new_has_profile  # 0.32.18 maps to letta-code@0.32.17
    advice = "\n".join(gate.advice())
    assert "could not run against 0.32.18" in advice
    assert "narrow the divergence's `references`" in advice
    assert "add a divergence to the case with `references: ['0.32.18']`" in advice
    assert "has no Python profile" not in advice
    assert "FAILED: 3 case(s)" in render(gate)


def test_gate_tells_to_add_a_profile_for_a_release_without_one() -> None:
    results = [result("c", "0.32.18", Status.PASS), result("c", "9.9.9", Status.FAIL, "letta-code@0.32.17", "content")]
    gate = evaluate(results, "0.32.18", "9.9.9")
    assert not gate.new_has_profile
    assert "letta-code 9.9.9 has no Python profile (it was compared with letta-code@0.32.17)" in gate.advice()[0]


def test_gate_passes_when_nothing_regressed() -> None:
    gate = evaluate([result("c", "a", Status.PASS), result("c", "b", Status.PASS)], "a", "b")
    assert gate.ok and gate.advice() == [] and "ok" in render(gate)


def outcomes(table: dict[str, str]):
    calls: list[str] = []

    def outcome_of(name: str) -> Outcome:
        calls.append(name)
        value = table[name]
        if value == "ERROR":
            return Outcome("error", error="crash")
        if value == "THROWN":
            return Outcome("thrown", thrown="E")
        return Outcome("ok", record={"content": value})

    return outcome_of, calls


@pytest.mark.parametrize("change_at", range(1, 8))
def test_bisect_finds_the_first_candidate_whose_output_changed(change_at: int) -> None:
    names = [f"v{i}" for i in range(8)]
    outcome_of, calls = outcomes({n: ("old" if i < change_at else "new") for i, n in enumerate(names)})
    found = first_change(names, outcome_of)
    assert (found.last_same, found.first_changed) == (names[change_at - 1], names[change_at])
    assert found.what == ["content/prompt"]
    assert len(calls) == len(set(calls)) <= 2 + 3  # both ends, then log2(8) probes at most


def test_bisect_reports_no_change_when_the_ends_agree_and_treats_throwing_as_an_output() -> None:
    outcome_of, calls = outcomes({"a": "x", "b": "y", "c": "x"})
    assert first_change(["a", "b", "c"], outcome_of).first_changed is None
    assert calls == ["a", "c"]
    outcome_of, _ = outcomes({"a": "x", "b": "THROWN", "c": "THROWN"})
    found = first_change(["a", "b", "c"], outcome_of)
    assert found.first_changed == "b" and found.what == ["thrown (now throws)"]


def test_bisect_stops_on_a_candidate_that_could_not_run() -> None:
    from harness.tools.releases.bisect import BisectError

    outcome_of, _ = outcomes({"a": "x", "b": "ERROR", "c": "y"})
    with pytest.raises(BisectError, match="crash"):
        first_change(["a", "b", "c"], outcome_of)


def test_release_range_is_inclusive_and_ordered_and_rejects_bad_ranges() -> None:
    order = ["0.25.3", "0.25.9", "0.30.28", "0.31.12"]
    assert release_range("0.25.9", "0.31.12", order) == ["0.25.9", "0.30.28", "0.31.12"]
    with pytest.raises(ValueError, match="older"):
        release_range("0.31.12", "0.25.9", order)
    with pytest.raises(ValueError, match="not a pinned release"):
        release_range("0.1.0", "0.25.9", order)


def test_bisect_commit_range_lists_first_parent_commits_oldest_first(make_repo) -> None:
    from harness.tools.releases.bisect import commit_range

    repo = make_repo({"a": "1"})
    first = repo.head()
    second = repo.commit({"a": "2"})
    third = repo.commit({"a": "3"})
    assert commit_range(repo.path, first, third) == [first, second, third]


def test_matrix_specs_cover_every_pinned_release_and_each_runtime_variant_after_its_baseline() -> None:
    from harness.core.reference import pinned_references

    releases = [s.label for s in pinned_references()]
    specs = matrix_specs([], ["bun"], [])
    assert [s.label for s in specs] == releases and len(releases) == 35
    specs = matrix_specs(["bundle:/x/letta.js"], ["node"], ["da_DK.UTF-8"], latest=ReferenceSpec("npm", "9.9.9"))
    labels = [s.label for s in specs]
    assert labels[:3] == [releases[0], f"{releases[0]}@node", f"{releases[0]}@node/da_DK.UTF-8"]
    assert "9.9.9@node" in labels and "bundle:/x/letta.js@node" in labels
    assert labels.index("9.9.9") < labels.index("9.9.9@node")


@pytest.mark.parametrize(
    ("text", "label", "runtime", "locale"),
    [
        ("npm:0.32.18", "0.32.18", "bun", None),
        ("npm:0.32.18@node", "0.32.18@node", "node", None),
        ("0.25.3@node/da_DK.UTF-8", "0.25.3@node/da_DK.UTF-8", "node", "da_DK.UTF-8"),
        ("bundle:/a@b/letta.js@bun/C.UTF-8", "bundle:/a@b/letta.js@bun/C.UTF-8", "bun", "C.UTF-8"),
        ("bundle:/a@b/letta.js", "bundle:/a@b/letta.js", "bun", None),
    ],
)
def test_reference_runtime_and_locale_round_trip_through_their_label(text, label, runtime, locale) -> None:
    spec = ReferenceSpec.parse(text)
    assert (spec.label, spec.runtime, spec.locale) == (label, runtime, locale)
    assert ReferenceSpec.parse(spec.cli) == spec
    assert spec.baseline.label == label.split("@node")[0].split("@bun")[0]


def test_bisect_on_chosen_fields_looks_past_changes_of_other_fields() -> None:
    table = {"a": {"content": "x"}, "b": {"content": "x", "coreMemory": "m"}, "c": {"content": "y", "coreMemory": "m"}}
    outcome_of = lambda name: Outcome("ok", record=table[name])  # noqa: E731
    assert first_change(["a", "b", "c"], outcome_of).first_changed == "b"
    found = first_change(["a", "b", "c"], outcome_of, ("content",))
    assert (found.first_changed, found.what) == ("c", ["content/prompt"])


@pytest.mark.parametrize(
    ("pypi_version", "expected"),
    [("0.34.13", ("pypi", "0.34.13", "f" * 64)), ("0.32.99", ("npm", "0.33.1", "sha512-abc"))],
)
def test_latest_is_the_newer_of_npm_view_and_the_pypi_index(fp, monkeypatch, pypi_version, expected) -> None:
    from harness.acquire import pypi_release
    from harness.tools.releases.matrix import discover_latest

    fp.register(
        ["npm", "view", "@letta-ai/letta-code@latest", "version", "dist.integrity", "--json"],
        stdout='{"version": "0.33.1", "dist.integrity": "sha512-abc"}',
    )
    asked = []
    monkeypatch.setattr(
        pypi_release, "index_entry", lambda v: asked.append(v) or {"version": pypi_version, "sha256": "f" * 64}
    )
    latest = discover_latest()
    assert (latest.spec.kind, latest.spec.value, latest.digest) == expected and asked == [None]
    assert not latest.pinned


def test_the_gate_compares_the_pinned_default_with_a_newer_latest_else_the_two_newest_releases() -> None:
    from harness.core.registries import load_manifest
    from harness.tools.releases.matrix import gate_pair

    default = ReferenceSpec.parse(load_manifest()["default"])
    specs = matrix_specs([], ["bun"], [])
    assert gate_pair(specs, None) == ("pypi:0.34.11", "pypi:0.34.12")
    assert gate_pair(specs, default) == ("pypi:0.34.11", "pypi:0.34.12")
    newer = ReferenceSpec("pypi", "9.9.9")
    assert gate_pair(matrix_specs([], ["bun"], [], newer), newer) == ("pypi:0.34.12", "pypi:9.9.9")


def test_an_unpinned_latest_release_is_accepted_for_this_process_with_the_registry_integrity(
    tmp_path, monkeypatch
) -> None:
    from harness.acquire import npm_release, releases
    from harness.core import registries

    monkeypatch.setenv("LETTA_CONFORMANCE_CACHE", str(tmp_path))
    monkeypatch.setattr(registries, "_ON_DEMAND", {"npm": {}, "pypi": {}})
    with pytest.raises(releases.ReferenceUnavailable, match="not pinned"):
        npm_release.ensure("9.9.9")
    seen = {}

    def fake_fetch(spec: str, integrity: str, dest):
        seen.update(spec=spec, integrity=integrity)
        (dest / "package").mkdir(parents=True)
        (dest / "package" / "letta.js").write_text("//")
        return dest

    monkeypatch.setattr(releases, "fetch_verified", fake_fetch)
    registries.pin_on_demand("9.9.9", "sha512-registry")
    assert npm_release.ensure("9.9.9").name == "letta.js"
    assert seen == {"spec": "@letta-ai/letta-code@9.9.9", "integrity": "sha512-registry"}


def test_gate_advice_for_a_bundle_names_its_release_version_and_its_reference() -> None:
    results = [
        result("c", "0.32.18", Status.PASS),
        result("c", "bundle:/b/letta.js", Status.FAIL, "letta-code@0.32.17", "content"),
    ]
    gate = evaluate(results, "0.32.18", "bundle:/b/letta.js", new_version="9.9.9")
    advice = "\n".join(gate.advice())
    assert "letta-code 9.9.9 (bundle:/b/letta.js) has no Python profile" in advice
    assert "--reference bundle:/b/letta.js -k CASE_ID" in advice


def _git_repo(path: Path, commits: int) -> list[str]:
    """A repository of `commits` first-parent commits; their hashes, oldest first."""
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
    }
    subprocess.run(["git", "init", "-q", str(path)], check=True, env=env)
    hashes = []
    for number in range(commits):
        (path / "f").write_text(str(number))
        subprocess.run(["git", "-C", str(path), "add", "f"], check=True, env=env)
        subprocess.run(["git", "-C", str(path), "commit", "-qm", str(number)], check=True, env=env)
        done = subprocess.run(["git", "-C", str(path), "rev-parse", "HEAD"], capture_output=True, text=True, env=env)
        hashes.append(done.stdout.strip())
    return hashes


def test_bisect_checkout_runs_each_commit_as_a_git_revision_under_bun_only(tmp_path: Path) -> None:
    from harness.cli.bisect import _candidates
    from harness.tools.releases.bisect import BisectError

    hashes = _git_repo(tmp_path / "up", 3)
    args = argparse.Namespace(checkout=str(tmp_path / "up"), start=hashes[0], end=hashes[2], runtime="bun")
    judged: list[ReferenceSpec] = []
    candidates, outcome_of = _candidates(args, lambda spec: judged.append(spec) or Outcome("ok", record={}))
    assert candidates == hashes
    outcome_of(hashes[1])
    assert judged == [ReferenceSpec("git", f"{(tmp_path / 'up').resolve()}@{hashes[1]}")]
    with pytest.raises(BisectError, match="bun only"):
        _candidates(argparse.Namespace(**{**vars(args), "runtime": "node"}), lambda spec: Outcome("ok"))
