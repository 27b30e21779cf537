"""harness.cases.memo (loaded cases kept between runs) and harness.repo.discard (directories removed in the
background): the two parts of a warm run's speed that could change what a run sees. A memo never gives what
the loader would not (a changed case, a changed rules.yaml, a case that does not load), and a discarded
directory is gone once the run drains."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from harness.cases import memo
from harness.cases.load import load_scenario, load_scenarios
from harness.cases.memo import ScenarioMemo
from harness.core.model import Scenario, ScenarioError
from harness.repo.discard import discard, drain

CASES = Path(__file__).resolve().parents[1] / "cases"


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    """A corpus of three real cases and the real rules.yaml."""
    root = tmp_path / "cases"
    (root / "compile").mkdir(parents=True)
    shutil.copy(CASES / "rules.yaml", root / "rules.yaml")
    for name in ("bom-double", "bom-frontmatter", "bs-chomping"):
        shutil.copy(CASES / "compile" / f"{name}.yaml", root / "compile" / f"{name}.yaml")
    return root


class Counting:
    def __init__(self) -> None:
        self.loaded: list[str] = []

    def __call__(self, path: Path) -> Scenario:
        self.loaded.append(path.stem)
        return load_scenario(path)


def load_all(corpus: Path, memo: ScenarioMemo, loader: Counting) -> list[Scenario]:
    return [memo.load(path, loader) for path in sorted((corpus / "compile").glob("*.yaml"))]


def test_a_second_run_reads_its_cases_from_the_memo_and_gets_what_the_loader_gives(
    corpus: Path, tmp_path: Path
) -> None:
    first, loader = ScenarioMemo(tmp_path / "memo"), Counting()
    loaded = load_all(corpus, first, loader)
    first.save()
    again, second = ScenarioMemo(tmp_path / "memo"), Counting()
    assert load_all(corpus, again, second) == loaded == load_scenarios([corpus]).scenarios
    assert len(loader.loaded) == 3 and second.loaded == []


def test_a_changed_case_or_rules_file_is_loaded_again(corpus: Path, tmp_path: Path) -> None:
    memo = ScenarioMemo(tmp_path / "memo")
    load_all(corpus, memo, Counting())
    memo.save()
    case = corpus / "compile" / "bs-chomping.yaml"
    case.write_text(case.read_text(encoding="utf-8").replace("description:", "description: changed,", 1), "utf-8")
    loader = Counting()
    changed = load_all(corpus, ScenarioMemo(tmp_path / "memo"), loader)
    assert loader.loaded == ["bs-chomping"] and changed[-1].description.startswith("changed,")
    (corpus / "rules.yaml").write_text((corpus / "rules.yaml").read_text(encoding="utf-8") + "\n", "utf-8")
    loader = Counting()
    load_all(corpus, ScenarioMemo(tmp_path / "memo"), loader)
    assert len(loader.loaded) == 3


def test_a_case_that_does_not_load_is_never_kept_and_refused_every_time(corpus: Path, tmp_path: Path) -> None:
    bad = corpus / "compile" / "bs-chomping.yaml"
    bad.write_text(bad.read_text(encoding="utf-8").replace("id: bs-chomping", "id: other"), "utf-8")
    for _ in range(2):
        result = load_scenarios([corpus], ScenarioMemo(tmp_path / "memo"))
        assert [s.id for s in result.scenarios] == ["bom-double", "bom-frontmatter"]
        assert len(result.errors) == 1 and isinstance(result.errors[0], ScenarioError)


def test_a_discarded_directory_is_gone_once_the_run_drains(tmp_path: Path) -> None:
    work = tmp_path / "lifecycle-copy"
    (work / "memory" / ".git").mkdir(parents=True)
    (work / "memory" / "a.md").write_text("x")
    discard(work)
    drain()
    assert not work.exists()


def test_the_fingerprint_covers_every_harness_module_the_loader_imports() -> None:
    import ast

    import harness

    root = Path(harness.__file__).parent
    hashed = set(memo.fingerprinted_files())
    for source in (root / "cases").glob("*.py"):
        for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("harness."):
                parts = node.module.split(".")[1:]
                module = root.joinpath(*parts).with_suffix(".py")
                package = root.joinpath(*parts, "__init__.py")
                assert module in hashed or package in hashed, f"{source.name} imports {node.module}, not fingerprinted"
