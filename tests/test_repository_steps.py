"""What the case format can say about a repository's history: commits with `parents` (merges, second roots), a
generated tree under the first commit, and the lifecycle steps that move HEAD (`reset`, `amend`, `break_head`)
or the conversation (`conversation`). Each refusal names the file, the line and the fix; each step does to the
checkout what the git command it stands for does, checked with git itself."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml
from test_case_rules import case, refused, repo_case

from harness.cases.load import load_scenario
from harness.core.repospec import committed_state
from harness.repo.build import materialize_repo
from harness.repo.checkout import MISSING_COMMIT, Checkout
from harness.repo.gitenv import isolated_env

PERSONA = "---\ndescription: who I am\n---\nI am a helpful agent.\n"


def lifecycle(directory: Path, steps: list[dict], repo: dict | None = None) -> Path:
    repo = repo or {"commits": [{"message": "init", "files": {"system/persona.md": PERSONA}}]}
    return repo_case(directory, repo, kind="lifecycle", steps=steps)


# --- the loader -------------------------------------------------------------------------------------


def test_a_parent_must_be_an_earlier_commit(tmp_path: Path) -> None:  # line 9 is the `- 3` of the dumped YAML
    repo = {"commits": [{"files": {"a.md": "x"}}, {"parents": [1, 3], "files": {"b.md": "y"}}]}
    error = refused(repo_case(tmp_path, repo))
    assert error.line == 9 and "parents: 3 names commit 3, but only 1 commit(s) come before" in str(error)
    assert "name an earlier commit (1 is the first)" in str(error)


def test_a_merge_applies_its_changes_to_its_first_parents_tree(tmp_path: Path) -> None:
    repo = {
        "commits": [
            {"files": {"a.md": "a"}},
            {"files": {"b.md": "b"}},
            {"parents": [1], "files": {"c.md": "c"}},
            {"parents": [3, 2], "delete": ["c.md"]},
        ]
    }
    assert set(committed_state(load_scenario(repo_case(tmp_path, repo)).repo)) == {b"a.md"}
    deleting_the_other_side = {"commits": [*repo["commits"][:3], {"parents": [3, 2], "delete": ["b.md"]}]}
    assert "delete: 'b.md' does not exist" in str(refused(repo_case(tmp_path, deleting_the_other_side)))


def test_a_root_commit_starts_from_an_empty_tree(tmp_path: Path) -> None:
    repo = {"commits": [{"files": {"a.md": "a"}}, {"parents": [], "files": {"b.md": "b"}}]}
    assert set(committed_state(load_scenario(repo_case(tmp_path, repo)).repo)) == {b"b.md"}


def test_generate_is_the_first_commits_starting_tree(tmp_path: Path) -> None:
    generate = {"seed": 3, "files": 5, "depth": 0, "roots": [""]}
    plain = load_scenario(repo_case(tmp_path, {"generate": generate}))
    generated = sorted(committed_state(plain.repo))
    repo = {
        "generate": generate,
        "commits": [
            {"delete": [generated[0].decode()], "files": {"MEMORY.md": "# Memory\n"}},
            {"files": {"z.md": "z"}},
        ],
    }
    state = committed_state(load_scenario(repo_case(tmp_path, repo)).repo)
    assert set(state) == {*generated[1:], b"MEMORY.md", b"z.md"}
    missing = {"generate": generate, "commits": [{"delete": ["not-generated.md"]}]}
    assert "delete: 'not-generated.md' does not exist" in str(refused(repo_case(tmp_path, missing)))


def test_a_reset_names_a_commit_made_before_it(tmp_path: Path) -> None:
    error = refused(lifecycle(tmp_path, [{"commit": {"files": {"a.md": "x"}}}, {"reset": 3}]))
    assert "reset: 3 names commit 3, but only 2 commit(s) come before" in str(error)
    assert load_scenario(lifecycle(tmp_path, [{"commit": {"files": {"a.md": "x"}}}, {"reset": 2}, {"reset": 1}]))


def test_nothing_commits_on_a_broken_head_until_a_reset(tmp_path: Path) -> None:
    for key in ("commit", "amend"):
        error = refused(lifecycle(tmp_path, [{"break_head": "unborn"}, {"turn": "t"}, {key: {"message": "m"}}]))
        assert f"{key}: HEAD is broken here (break_head on line" in str(error) and "`reset: N` step" in str(error)
    assert load_scenario(lifecycle(tmp_path, [{"break_head": "unborn"}, {"reset": 1}, {"commit": {"message": "m"}}]))


def test_an_amend_keeps_heads_parents(tmp_path: Path) -> None:
    error = refused(lifecycle(tmp_path, [{"amend": {"parents": [1], "message": "m"}}]))
    assert "amend: keeps HEAD's own parents; to choose parents, use a commit step" in str(error)


def test_an_amend_changes_the_tips_tree(tmp_path: Path) -> None:
    steps = [{"commit": {"files": {"a.md": "x"}}}, {"reset": 1}, {"amend": {"delete": ["a.md"]}}]
    assert "delete: 'a.md' does not exist" in str(refused(lifecycle(tmp_path, steps)))


def test_an_unknown_way_to_break_head_names_the_nearest(tmp_path: Path) -> None:
    error = refused(lifecycle(tmp_path, [{"break_head": "unbron"}]))
    assert "steps/0/break_head" in str(error) and "did you mean 'unborn'?" in str(error)


def test_a_conversation_step_names_a_conversation_made_before_it(tmp_path: Path) -> None:
    error = refused(lifecycle(tmp_path, [{"new_conversation": True}, {"conversation": 3}]))
    assert "conversation: 3 names conversation 3, but only 2 are made before this step" in str(error)
    made = [{"new_conversation": True}, {"agent_free_conversation": {"system": "s"}}, {"conversation": 3}]
    assert load_scenario(lifecycle(tmp_path, made)).steps[-1] == {"conversation": 3}
    assert "minimum of 1" in str(refused(lifecycle(tmp_path, [{"conversation": 0}])))


def test_a_lifecycle_case_takes_the_repositorys_own_config_but_no_other_shape(tmp_path: Path) -> None:
    repo = {"config": {"core.quotePath": False}, "commits": [{"files": {"system/人物.md": PERSONA}}]}
    assert load_scenario(lifecycle(tmp_path, [{"turn": "t"}], repo)).repo["config"] == {"core.quotePath": False}
    bare = {**repo, "config": {"core.Bare": True}}
    error = refused(lifecycle(tmp_path, [{"turn": "t"}], bare))
    assert "config: core.Bare is not for a lifecycle case" in str(error) and "make this a compile case" in str(error)
    layout = {**repo, "layout": "bare"}
    error = refused(lifecycle(tmp_path, [{"turn": "t"}], layout))
    assert "layout: bare not in a lifecycle case" in str(error) and "separate-git-dir" in str(error)
    head = {**repo, "head": "detached"}
    assert "head: not in a lifecycle case" in str(refused(lifecycle(tmp_path, [{"turn": "t"}], head)))
    gitfile = {**repo, "layout": "separate-git-dir"}
    assert load_scenario(lifecycle(tmp_path, [{"turn": "t"}], gitfile)).repo["layout"] == "separate-git-dir"


def test_step_refusals_point_at_the_steps_line(tmp_path: Path) -> None:
    text = (
        "id: c\ndescription: d\nrepo:\n  commits:\n    - files: {a.md: x}\nsteps:\n  - turn: t\n"
        "  - break_head: missing-commit\n  - amend: {message: m}\n"
    )
    error = refused(case(tmp_path, text, kind="lifecycle"))
    assert error.line == 9 and "(break_head on line 8)" in str(error)


# --- what the builder and the steps write -------------------------------------------------------


def git(directory: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=directory, env=env, capture_output=True, text=True, check=False)


def test_a_merge_commit_has_its_parents_in_order(tmp_path: Path) -> None:
    repo = {
        "commits": [
            {"files": {"a.md": "a"}},
            {"files": {"b.md": "b"}},
            {"parents": [1], "files": {"c.md": "c"}},
            {"parents": [], "files": {"d.md": "d"}},
            {"parents": [3, 2, 4], "files": {"b.md": "b", "d.md": "d"}},
        ]
    }
    built = materialize_repo(load_scenario(repo_case(tmp_path, repo)), tmp_path / "cache")
    env = isolated_env(tmp_path / "home")
    log = git(built.memory_dir, env, "log", "--format=%s %H %P").stdout.splitlines()
    commits = {line.split()[1]: line.split()[2:] for line in log}  # "commit N": [id, parent ids...]
    ids = {n: commits[n][0] for n in "12345"}
    assert commits["5"][1:] == [ids["3"], ids["2"], ids["4"]] and commits["3"][1:] == [ids["1"]]
    assert commits["4"][1:] == [] and git(built.memory_dir, env, "rev-parse", "HEAD").stdout.strip() == ids["5"]
    tree = git(built.memory_dir, env, "ls-tree", "--name-only", "HEAD").stdout.split()
    assert tree == ["a.md", "b.md", "c.md", "d.md"]  # the first parent's tree, with b.md and d.md added


def checkout_of(tmp_path: Path, steps: list[dict]) -> tuple[Checkout, Path, dict[str, str]]:
    scenario = load_scenario(lifecycle(tmp_path, steps))
    built = materialize_repo(scenario, tmp_path / "cache")
    env = isolated_env(tmp_path / "home", ceiling=tmp_path)
    return Checkout(built.root / "memory", scenario, env), built.root / "memory", env


def test_a_reset_moves_the_branch_and_the_index_and_work_tree_follow(tmp_path: Path) -> None:
    checkout, repo, env = checkout_of(tmp_path, [{"turn": "t"}])
    first = checkout.run("commit", {"files": {"system/a.md": "a"}})
    second = checkout.run("commit", {"delete": ["system/persona.md"], "files": {"system/b.md": "b"}})
    assert checkout.run("reset", 2) == first
    assert git(repo, env, "rev-parse", "HEAD").stdout.strip() == first
    assert git(repo, env, "status", "--porcelain").stdout == ""  # index and work tree are commit 2's
    assert sorted(p.name for p in (repo / "system").iterdir()) == ["a.md", "persona.md"]
    assert checkout.run("reset", 3) == second and not (repo / "system" / "persona.md").exists()


def test_an_amend_is_a_new_commit_with_the_old_heads_parents(tmp_path: Path) -> None:
    checkout, repo, env = checkout_of(tmp_path, [{"turn": "t"}])
    old = checkout.run("commit", {"files": {"system/a.md": "a"}})
    parent = git(repo, env, "rev-parse", "HEAD^").stdout.strip()
    new = checkout.run("amend", {"message": "reworded"})
    assert new != old and git(repo, env, "rev-parse", "HEAD^").stdout.strip() == parent
    assert git(repo, env, "merge-base", "--is-ancestor", old, new).returncode == 1  # no descendant of the old HEAD
    assert git(repo, env, "rev-parse", f"{old}^{{tree}}").stdout == git(repo, env, "rev-parse", "HEAD^{tree}").stdout
    assert git(repo, env, "log", "-1", "--format=%s").stdout.strip() == "reworded"


@pytest.mark.parametrize(
    ("how", "revision", "listing"),
    [("unborn", None, 128), ("missing-commit", MISSING_COMMIT, 128), ("empty-head", None, 128)],
)
def test_each_broken_head_is_what_git_reads_it_as(tmp_path: Path, how: str, revision: str | None, listing: int) -> None:
    checkout, repo, env = checkout_of(tmp_path, [{"turn": "t"}])
    assert checkout.run("break_head", how) == revision
    parsed = git(repo, env, "rev-parse", "--verify", "HEAD")
    assert (parsed.stdout.strip() or None) == revision  # upstream's getCommittedMemfsRevision
    assert git(repo, env, "ls-tree", "-r", "--name-only", "HEAD").returncode == listing
    if how == "empty-head":
        assert "not a git repository" in git(repo, env, "status").stderr
    repaired = checkout.run("reset", 1)
    assert git(repo, env, "rev-parse", "--verify", "HEAD").stdout.strip() == repaired


def test_the_harness_pins_git_commit_dates(tmp_path: Path) -> None:
    env = isolated_env(tmp_path / "home")
    assert env["GIT_AUTHOR_DATE"] == env["GIT_COMMITTER_DATE"] == "1767225600 +0000"
    assert yaml.safe_dump(env)  # plain strings


# --- edit: the work tree changed without a commit -------------------------------------------------------


def test_an_edit_leaves_head_and_makes_the_work_tree_dirty_with_pinned_times(tmp_path: Path) -> None:
    checkout, repo, env = checkout_of(tmp_path, [{"turn": "t"}])
    head = git(repo, env, "rev-parse", "HEAD").stdout.strip()
    edit = {"files": {"system/persona.md": "changed\n", "notes/a.md": "new\n"}, "mtimes": {"notes/a.md": 1767225660}}
    assert checkout.run("edit", edit) == head
    assert git(repo, env, "status", "--porcelain").stdout.splitlines() == [" M system/persona.md", "?? notes/"]
    assert (repo / "notes" / "a.md").stat().st_mtime_ns == 1767225660 * 10**9
    assert (repo / "system" / "persona.md").stat().st_mtime_ns == 1767225600 * 10**9  # the builder's default date
    checkout.run("commit", {"files": {"system/b.md": "b"}})  # the commit's tree, the edit gone
    assert git(repo, env, "status", "--porcelain").stdout == ""


def test_an_edit_may_delete_and_stage(tmp_path: Path) -> None:
    checkout, repo, env = checkout_of(tmp_path, [{"turn": "t"}])
    checkout.run("edit", {"delete": ["system/persona.md"], "stage": True})
    assert git(repo, env, "status", "--porcelain").stdout.splitlines() == ["D  system/persona.md"]


def test_an_edit_deleting_a_file_the_work_tree_lacks_is_refused_at_its_line(tmp_path: Path) -> None:
    def gone() -> dict:  # a new mapping each time: the dumped YAML may hold no aliases
        return {"edit": {"delete": ["system/persona.md"]}}

    error = refused(lifecycle(tmp_path, [gone(), gone()]))
    assert "edit delete: 'system/persona.md' does not exist" in str(error) and error.line == 22  # the second edit's
    dated = refused(lifecycle(tmp_path, [{"edit": {"mtimes": {"nope.md": 1}}}]))
    assert "edit mtimes: 'nope.md' is not in the work tree" in str(dated)
    assert load_scenario(lifecycle(tmp_path, [gone(), {"reset": 1}, gone()]))  # a reset brings the file back
