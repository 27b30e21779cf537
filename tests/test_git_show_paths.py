"""`CommittedHead.iter_paths` gives, for every listed path, exactly what upstream's `git show HEAD:<path>` gives.

Upstream reads each file with `git show HEAD:<path>` (issue 17, family 1); the port reads blobs through
cat-file where that is provably the same and runs git show elsewhere. These tests build repositories
with git itself, full of names made of revision syntax, and compare each read with git show run the
way upstream runs it (same directory, exit status decides, stdout kept).
"""

from __future__ import annotations

import random
import subprocess
from pathlib import Path

import pytest

from memfs_prompt.compiler import listed_memory_paths
from memfs_prompt.git_head import open_committed_head, revision_syntax_needs_git_show, work_tree_is_ambiguous

# Characters that mean something to git's revision parser or to pathspecs, plus ordinary ones.
ALPHABET = "ab.^-~@{}:*?[] !/"


def upstream_reads(memory_dir: Path, env: dict[str, str], paths: list[str]) -> list[bytes | None]:
    reads: list[bytes | None] = []
    for path in paths:
        done = subprocess.run(["git", "show", f"HEAD:{path}"], cwd=memory_dir, env=env, capture_output=True)
        reads.append(done.stdout if done.returncode == 0 else None)
    return reads


def port_reads(memory_dir: Path, env: dict[str, str]) -> tuple[list[str], list[bytes | None]]:
    head = open_committed_head(memory_dir, env)
    try:
        paths = listed_memory_paths(head)
        return paths, head.read_paths(paths)
    finally:
        head.close()


def random_names(seed: int, count: int) -> list[str]:
    rng = random.Random(seed)
    names: set[str] = set()
    while len(names) < count:
        stem = "".join(rng.choice(ALPHABET) for _ in range(rng.randint(1, 7)))
        name = f"{stem}.md"
        parts = name.split("/")
        if any(p in ("", ".", "..", ".git") for p in parts):
            continue
        names.add(name)
    # a file and a directory may not share a name
    files = sorted(names)
    dirs = {"/".join(n.split("/")[:i]) for n in files for i in range(1, n.count("/") + 1)}
    return [n for n in files if n not in dirs]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_every_read_is_what_git_show_prints(make_repo, git_env, seed: int) -> None:
    names = random_names(seed, 120)
    repo = make_repo({name: f"{name}\n" for name in names} | {"a/x.md": "a\n", "b.md": "b\n"})
    paths, reads = port_reads(repo.path, git_env)
    assert len(paths) > 50
    assert reads == upstream_reads(repo.path, git_env, paths)


@pytest.mark.parametrize("seed", [4, 5])
def test_every_read_is_what_git_show_prints_below_the_top(make_repo, git_env, seed: int) -> None:
    names = random_names(seed, 80)
    files = {f"mem/{name}": f"mem {name}\n" for name in names} | {name: f"top {name}\n" for name in names[::3]}
    repo = make_repo(files)
    paths, reads = port_reads(repo.path / "mem", git_env)
    assert reads == upstream_reads(repo.path / "mem", git_env, paths)


def test_a_head_entry_in_the_work_tree_is_asked_of_git(make_repo, git_env) -> None:
    repo = make_repo({"a.md": "a\n", " lead.md": "lead\n", "b.md": "b\n"})
    assert not work_tree_is_ambiguous(repo.path)
    repo.write("HEAD:a.md", "untracked\n")
    repo.write("HEAD:lead.md", "untracked\n")
    assert work_tree_is_ambiguous(repo.path)
    paths, reads = port_reads(repo.path, git_env)
    assert dict(zip(paths, reads, strict=True)) == {"a.md": None, "lead.md": b"", "b.md": b"b\n"}
    assert reads == upstream_reads(repo.path, git_env, paths)


def test_a_first_component_past_name_max_is_asked_of_git(make_repo, git_env) -> None:
    long, longest = "m" * 247 + ".md", "n" * 248 + ".md"  # "HEAD:" + 250 bytes fits NAME_MAX, + 251 does not
    repo = make_repo({long: "250\n", longest: "251\n", f"d/{longest}": "deep\n"})
    assert not revision_syntax_needs_git_show(long) and revision_syntax_needs_git_show(longest)
    paths, reads = port_reads(repo.path, git_env)
    assert dict(zip(paths, reads, strict=True)) == {long: b"250\n", longest: None, f"d/{longest}": b"deep\n"}
    assert reads == upstream_reads(repo.path, git_env, paths)


def path_of_length(length: int, letter: str) -> str:
    """A path of exactly `length` bytes ending in `.md`: directories of 200 bytes, then the rest as the file name."""
    parts = []
    while length > 250:
        parts.append(letter * 200)
        length -= 201
    return "/".join([*parts, letter * (length - 3) + ".md"])


def test_a_path_git_show_cannot_stat_is_dropped_and_one_it_can_is_read(tmp_path: Path, make_repo, git_env) -> None:
    """In a work tree git show lstat()s `HEAD:<path>` relative to the top, so `HEAD:` + the path + its NUL must fit
    PATH_MAX (4096): a path of 4091 bytes makes git show die, wherever the repository is. The port's guard
    (`revision_syntax_needs_git_show`) counts the memory directory's absolute path too, so it hands git show every
    path from 4090 - |memory dir| bytes on; its own boundary is asked here as well. Each read is git show's."""
    guard = 4096 - 6 - len(str(tmp_path / "memory").encode())  # |memory dir| + |path| + 6 == 4096
    lengths = (guard - 1, guard, 4090, 4091)
    paths = {length: path_of_length(length, letter) for length, letter in zip(lengths, "abcd", strict=True)}
    repo = make_repo({"a.md": "a\n"})  # the long paths go in by plumbing: the work tree could not hold them
    for length, path in paths.items():
        blob = repo.git("hash-object", "-w", "--stdin", input=f"{length}\n".encode()).decode().strip()
        repo.git("update-index", "--add", "--cacheinfo", f"100644,{blob},{path}")
    repo.git("commit", "-q", "-m", "long paths")
    paths_read, reads = port_reads(repo.path, git_env)
    assert reads == upstream_reads(repo.path, git_env, paths_read)
    read = dict(zip(paths_read, reads, strict=True))
    assert [read[paths[length]] for length in lengths] == [b"%d\n" % n for n in lengths[:3]] + [None]


@pytest.mark.parametrize(
    ("path", "slow"),
    [
        ("a.md", False),
        ("a~1.md", False),
        ("a@{1}.md", False),
        ("x:y.md", False),
        ("a^{tree}.md", False),
        ("a^@b.md", False),
        ("a..b.md", True),
        ("a^-b.md", True),
        ("./x.md", True),
        ("../x.md", True),
    ],
)
def test_revision_syntax_that_changes_the_argument(path: str, slow: bool) -> None:
    assert revision_syntax_needs_git_show(path) is slow


def test_trees_and_gitlinks_read_as_git_show_prints_them_with_the_repository_config(make_repo, git_env) -> None:
    repo = make_repo({"d.md/x.md": "x\n", "d.md ": "trailing space\n", "plain.md": "p\n"})
    first = repo.head()
    repo.git("update-index", "--add", "--cacheinfo", f"160000,{first},link.md")  # a commit in this repository
    repo.git("update-index", "--add", "--cacheinfo", f"160000,{'1' * 40},gone.md")  # a commit that is not
    repo.git("commit", "-q", "-m", "gitlinks")
    repo.git("config", "color.ui", "always")
    repo.git("config", "log.decorate", "full")
    paths, reads = port_reads(repo.path, git_env)
    assert paths.count("d.md") == 1  # `d.md `, trimmed, names the directory d.md: a tree
    assert reads == upstream_reads(repo.path, git_env, paths)
    read = dict(zip(paths, reads, strict=True))
    assert read["d.md"] is not None and b"\x1b[" in read["d.md"]  # the tree header is coloured, as git prints it
    assert read["link.md"] is not None and read["link.md"].startswith(b"\x1b[33mcommit " + first.encode())
    assert read["gone.md"] is None


# --- repository shapes (issue 17, family 2): what upstream's three git commands say, in each shape -------


def upstream_view(memory_dir: Path, env: dict[str, str]) -> tuple[str | None, list[bytes], list[bytes | None]]:
    """Upstream's own commands: `rev-parse --verify HEAD`, `ls-tree -r --name-only HEAD`, `git show` per path."""
    rev = subprocess.run(["git", "rev-parse", "--verify", "HEAD"], cwd=memory_dir, env=env, capture_output=True)
    revision = rev.stdout.decode().strip() if rev.returncode == 0 and rev.stdout.strip() else None
    listing = subprocess.run(
        ["git", "ls-tree", "-r", "--name-only", "HEAD"], cwd=memory_dir, env=env, capture_output=True
    )
    lines = listing.stdout.split(b"\n")[:-1] if listing.returncode == 0 else []
    paths = [line.decode("utf-8", "replace").strip() for line in lines]
    return revision, lines, upstream_reads(memory_dir, env, [p for p in paths if p.endswith(".md")])


def port_view(memory_dir: Path, env: dict[str, str]) -> tuple[str | None, list[bytes], list[bytes | None]]:
    head = open_committed_head(memory_dir, env)
    try:
        paths = listed_memory_paths(head)
        return head.revision, [e.listed for e in head.entries], head.read_paths(paths)
    finally:
        head.close()


def shapes(make_repo, git_env, tmp_path: Path) -> dict[str, Path]:
    files = {"system/persona.md": "me\n", "system/human.md": "h\n", "notes/a.md": "a\n", "caf\u00e9.md": "e\n"}
    src = make_repo(files, name="src")
    git = lambda *a, cwd=tmp_path: subprocess.run(["git", *a], cwd=cwd, env=git_env, check=True, capture_output=True)  # noqa: E731
    git("clone", "-q", "--bare", str(src.path), "bare.git")
    git("clone", "-q", str(src.path), "clone")
    git("init", "-q", "--object-format=sha256", "sha")
    for name, text in files.items():
        (tmp_path / "sha" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "sha" / name).write_text(text)
    git("add", "-A", cwd=tmp_path / "sha")
    git("commit", "-q", "-m", "sha-256", cwd=tmp_path / "sha")
    tagged = make_repo(files, name="tagged")
    tagged.git("tag", "-a", "v1", "-m", "tag")
    (tagged.path / ".git" / "HEAD").write_text(tagged.git("rev-parse", "v1").decode())
    tree = make_repo(files, name="tree")
    (tree.path / ".git" / "HEAD").write_text(tree.git("rev-parse", "HEAD^{tree}").decode())
    raw = make_repo(files, name="raw")
    raw.git("config", "core.quotePath", "false")
    return {
        "bare": tmp_path / "bare.git",
        "git-dir": tmp_path / "clone" / ".git",
        "inside-git-dir": tmp_path / "bare.git" / "refs",
        "sha256": tmp_path / "sha",
        "tag-head": tagged.path,
        "tree-head": tree.path,
        "quote-path-false": raw.path,
    }


def test_every_shape_reads_as_upstream_s_git_commands(make_repo, git_env, tmp_path: Path) -> None:
    for name, memory_dir in shapes(make_repo, git_env, tmp_path).items():
        port, upstream = port_view(memory_dir, git_env), upstream_view(memory_dir, git_env)
        assert port == upstream, name
        assert port[0] is not None and len(port[2]) >= 3, name  # a revision and the memory, in every shape
