"""harness.cases: the loader's gaps are load errors with the line at fault and the fix, and no case can
name a path outside its own repository (each escape is tried, and a file outside must survive)."""

from __future__ import annotations

import base64
import contextlib
from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from harness.cases.inputs import clock_error, is_invalid_date, parse_json_number
from harness.cases.load import load_scenario
from harness.cases.write import case_document
from harness.core.model import ScenarioError
from harness.core.repomodel import RepoModel
from harness.core.repospec import model_of
from harness.repo.build import EscapeError, build_repo, materialize_repo
from harness.repo.gitenv import isolated_env


def case(directory: Path, text: str, name: str = "c", kind: str = "compile") -> Path:
    path = directory / kind / f"{name}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def refused(path: Path) -> ScenarioError:
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    assert str(info.value).startswith(f"{path}:{info.value.line}: "), "every refusal names file:line"
    return info.value


def repo_case(directory: Path, repo: dict, kind: str = "compile", **extra: object) -> Path:
    doc = {"id": "c", "description": "d", "repo": repo, **extra}
    return case(directory, yaml.safe_dump(doc, allow_unicode=True, sort_keys=False), kind=kind)


# --- loader gaps ------------------------------------------------------------------------------------


def test_a_key_that_is_not_text_is_refused_at_its_line(tmp_path: Path) -> None:
    error = refused(case(tmp_path, 'id: c\ndescription: d\nrepo:\n  commits:\n    - files:\n        123: "x"\n'))
    assert error.line == 6 and "'123'" in str(error) and "quote it" in str(error)
    error = refused(case(tmp_path, "id: c\ndescription: d\non: true\nrepo: {}\n"))
    assert error.line == 3 and "bool" in str(error)


def test_a_key_given_twice_is_refused_at_its_second_line(tmp_path: Path) -> None:
    error = refused(case(tmp_path, "id: c\ndescription: one\ndescription: two\nrepo: {}\n"))
    assert error.line == 3 and "given twice (first on line 2)" in str(error)


def test_the_id_must_be_the_file_name(tmp_path: Path) -> None:
    error = refused(case(tmp_path, "id: other\ndescription: d\nrepo: {}\n", name="c"))
    assert error.line == 1 and "rename the file to other.yaml or set id: c" in str(error)


def test_tags_come_from_the_vocabulary_with_the_nearest_one_as_the_fix(tmp_path: Path) -> None:
    error = refused(case(tmp_path, "id: c\ndescription: d\ntags: [names, colation]\nrepo: {}\n"))
    assert error.line == 3 and "unknown tag 'colation'; did you mean 'collation'?" in str(error)


def test_a_written_case_takes_tags_from_the_vocabulary_only() -> None:
    assert case_document("c", "d", RepoModel(), tags=["names"])["tags"] == ["names"]
    with pytest.raises(ValueError, match="unknown tag"):
        case_document("c", "d", RepoModel(), tags=["nmaes"])


def test_renaming_a_missing_path_is_refused(tmp_path: Path) -> None:
    repo = {"commits": [{"files": {"a.md": "x"}}, {"rename": {"b.md": "c.md"}}]}
    error = refused(repo_case(tmp_path, repo))
    assert "rename: 'b.md' does not exist" in str(error)


def test_deleting_a_missing_path_or_a_directory_is_refused(tmp_path: Path) -> None:
    missing = {"commits": [{"files": {"a.md": "x"}}, {"delete": ["gone.md"]}]}
    assert "delete: 'gone.md' does not exist" in str(refused(repo_case(tmp_path, missing)))
    directory = {"commits": [{"files": {"d/a.md": "x"}}, {"delete": ["d"]}]}
    assert "delete: 'd' is a directory here; name each file in it" in str(refused(repo_case(tmp_path, directory)))
    worktree = {"commits": [{"files": {"a.md": "x"}}], "worktree": {"delete": ["nope.md"]}}
    assert "worktree delete: 'nope.md' does not exist" in str(refused(repo_case(tmp_path, worktree)))


def test_a_lone_surrogate_in_repository_text_is_refused_with_base64_as_the_fix(tmp_path: Path) -> None:
    text = 'id: c\ndescription: d\nrepo:\n  commits:\n    - files:\n        a.md: "x\\ud800"\n'
    error = refused(case(tmp_path, text))
    assert error.line == 6 and "lone surrogate U+D800" in str(error) and "base64" in str(error)


def test_a_path_that_is_a_file_and_a_directory_in_one_tree_is_refused(tmp_path: Path) -> None:
    repo = {"commits": [{"files": {"a": "file"}}, {"files": {"a/b.md": "x"}}]}
    assert "'a' is a file and also a directory" in str(refused(repo_case(tmp_path, repo)))


def test_a_lifecycle_case_with_memory_subdir_is_refused_with_the_reason(tmp_path: Path) -> None:
    repo = {"commits": [{"files": {"sub/system/a.md": "x"}}], "memory_subdir": "sub"}
    error = refused(repo_case(tmp_path, repo, kind="lifecycle", steps=[{"turn": "hi"}]))
    assert "memory_subdir: not in a lifecycle case" in str(error) and "git init" in str(error)


def test_refusals_are_the_same_text_on_every_load(tmp_path: Path) -> None:
    path = repo_case(tmp_path, {"commits": [{"files": {"a.md": "x"}}, {"delete": ["b.md"]}]})
    assert str(refused(path)) == str(refused(path))


# --- confinement ------------------------------------------------------------------------------------


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def escapes(outside: Path) -> dict[str, dict]:
    """Repository specs that name `outside` (or a path beside the repository) from a repository built at
    outside.parent / "b" / "memory"."""
    near = "../../" + outside.name
    return {
        "absolute file": {"commits": [{"files": {str(outside): "x"}}]},
        "dot-dot file": {"commits": [{"files": {near: "x"}}]},
        "dot-dot inside": {"commits": [{"files": {"system/../../../" + outside.name: "x"}}]},
        ".git file": {"commits": [{"files": {".git/hooks/post-commit": "x"}}]},
        ".GIT any case": {"commits": [{"files": {"a/.GIT/config": "x"}}]},
        "base64 name": {"commits": [{"files": [{"path_base64": b64(near), "content": "x"}]}]},
        "rename target": {"commits": [{"files": {"a.md": "x"}}, {"rename": {"a.md": near}}]},
        "delete": {"commits": [{"files": {"a.md": "x"}}, {"delete": [str(outside)]}]},
        "worktree file": {"commits": [{"files": {"a.md": "x"}}], "worktree": {"files": {near: "x"}}},
        "worktree delete": {"commits": [{"files": {"a.md": "x"}}], "worktree": {"delete": [near]}},
        "worktree delete absolute": {"commits": [{"files": {"a.md": "x"}}], "worktree": {"delete": [str(outside)]}},
        "memory_subdir absolute": {"commits": [{"files": {"a.md": "x"}}], "memory_subdir": str(outside.parent)},
        "memory_subdir dot-dot": {"commits": [{"files": {"a.md": "x"}}], "memory_subdir": "../.."},
        "generated name": {"generate": {"seed": 1, "files": 40, "depth": 2, "name_alphabet": "."}},
    }


ESCAPE_NAMES = sorted(escapes(Path("/x/outside.txt")))


@pytest.mark.parametrize("name", ESCAPE_NAMES)
def test_every_path_that_leaves_the_repository_is_refused_at_load_time(tmp_path: Path, name: str) -> None:
    error = refused(repo_case(tmp_path, escapes(tmp_path / "outside.txt")[name]))
    assert "a case may only name paths inside its own repository" in str(error)


def _everything(root: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in root.rglob("*") if p.is_file() and not p.is_symlink()}


@pytest.mark.parametrize("name", ESCAPE_NAMES)
def test_a_file_outside_the_repository_survives_building_the_refused_spec(tmp_path: Path, name: str) -> None:
    """The builder is the second wall: given the refused spec anyway, it writes and removes nothing outside."""
    work = tmp_path / "work"
    (work / "cases").mkdir(parents=True)
    outside = work / "outside.txt"
    outside.write_text("keep me")
    env = isolated_env(tmp_path / "home")
    scenario = load_scenario(repo_case(work / "cases", {"commits": [{"files": {"a.md": "x"}}]}))
    scenario = replace(scenario, repo=escapes(outside)[name])  # as if the loader had let it in
    before = _everything(work)
    with contextlib.suppress(EscapeError):  # refused, or (a commit's `delete`) only ever a change of git objects
        build_repo(model_of(scenario), work / "b", env)
    after = {p: data for p, data in _everything(work).items() if (work / "b") not in p.parents}
    assert after == before


def test_the_builder_never_writes_through_a_committed_symlink(tmp_path: Path) -> None:
    """A symlink to a directory outside, then a work tree file under it: the symlink is replaced by a directory
    of the repository (as a checkout would), and nothing is written outside."""
    outside = tmp_path / "outside"
    outside.mkdir()
    repo = {
        "commits": [{"files": {"link": {"symlink": str(outside)}}}],
        "worktree": {"files": {"link/planted.txt": "x"}},
    }
    scenario = load_scenario(repo_case(tmp_path / "cases", repo))
    built = materialize_repo(scenario, tmp_path / "cache")
    assert list(outside.iterdir()) == []
    assert (built.root / "memory" / "link" / "planted.txt").read_text() == "x"
    assert not (built.root / "memory" / "link").is_symlink()


def test_the_builder_never_removes_a_file_through_a_committed_symlink(tmp_path: Path) -> None:
    """The loader refuses deleting `link/victim.txt` (no such file at HEAD); the builder, given it anyway,
    refuses to follow the symlink out of the repository."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "victim.txt").write_text("keep me")
    repo = {"commits": [{"files": {"link": {"symlink": str(outside)}}}], "worktree": {"delete": ["link/victim.txt"]}}
    path = repo_case(tmp_path / "cases", repo)
    assert "does not exist" in str(refused(path))
    scenario = replace(load_scenario(repo_case(tmp_path / "ok", {"commits": [{"files": {"a.md": "x"}}]})), repo=repo)
    with pytest.raises(EscapeError):
        build_repo(model_of(scenario), tmp_path / "b", isolated_env(tmp_path / "home"))
    assert (outside / "victim.txt").read_text() == "keep me"


def test_the_harness_allows_exactly_the_clocks_the_python_port_reads() -> None:
    """harness.cases.inputs decides which clocks a request may carry without the port; the port's own reading
    (memfs_prompt.jsvalues, measured against bun and node in test_jsvalues) refuses exactly the others."""
    from test_jsvalues import generated_dates

    from memfs_prompt.jsvalues import UnsupportedJsValue, parse_js_date

    def port_reads(text: str) -> bool:
        try:
            parse_js_date(text)
        except UnsupportedJsValue:
            return False
        return True

    texts = [
        *generated_dates(29, 6000),
        "2026-13",
        "2026-00-01",
        "2026-01-32",
        "-000000",
        "-000000-01-01",
        "-000000-01-01T00:00Z",
        "2026-01-02 03:04Z",
        "2026-01-02T03:04:05.Z",
        "2026-01-02T03Z",
        "+2026-01-02",
    ]
    allowed = {text for text in texts if clock_error(text) is None}
    assert [text for text in texts if (text in allowed) != port_reads(text)] == []
    assert 1000 < len(allowed) < len(texts) - 300  # both sides of the rule are exercised


@pytest.mark.parametrize(
    ("text", "value"), [("3", 3), ("3.0", 3.0), ("-5", -5), ("1e21", 1e21), ("9007199254740993", 9007199254740993)]
)
def test_a_message_count_is_kept_as_written(text: str, value: float) -> None:
    parsed = parse_json_number(text)
    assert parsed == value and type(parsed) is type(value)


@pytest.mark.parametrize("text", ["three", "true", "null", "[1]", "NaN", "Infinity", "-Infinity", "1e400"])
def test_a_message_count_no_request_can_carry_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match=r"not a (finite )?number"):
        parse_json_number(text)


def test_the_harness_calls_exactly_the_clocks_the_python_port_reads_as_invalid_dates_invalid() -> None:
    """A lifecycle case may not open at an Invalid Date (harness.cases.inputs.is_invalid_date); the port's own
    reading (memfs_prompt.jsvalues, measured against bun and node in test_jsvalues) agrees on every clock."""
    from test_jsvalues import generated_dates

    from memfs_prompt.jsvalues import parse_js_date

    extremes = [
        "2024-02-29T00:00:00Z",
        "2023-02-29T00:00:00Z",
        "2026-12-31T24:00:00Z",
        "2026-12-31T24:00:01Z",
        "+275760-09-13T00:00:00Z",
        "+275760-09-13T00:00:00.001Z",
        "-271821-04-20T00:00:00Z",
        "-271821-04-19T23:59:59.999Z",
        "2026-01-02T03:04:05+23:59",
        "2026-01-02T03:04:05+24:00",
        "+002026-01-02T03:04:05-05:00",
        "2026-01-02T25:00Z",
        "2026-01-02T03:60Z",
    ]
    texts = [t for t in [*generated_dates(31, 6000), *extremes] if clock_error(t) is None]
    disagree = [t for t in texts if is_invalid_date(t) != (not parse_js_date(t).valid)]
    assert disagree == []
    assert 50 < sum(map(is_invalid_date, texts)) < len(texts) - 500  # both sides of the rule are exercised
