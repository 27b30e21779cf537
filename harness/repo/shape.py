"""Building a repository's shape: its layout on disk, its object format, what HEAD holds, its own config.

Owns where the git directory and the memory directory are for each `layout`:

    work-tree         <dest>/memory is a work tree, its git directory <dest>/memory/.git (the default)
    bare              <dest>/memory is a bare repository (`git init --bare`)
    git-dir           <dest>/memory is a work tree; the memory directory is its .git directory
    separate-git-dir  <dest>/memory is a work tree whose `.git` file says `gitdir: ../memory.git`

and what HEAD holds after the commits (`head`: the branch, the commit detached, an annotated tag of
it, a tag of that tag, or its tree), writing the case's `config` into the repository's own
config file, and deleting the objects `missing_objects` names once the rest is built. The user's
global and system configuration stay out (repo.gitenv).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from harness.core.repomodel import RepoShape
from harness.repo.objects import ObjectWriter

LAYOUTS = ("work-tree", "bare", "git-dir", "separate-git-dir")
HEADS = ("branch", "detached", "tag", "tag-of-tag", "tree")
BRANCH = "main"


def git_dir_of(repo_dir: Path, layout: str) -> Path:
    """The git directory of the repository built at repo_dir (<dest>/memory)."""
    if layout == "bare":
        return repo_dir
    if layout == "separate-git-dir":
        return repo_dir.parent / (repo_dir.name + ".git")
    return repo_dir / ".git"


def memory_base(repo_dir: Path, layout: str) -> Path:
    """The directory `memory_subdir` is relative to (and the memory directory without one)."""
    return repo_dir / ".git" if layout == "git-dir" else repo_dir


def has_work_tree(layout: str) -> bool:
    return layout != "bare"


def init(repo_dir: Path, shape: RepoShape, env: dict[str, str]) -> Path:
    """`git init` the repository in its layout and object format (no template: no sample hooks to copy);
    return its git directory."""
    git_dir = git_dir_of(repo_dir, shape.layout)
    if shape.layout == "work-tree" and shape.object_format == "sha1":
        return _init_plain(git_dir)
    args = ["git", "init", "-q", "--template=", f"--initial-branch={BRANCH}", f"--object-format={shape.object_format}"]
    if shape.layout == "bare":
        args.append("--bare")
    elif shape.layout == "separate-git-dir":
        args.append(f"--separate-git-dir={git_dir}")
    subprocess.run([*args, str(repo_dir)], env=env, check=True, capture_output=True)
    if shape.layout == "separate-git-dir":  # git writes an absolute path; the build is renamed into place after
        (repo_dir / ".git").write_text(f"gitdir: ../{git_dir.name}\n")
    return git_dir


# What `git init -q --template= --initial-branch=main` (git 2.39, isolated environment, a Linux file system:
# symlinks, case-sensitive) writes for a plain work tree: the fuzzer builds thousands of repositories, and a
# git process per repository is a tenth of its time (tests/test_repo_init.py compares the two).
PLAIN_CONFIG = "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = true\n"


def _init_plain(git_dir: Path) -> Path:
    """The files `git init` writes for a plain work tree, written directly; `filemode` probed as git probes
    it (a file system that drops executable bits gets `false`)."""
    for directory in ("objects/info", "objects/pack", "refs/heads", "refs/tags"):
        (git_dir / directory).mkdir(parents=True)
    (git_dir / "HEAD").write_text(f"ref: refs/heads/{BRANCH}\n")
    config = git_dir / "config"
    config.write_text(PLAIN_CONFIG)
    mode = config.stat().st_mode
    config.chmod(mode ^ 0o100)
    if config.stat().st_mode == mode:
        config.write_text(PLAIN_CONFIG.replace("filemode = true", "filemode = false"))
    config.chmod(mode)
    return git_dir


def set_head(writer: ObjectWriter, shape: RepoShape, commit: str) -> None:
    """Point refs/heads/main at the last commit and HEAD at what `shape.head` says."""
    git_dir = writer.git_dir
    (git_dir / "refs" / "heads" / BRANCH).write_text(commit + "\n")
    if shape.head == "branch":
        return
    target = commit
    if shape.head in ("tag", "tag-of-tag"):
        target = writer.tag(commit, "commit", "v1")
        (git_dir / "refs" / "tags").mkdir(exist_ok=True)
        (git_dir / "refs" / "tags" / "v1").write_text(target + "\n")
        if shape.head == "tag-of-tag":
            target = writer.tag(target, "tag", "v2")
            (git_dir / "refs" / "tags" / "v2").write_text(target + "\n")
    elif shape.head == "tree":
        target = writer.trees[commit]
    (git_dir / "HEAD").write_text(target + "\n")


def remove_objects(writer: ObjectWriter, commit: str, names: tuple[str, ...], env: dict[str, str]) -> None:
    """Delete objects of the last commit from the object database, as a lost or pruned object leaves a
    repository: `HEAD` is the commit itself, `HEAD:` its root tree, `HEAD:<path>` the tree or blob at that path
    (a blob shared by several paths is gone for each of them). All are named before any is deleted."""
    ids = []
    for name in names:
        if name == "HEAD":
            ids.append(commit)
        elif name == "HEAD:":
            ids.append(writer.trees[commit])
        else:
            named = subprocess.run(
                [
                    "git",
                    f"--git-dir={writer.git_dir}",
                    "rev-parse",
                    "--verify",
                    "--quiet",
                    f"{commit}:{name.removeprefix('HEAD:')}",
                ],
                env=env,
                check=True,
                capture_output=True,
            )
            ids.append(named.stdout.decode("ascii").strip())
    for oid in dict.fromkeys(ids):
        (writer.git_dir / "objects" / oid[:2] / oid[2:]).unlink()


def branch_tip(repo_dir: Path, layout: str) -> str | None:
    """The commit refs/heads/main names (the last commit of the case), None when there is none."""
    ref = git_dir_of(repo_dir, layout) / "refs" / "heads" / BRANCH
    return ref.read_text().strip() if ref.exists() else None


def write_config(git_dir: Path, config: tuple[tuple[str, str], ...], env: dict[str, str]) -> None:
    """Each (key, value) into the repository's own config file, in order (last: `core.bare` may follow)."""
    for key, value in config:
        subprocess.run(
            ["git", "config", "--file", str(git_dir / "config"), key, value], env=env, check=True, capture_output=True
        )
