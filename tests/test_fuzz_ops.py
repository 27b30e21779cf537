"""`conformance fuzz --op`: the op case strategies draw cases the loader accepts, and a short fuzz run finds a
planted bug of the Memory tool's view and saves it as an op case that reproduces it.

No real release runs here: the reference is tests/fake_reference.py's fake `bun` serving a 0.34.12 bundle, which
answers memory_view with the port's own view; the implementation under test is tests/planted_rules_impl.py with
`view-name-order` (entries by name, no edit times), so a generated case diverges only where the edit times
order the entries differently from their names.
"""

from __future__ import annotations

import itertools
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from fake_reference import fake_bundle, install_fake_bun
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.cases.load import load_scenario
from harness.cli import main as cli
from harness.tools.fuzz.ops import op_scenario
from harness.tools.fuzz.staged import validate_documents
from harness.tools.fuzz.views import REFUSED_PATHS, view_documents
from harness.tools.fuzz.worktrees import write_documents


def drawn(strategy: Callable[[], st.SearchStrategy[dict[str, Any]]], count: int, tmp: Path) -> list[dict[str, Any]]:
    """`count` derandomized draws, each loaded by the case loader (a refusal fails the test with its message)."""
    docs: list[dict[str, Any]] = []

    @settings(
        max_examples=count, derandomize=True, database=None, deadline=None, suppress_health_check=list(HealthCheck)
    )
    @given(strategy())
    def collect(doc: dict[str, Any]) -> None:
        scenario = op_scenario(doc, "drawn", tmp)
        assert scenario.kind == "op" and scenario.op == doc["op"]
        docs.append(doc)

    collect()
    return docs


def test_the_view_strategy_draws_loadable_cases_of_every_shape(tmp_path: Path) -> None:
    docs = drawn(view_documents, 80, tmp_path)
    repos = [doc["repo"] for doc in docs]
    worktrees = [repo.get("worktree", {}) for repo in repos]
    paths = [doc["args"]["path"] for doc in docs]
    times = [[c["committer"] for c in repo["commits"]] for repo in repos]
    assert any(len(t) >= 3 for t in times) and all(len(set(t)) == len(t) for t in times)  # distinct commit times
    assert any(any(later < earlier for earlier, later in itertools.pairwise(t)) for t in times)  # out of order too
    assert any("stage" in w for w in worktrees) and any("delete" in w for w in worktrees)
    assert any("mtimes" in w for w in worktrees) and any("files" in w for w in worktrees)
    assert any(p in REFUSED_PATHS for p in paths) and any("/" in p.strip("/") for p in paths)

    def files(repo: dict[str, Any]) -> set[str]:
        return {path for commit in repo["commits"] for path in commit.get("files", {})}

    def crowded(names: set[str]) -> bool:  # a directory with more than the ten entries the tool lists
        entries: dict[str, set[str]] = {}
        for name in names:
            parts = name.split("/")
            for depth in range(1, len(parts)):
                entries.setdefault("/".join(parts[:depth]), set()).add(parts[depth])
        return any(len(children - {"MEMORY.md"}) > 10 for children in entries.values())

    assert any(crowded(files(repo)) for repo in repos)
    assert any(any(c in name for c in "&<\"'") for repo in repos for name in files(repo))  # XML specials
    assert any(any(part.startswith(".") for part in name.split("/")) for repo in repos for name in files(repo))


def test_the_write_strategy_draws_loadable_clean_and_dirty_repositories(tmp_path: Path) -> None:
    docs = drawn(write_documents, 60, tmp_path)
    worktrees = [doc["repo"].get("worktree") for doc in docs]
    assert None in worktrees and any(w and w.get("stage") for w in worktrees)
    contents = [v for w in worktrees if w for v in w.get("files", {}).values()]
    assert any(isinstance(v, dict) and v["base64"].startswith("//4") for v in contents)  # UTF-16LE's BOM
    assert {doc["args"]["command"] for doc in docs} >= {"delete", "str_replace", "create"}


def test_the_validate_strategy_draws_staged_changes_of_every_kind(tmp_path: Path) -> None:
    docs = drawn(validate_documents, 120, tmp_path)
    repos = [doc["repo"] for doc in docs]
    worktrees = [repo.get("worktree", {}) for repo in repos]
    policies = {repo.get("layout_policy") for repo in repos}
    assert {None, "legacy-only\n", "root-marker\n", "shared-memory\n"} <= policies
    committed = [set(repo["commits"][0]["files"]) for repo in repos]
    assert any("MEMORY.md" in names for names in committed) and any("system/" in n for c in committed for n in c)
    changed = [(c, w.get("files", {}), w.get("delete", [])) for c, w in zip(committed, worktrees, strict=True)]
    assert any(set(files) - c for c, files, _ in changed)  # adds
    assert any(set(files) & c for c, files, _ in changed)  # edits
    assert any(set(deleted) - set(files) and set(files) - c for c, files, deleted in changed)  # renames
    assert any(isinstance(v, dict) and v.get("executable") for _, files, _ in changed for v in files.values())
    assert any(isinstance(v, dict) and "symlink" in v for _, files, _ in changed for v in files.values())
    assert any(w.get("stage") is True for w in worktrees) and any(isinstance(w.get("stage"), list) for w in worktrees)
    contents = [v for r in repos for v in r["commits"][0]["files"].values()]
    contents += [v for _, files, _ in changed for v in files.values()]
    texts = [v if isinstance(v, str) else str(v.get("text", "")) for v in contents]
    for spelling in ("read_only: true", 'read_only: "true"', "read_only: True", 'description: ""', "title:"):
        assert any(spelling in text for text in texts), spelling
    assert any(isinstance(v, dict) and v.get("newlines") == "crlf" for v in contents)
    names = {n for c, files, _ in changed for n in (*c, *files)}
    assert any(c in n for n in names for c in " \t\n*")  # names the hook's `for file in $(...)` splits or globs


@pytest.fixture
def port_reference(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """`--reference bundle:PATH` of a 0.34.12 bundle served by a fake bun that answers ops with the port."""
    install_fake_bun(tmp_path / "bin")
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}:/usr/bin:/bin")
    monkeypatch.setenv("LETTA_CONFORMANCE_CACHE", str(tmp_path / "cache"))
    return f"bundle:{fake_bundle(tmp_path / 'bundle', version='0.34.12')}"


def fuzz_ops(tmp_path: Path, reference: str, *extra: str, op: str = "memory_view") -> tuple[int, Path]:
    """`conformance fuzz --op <op>` in process, with an empty corpus; (exit code, where cases go)."""
    (tmp_path / "corpus" / "compile").mkdir(parents=True, exist_ok=True)
    out = tmp_path / "found" / "compile"
    argv = ["fuzz", "--op", op, "--seed", "5", "--reference", reference, "--out", str(out)]
    code = cli.main([*argv, "--cases", str(tmp_path / "corpus" / "compile"), *extra])
    return code, out.parent / "ops"


def test_a_port_that_lists_entries_by_name_is_found_and_saved_as_an_op_case(
    tmp_path: Path, port_reference: str, capsys: pytest.CaptureFixture[str]
) -> None:
    impl = f"cmd:{sys.executable} tests/planted_rules_impl.py --bugs view-name-order"
    code, ops = fuzz_ops(tmp_path, port_reference, "--seconds", "8", "--impl", impl)
    printed = capsys.readouterr().out
    assert code == 1, printed
    [saved] = sorted(ops.glob("fuzz-memory-view-*.yaml"))
    assert "view (order)" in printed and "errors: 0" in printed, printed
    scenario = load_scenario(saved)
    assert scenario.kind == "op" and scenario.op == "memory_view" and "fuzz" in scenario.tags
    found_by = yaml.safe_load(saved.read_text())["found_by"]
    assert found_by == {"reference": port_reference, "profile": "letta-code@0.34.7", "seed": 5, "implementation": impl}
    assert scenario.id == f"fuzz-memory-view-{found_by['seed']}"
    # whatever the budget allowed: shrunk, or saved as found and saying so
    assert "shrunk by Hypothesis" in scenario.description or "budget ran out" in scenario.description
    report = tmp_path / "report"
    argv = ["run", str(saved), "--reference", port_reference, "--impl", impl, "--report", str(report), "--no-timing"]
    assert cli.main(argv) == 1  # the saved case alone shows the divergence again
    [result] = json.loads((report / "report.json").read_text())["results"]
    assert result["status"] == "fail" and result["case"] == scenario.id, result
    # with that case in the corpus (`--cases`), the same divergence is known: counted, not saved again
    argv = ["fuzz", "--op", "memory_view", "--seed", "5", "--reference", port_reference, "--impl", impl]
    (ops.parent / "compile").mkdir(exist_ok=True)
    argv += ["--out", str(tmp_path / "again" / "compile"), "--cases", str(ops.parent / "compile")]
    capsys.readouterr()
    code = cli.main([*argv, "--max-examples", "6", "--seconds", "60"])
    printed = capsys.readouterr().out
    assert code == 0 and "known: 0;" not in printed and "new divergences: 0" in printed, printed


def test_the_honest_port_agrees_with_itself(
    tmp_path: Path, port_reference: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, ops = fuzz_ops(tmp_path, port_reference, "--seconds", "60", "--max-examples", "15")
    printed = capsys.readouterr().out
    assert code == 0 and "15 generated op cases" in printed and "errors: 0" in printed, printed
    assert not ops.exists()


def test_a_validator_that_reads_crlf_frontmatter_as_yaml_is_found_and_saved(
    tmp_path: Path, port_reference: str, capsys: pytest.CaptureFixture[str]
) -> None:
    impl = f"cmd:{sys.executable} tests/planted_rules_impl.py --bugs yaml-validator"
    code, ops = fuzz_ops(tmp_path, port_reference, "--seconds", "10", "--impl", impl, op="validate")
    printed = capsys.readouterr().out
    assert code == 1 and "errors: 0" in printed, printed
    [saved] = sorted(ops.glob("fuzz-validate-*.yaml"))
    scenario = load_scenario(saved)
    assert scenario.op == "validate" and scenario.tags == ("op", "commit-validation", "fuzz")
    report = tmp_path / "report"
    argv = ["run", str(saved), "--reference", port_reference, "--impl", impl, "--report", str(report), "--no-timing"]
    assert cli.main(argv) == 1  # the saved case alone shows the divergence again


def test_the_honest_port_agrees_with_itself_on_staged_changes(
    tmp_path: Path, port_reference: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, ops = fuzz_ops(tmp_path, port_reference, "--seconds", "60", "--max-examples", "15", op="validate")
    printed = capsys.readouterr().out
    assert code == 0 and "15 generated op cases" in printed and "errors: 0" in printed, printed
    assert not ops.exists()


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        (("--op", "nope"), "--op nope: no strategy draws its cases; choose from memory_view, memory_write"),
        (("--op", "memory_view", "--lifecycle"), "--op and --lifecycle: give one"),
    ],
)
def test_a_bad_op_switch_is_refused_naming_the_fix(
    port_reference: str, extra: tuple[str, ...], said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["fuzz", "--reference", port_reference, *extra]) == 2
    assert said in capsys.readouterr().err
