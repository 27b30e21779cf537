"""harness.repo: repository shapes built from a case (layout, object format, HEAD, config, gitlinks,
listing size), read back with git itself; and each bad shape is a load error with its line and fix."""

from __future__ import annotations

import base64
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from harness.cases.load import load_scenario
from harness.cases.write import repo_spec
from harness.core.listing import printed_name
from harness.core.model import ScenarioError
from harness.core.repospec import model_of
from harness.repo.build import MaterializedRepo, materialize_repo

FILES = {"system/persona.md": "me\n", "system/human.md": "h\n", "notes/a.md": "a\n", "café.md": "e\n"}
BUDGET = 1024 * 1024


def case_file(directory: Path, repo: dict[str, Any], kind: str = "compile", name: str = "c") -> Path:
    path = directory / "cases" / kind / f"{name}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    doc = {"id": name, "description": "d", "repo": repo}
    if kind == "lifecycle":
        doc["steps"] = [{"turn": "hi"}]
    path.write_text(yaml.safe_dump(doc, allow_unicode=True, sort_keys=False), encoding="utf-8")
    return path


def build(tmp_path: Path, repo: dict[str, Any]) -> MaterializedRepo:
    return materialize_repo(load_scenario(case_file(tmp_path, repo)), tmp_path / "cache")


def git(cwd: Path, *args: str) -> bytes:
    done = subprocess.run(
        ["git", *args],
        cwd=cwd,
        capture_output=True,
        check=True,
        env={"PATH": "/usr/bin:/bin", "HOME": str(cwd), "GIT_CONFIG_NOSYSTEM": "1"},
    )
    return done.stdout


def text(cwd: Path, *args: str) -> str:
    return git(cwd, *args).decode().strip()


def fsck(memory_dir: Path) -> None:
    """git checks every object from the branch and the tags (not HEAD: a tag or a tree there is what a case asks)."""
    git(memory_dir, "fsck", "--strict", "--no-dangling", "main", *text(memory_dir, "tag").split())


def refused(tmp_path: Path, repo: dict[str, Any], kind: str = "compile") -> ScenarioError:
    path = case_file(tmp_path, repo, kind)
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    assert info.value.line is not None and str(info.value).startswith(f"{path}:{info.value.line}: ")
    return info.value


def commits(files: dict[str, Any] = FILES) -> list[dict[str, Any]]:
    return [{"files": dict(files)}]


# --- layouts -----------------------------------------------------------------------------------------


def test_a_bare_layout_is_a_bare_repository_and_the_memory_directory(tmp_path: Path) -> None:
    repo = build(tmp_path, {"layout": "bare", "commits": commits()})
    assert text(repo.memory_dir, "rev-parse", "--is-bare-repository") == "true"
    assert repo.memory_dir == repo.root / "memory" and (repo.memory_dir / "HEAD").is_file()
    assert text(repo.memory_dir, "rev-parse", "HEAD") == repo.head
    assert sorted(text(repo.memory_dir, "ls-tree", "-r", "--name-only", "HEAD").split("\n"))[0] == '"caf\\303\\251.md"'


def test_a_git_dir_layout_points_the_compilers_at_the_work_tree_s_git_directory(tmp_path: Path) -> None:
    repo = build(tmp_path, {"layout": "git-dir", "commits": commits()})
    assert repo.memory_dir == repo.root / "memory" / ".git"
    assert text(repo.memory_dir, "rev-parse", "--is-inside-git-dir") == "true"
    inside = build(tmp_path / "inside", {"layout": "git-dir", "memory_subdir": "refs", "commits": commits()})
    assert inside.memory_dir == inside.root / "memory" / ".git" / "refs"


def test_a_separate_git_dir_is_named_by_a_relative_gitdir_file(tmp_path: Path) -> None:
    repo = build(tmp_path, {"layout": "separate-git-dir", "commits": commits()})
    assert (repo.memory_dir / ".git").read_text() == "gitdir: ../memory.git\n"
    assert Path(text(repo.memory_dir, "rev-parse", "--absolute-git-dir")) == repo.root / "memory.git"
    assert text(repo.memory_dir, "rev-parse", "HEAD") == repo.head


def test_core_bare_is_written_last_so_the_work_tree_still_builds(tmp_path: Path) -> None:
    repo = build(
        tmp_path,
        {
            "config": {"core.bare": True},
            "commits": commits(),
            "worktree": {"files": {"extra.md": "x\n"}, "stage": True},
        },
    )
    assert text(repo.memory_dir, "config", "core.bare") == "true"
    assert (repo.memory_dir / "extra.md").is_file()


def test_a_bare_unborn_repository_has_no_head(tmp_path: Path) -> None:
    repo = build(tmp_path, {"kind": "unborn", "layout": "bare"})
    assert repo.head is None and text(repo.memory_dir, "rev-parse", "--is-bare-repository") == "true"


# --- object format, HEAD, gitlinks, config -------------------------------------------------------


@pytest.mark.parametrize("layout", ["work-tree", "bare"])
def test_a_sha256_repository_holds_sha256_objects_git_accepts(tmp_path: Path, layout: str) -> None:
    repo = build(
        tmp_path,
        {
            "object_format": "sha256",
            "layout": layout,
            "head": "tag-of-tag",
            "commits": [*commits(), {"files": {"link.md": {"gitlink": 1}}}],
        },
    )
    assert text(repo.memory_dir, "rev-parse", "--show-object-format") == "sha256"
    assert repo.head is not None and len(repo.head) == 64
    fsck(repo.memory_dir)
    assert text(repo.memory_dir, "show", "HEAD:system/persona.md") == "me"


@pytest.mark.parametrize(
    ("head", "kind"),
    [("detached", "commit"), ("tag", "tag"), ("tag-of-tag", "tag"), ("tree", "tree"), ("branch", "commit")],
)
def test_head_holds_what_the_case_says(tmp_path: Path, head: str, kind: str) -> None:
    repo = build(tmp_path, {"head": head, "commits": [*commits(), {"files": {"b.md": "b\n"}}]})
    git_dir = repo.memory_dir / ".git"
    held = (git_dir / "HEAD").read_text().strip()
    assert held == "ref: refs/heads/main" if head == "branch" else len(held) == 40
    assert text(repo.memory_dir, "cat-file", "-t", "HEAD") == kind
    assert text(repo.memory_dir, "rev-parse", "HEAD^{tree}") == text(
        repo.memory_dir, "rev-parse", f"{repo.head}^{{tree}}"
    )
    if head == "tag-of-tag":
        assert text(repo.memory_dir, "cat-file", "-p", "HEAD").startswith("object ") and "type tag" in text(
            repo.memory_dir, "cat-file", "-p", "HEAD"
        )
    fsck(repo.memory_dir)


def test_gitlinks_name_an_earlier_commit_or_a_given_id(tmp_path: Path) -> None:
    missing = "1" * 40
    repo = build(
        tmp_path, {"commits": [*commits(), {"files": {"link.md": {"gitlink": 1}, "gone.md": {"gitlink": missing}}}]}
    )
    first = text(repo.memory_dir, "rev-parse", "HEAD~1")
    listing = text(repo.memory_dir, "ls-tree", "HEAD", "link.md", "gone.md")
    assert listing == f"160000 commit {missing}\tgone.md\n160000 commit {first}\tlink.md"
    assert text(repo.memory_dir, "show", "HEAD:link.md").startswith(f"commit {first}")


def test_config_is_written_into_the_repository_s_own_config(tmp_path: Path) -> None:
    repo = build(
        tmp_path,
        {
            "config": {"core.quotePath": False, "color.ui": "always", "log.decorate": "full", "diff.renameLimit": 7},
            "commits": commits(),
        },
    )
    config = repo.memory_dir / ".git" / "config"
    for key, value in [
        ("core.quotepath", "false"),
        ("color.ui", "always"),
        ("log.decorate", "full"),
        ("diff.renamelimit", "7"),
    ]:
        assert text(repo.memory_dir, "config", "--file", str(config), key) == value
    assert text(repo.memory_dir, "ls-tree", "--name-only", "HEAD", "café.md") == "café.md"


def test_a_written_case_keeps_its_shape(tmp_path: Path) -> None:
    spec = {
        "layout": "bare",
        "object_format": "sha256",
        "head": "tag",
        "config": {"core.quotePath": "false"},
        "commits": [{"files": {"a.md": "a\n"}}, {"files": {"link.md": {"gitlink": 1}}}],
        "missing_objects": ["HEAD:a.md"],
    }
    model = model_of(load_scenario(case_file(tmp_path, spec)))
    again = model_of(load_scenario(case_file(tmp_path, repo_spec(model), name="again")))
    assert again.shape == model.shape and again.head == model.head


def present(memory_dir: Path, oid: str) -> bool:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(memory_dir), "GIT_CONFIG_NOSYSTEM": "1"}
    done = subprocess.run(["git", "cat-file", "-e", oid], cwd=memory_dir, env=env, capture_output=True, check=False)
    return done.returncode == 0


def test_missing_objects_are_gone_from_the_object_database_and_nothing_else_is(tmp_path: Path) -> None:
    whole = build(tmp_path / "whole", {"commits": commits()})
    ids = {
        name: text(whole.memory_dir, "rev-parse", name)
        for name in ("HEAD", "HEAD:", "HEAD:notes", "HEAD:notes/a.md", "HEAD:system", "HEAD:system/human.md")
    }
    repo = build(tmp_path / "lost", {"commits": commits(), "missing_objects": ["HEAD:notes", "HEAD:system/human.md"]})
    gone = {name for name, oid in ids.items() if not present(repo.memory_dir, oid)}
    assert gone == {"HEAD:notes", "HEAD:system/human.md"}
    head = build(tmp_path / "head", {"commits": commits(), "missing_objects": ["HEAD", "HEAD:"]})
    assert {name for name, oid in ids.items() if not present(head.memory_dir, oid)} == {"HEAD", "HEAD:"}
    assert text(head.memory_dir, "rev-parse", "--verify", "HEAD") == ids["HEAD"]  # the ref still names it


# --- listings of an exact size -----------------------------------------------------------------------


def listed(repo: MaterializedRepo) -> int:
    return len(git(repo.memory_dir, "ls-tree", "-r", "--name-only", "HEAD"))


@pytest.mark.parametrize("size", [BUDGET - 1, BUDGET, BUDGET + 1, 5000, 2003, 76, 62])  # 62: the own files alone
def test_a_listing_is_exactly_the_size_asked(tmp_path: Path, size: int) -> None:
    repo = build(tmp_path, {"listing": {"bytes": size}, "commits": commits()})
    assert listed(repo) == size


@pytest.mark.parametrize(
    "extra",
    [
        {"config": {"core.quotePath": False}},
        {"memory_subdir": "notes", "commits": commits({**FILES, "notes/sub/é\t.md": "x\n"})},
        {"layout": "bare", "memory_subdir": "refs"},
        {"config": {"core.bare": True}, "memory_subdir": "notes"},
        {"layout": "git-dir", "head": "tree", "object_format": "sha256"},
        {"commits": commits({**FILES, 'q"uo\\te\x7f.md': "q\n", "tab\there.md": "t\n"})},
    ],
)
def test_a_listing_counts_what_git_prints_from_the_memory_directory(tmp_path: Path, extra: dict[str, Any]) -> None:
    repo = build(tmp_path, {"commits": commits(), **extra, "listing": {"bytes": BUDGET, "directory": "p"}})
    assert listed(repo) == BUDGET


@pytest.mark.parametrize("quoted", [True, False])
def test_names_are_printed_as_git_prints_them(tmp_path: Path, quoted: bool) -> None:
    names = [b"plain.md", "café.md".encode(), b"\xff.md", b"a\tb", b'q"\\', b"\x01\x7f", b"sp ace", "日本".encode()]
    repo = build(
        tmp_path,
        {
            "config": {"core.quotePath": quoted},
            "commits": [{"files": [{"path_base64": base64.b64encode(n).decode(), "content": "x"} for n in names]}],
        },
    )
    printed = git(repo.memory_dir, "ls-tree", "-r", "--name-only", "HEAD").split(b"\n")[:-1]
    assert sorted(printed) == sorted(printed_name(n, quoted) for n in names)


# --- refusals ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("repo", "at", "words"),
    [  # at: the key on the line the error names
        ({"layout": "shallow"}, "layout:", "repo/layout"),
        ({"kind": "no-git", "layout": "bare"}, "layout:", "layout: only for a git repository"),
        ({"kind": "missing", "config": {"core.quotePath": False}}, "config:", "config: only for a git repository"),
        ({"kind": "unborn", "head": "tag"}, "head:", "an unborn repository has no commit"),
        ({"kind": "unborn", "listing": {"bytes": 10}}, "listing:", "an unborn repository lists nothing"),
        (
            {"layout": "bare", "commits": commits(), "worktree": {"files": {"x.md": "x"}}},
            "worktree:",
            "has no work tree",
        ),
        ({"config": {"core.pager": "cat"}}, "core.pager:", "may run a program"),
        ({"config": {"alias.x": "!rm -rf /"}}, "alias.x:", "may run a program"),
        ({"config": {"diff.md.textconv": "cat"}}, "diff.md.textconv:", "diff drivers"),
        ({"config": {"quotepath": False}}, "quotepath:", "not a git config name"),
        ({"commits": [{"files": {"l.md": {"gitlink": 1}}}]}, "gitlink:", "only 0 commit(s) come before"),
        ({"object_format": "sha256", "commits": [{"files": {"l.md": {"gitlink": "1" * 40}}}]}, "gitlink:", "takes 64"),
        ({"kind": "no-git", "commits": [{"files": {"l.md": {"gitlink": "1" * 40}}}]}, "gitlink:", "a committed tree"),
        ({"commits": commits(), "listing": {"bytes": 20}}, "bytes:", "more than 20; raise `bytes`"),
        ({"commits": commits(), "listing": {"bytes": 75}}, "bytes:", "fewer than the shortest padding line"),
        ({"commits": commits(), "listing": {"bytes": 1000, "directory": "../up"}}, "directory:", "listing directory"),
        (
            {"commits": commits({"pad": "x"}), "listing": {"bytes": 1000}},
            "listing:",
            "clashes with the case's file 'pad'",
        ),
        ({"commits": commits(), "listing": {"bytes": 1000, "directory": "notes/a.md/x"}}, "directory:", "clashes"),
        ({"kind": "unborn", "missing_objects": ["HEAD"]}, "missing_objects:", "has no objects to lose"),
        ({"commits": commits(), "missing_objects": ["HEAD:nowhere"]}, "- HEAD:nowhere", "names no file or directory"),
        ({"commits": commits(), "missing_objects": ["HEAD:note"]}, "- HEAD:note", "names no file or directory"),
        ({"commits": commits(), "missing_objects": ["HEAD:../x"]}, "- HEAD:../x", "has a '..' component"),
        ({"commits": commits(), "missing_objects": ["notes"]}, "- notes", "does not match"),
    ],
)
def test_a_bad_shape_is_refused_at_its_line_with_the_fix(
    tmp_path: Path, repo: dict[str, Any], at: str, words: str
) -> None:
    error = refused(tmp_path, repo)
    assert words in str(error), str(error)
    assert error.line is not None
    assert error.path.read_text().split("\n")[error.line - 1].strip().startswith(at), str(error)


def test_a_lifecycle_case_has_no_shape_and_no_gitlink(tmp_path: Path) -> None:
    error = refused(tmp_path, {"layout": "bare", "commits": commits()}, kind="lifecycle")
    assert "not in a lifecycle case" in str(error) and "compile case" in str(error)
    error = refused(tmp_path, {"commits": [*commits(), {"files": {"l.md": {"gitlink": 1}}}]}, kind="lifecycle")
    assert "only for a committed tree of a compile case" in str(error)
