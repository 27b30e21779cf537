"""Materializing a scenario's repository: real git objects with deterministic authors and dates.

Objects are written straight into the object database as loose objects (no `git add`, so no
autocrlf, filters, hooks or name restrictions of the porcelain; and about 15 times faster than
GitPython's LooseObjectDB.store, which matters to fuzzing); names are raw bytes; trees are
sorted the way git sorts them. Repositories are cached by the digest of their spec.
"""

from __future__ import annotations

import base64
import hashlib
import os
import random
import shutil
import subprocess
import tempfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .gitenv import isolated_env
from .scenario import Scenario

AUTHOR = b"Conformance Bot <bot@letta-conformance.invalid>"
EPOCH = 1767225600  # 2026-01-01T00:00:00Z; commit n is dated EPOCH + n minutes
MODE_FILE, MODE_EXEC, MODE_LINK, MODE_TREE = b"100644", b"100755", b"120000", b"40000"


@dataclass(frozen=True)
class Blob:
    mode: bytes
    data: bytes


@dataclass(frozen=True)
class MaterializedRepo:
    root: Path  # the workspace holding the repository
    memory_dir: Path  # the directory the compilers are pointed at
    head: str | None


def file_bytes(content: str | dict[str, Any]) -> Blob:
    """The exact bytes (and mode) a scenario's file content stands for."""
    if isinstance(content, str):
        return Blob(MODE_FILE, content.encode("utf-8"))
    if "symlink" in content:
        return Blob(MODE_LINK, content["symlink"].encode("utf-8"))
    if "symlink_base64" in content:
        return Blob(MODE_LINK, base64.b64decode(content["symlink_base64"]))
    mode = MODE_EXEC if content.get("executable") else MODE_FILE
    if "base64" in content:
        return Blob(mode, base64.b64decode(content["base64"]))
    text = content["text"] * content.get("repeat", 1)
    text = apply_newlines(text, content.get("newlines", "lf"))
    data = text.encode("utf-8")
    if content.get("bom"):
        data = b"\xef\xbb\xbf" + data
    return Blob(mode, data)


def apply_newlines(text: str, style: str) -> str:
    """Rewrite LF line ends as CRLF, CR, or a CRLF/LF/CR rotation (mixed)."""
    if style == "lf":
        return text
    if style == "crlf":
        return text.replace("\n", "\r\n")
    if style == "cr":
        return text.replace("\n", "\r")
    endings = ["\r\n", "\n", "\r"]
    parts = text.split("\n")
    return "".join(p + (endings[i % 3] if i < len(parts) - 1 else "") for i, p in enumerate(parts))


def file_entries(files: dict[str, Any] | list[dict[str, Any]]) -> list[tuple[bytes, Blob]]:
    if isinstance(files, dict):
        return [(name.encode("utf-8"), file_bytes(content)) for name, content in files.items()]
    out = []
    for entry in files:
        name = base64.b64decode(entry["path_base64"]) if "path_base64" in entry else entry["path"].encode("utf-8")
        out.append((name, file_bytes(entry["content"])))
    return out


def path_bytes(path: str | dict[str, str]) -> bytes:
    """A `delete` entry's bytes: text as UTF-8, or `{path_base64}`."""
    return base64.b64decode(path["path_base64"]) if isinstance(path, dict) else path.encode("utf-8")


def commit_states(spec: dict[str, Any]) -> list[dict[bytes, Blob]]:
    """The tree after each commit of a `git` repo spec (a generated tree lands in the first commit)."""
    state: dict[bytes, Blob] = {}
    states = []
    for index, commit in enumerate(spec.get("commits") or [{"message": "generated"}]):
        state = next_state(state, commit)
        if index == 0 and spec.get("generate"):
            state.update(generated_files(spec["generate"]))
        states.append(state)
    return states


def generated_files(spec: dict[str, Any]) -> dict[bytes, Blob]:
    """A seeded tree of `files` Markdown files over `depth` directory levels."""
    rng = random.Random(spec["seed"])
    names = spec.get("name_alphabet", "abcdefghijklmnopqrstuvwxyz0123456789-_")
    text = spec.get("content_alphabet", "abcdefghijklmnopqrstuvwxyz ")
    roots = spec.get("roots", ["system", "", "notes", "skills"])
    depth = spec.get("depth", 2)
    out: dict[bytes, Blob] = {}
    while len(out) < spec["files"]:
        parts = [rng.choice(roots)] if roots else []
        parts += ["".join(rng.choices(names, k=rng.randint(1, 6))) for _ in range(rng.randint(0, depth))]
        parts.append("".join(rng.choices(names, k=rng.randint(1, 10))) + ".md")
        path = "/".join(p for p in parts if p)
        body = "".join(rng.choices(text, k=rng.randint(0, 120)))
        description = "".join(rng.choices(text, k=rng.randint(0, 30)))
        out[path.encode("utf-8")] = Blob(MODE_FILE, f"---\ndescription: {description}\n---\n{body}\n".encode())
    return out


def _tree_sort_key(item: tuple[bytes, Any]) -> bytes:
    name, value = item
    return name + (b"/" if isinstance(value, dict) else b"")


def _store(git_dir: Path, kind: bytes, data: bytes) -> bytes:
    """Write one loose object (zlib of `<kind> <size>\\0<data>`); return its binary sha."""
    raw = kind + b" " + str(len(data)).encode("ascii") + b"\0" + data
    sha = hashlib.sha1(raw).digest()
    path = git_dir / "objects" / sha[:1].hex() / sha[1:].hex()
    if not path.exists():
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(zlib.compress(raw, 1))
    return sha


def _write_tree(repo: Path, files: dict[bytes, Blob]) -> bytes:
    """Store blobs and nested trees; return the root tree's binary sha."""
    nested: dict[bytes, Any] = {}
    for path, blob in files.items():
        parts = path.split(b"/")
        node = nested
        for part in parts[:-1]:
            node = node.setdefault(part, {})
        node[parts[-1]] = blob

    def store(node: dict[bytes, Any]) -> bytes:
        body = bytearray()
        for name, value in sorted(node.items(), key=_tree_sort_key):
            if isinstance(value, dict):
                body += MODE_TREE + b" " + name + b"\0" + store(value)
            else:
                sha = _store(repo, b"blob", value.data)
                body += value.mode + b" " + name + b"\0" + sha
        return _store(repo, b"tree", bytes(body))

    return store(nested)


def _write_commit(repo: Path, tree: bytes, parent: str | None, commit: dict[str, Any], index: int) -> str:
    default = AUTHOR + f" {EPOCH + 60 * index} +0000".encode()
    author = commit["author"].encode("utf-8") if "author" in commit else default
    committer = commit["committer"].encode("utf-8") if "committer" in commit else default
    message = commit.get("message", f"commit {index + 1}")
    lines = [b"tree " + tree.hex().encode()]
    if parent:
        lines.append(b"parent " + parent.encode())
    lines += [b"author " + author, b"committer " + committer, b"", message.encode("utf-8")]
    data = b"\n".join(lines) + b"\n"
    return _store(repo, b"commit", data).hex()


def _write_worktree(root: Path, files: dict[bytes, Blob]) -> None:
    for path, blob in files.items():
        target = Path(os.fsdecode(root)) / os.fsdecode(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.is_symlink() or target.exists():
            target.unlink()
        if blob.mode == MODE_LINK:
            os.symlink(os.fsdecode(blob.data), target)
        else:
            target.write_bytes(blob.data)
            target.chmod(0o755 if blob.mode == MODE_EXEC else 0o644)


def next_state(state: dict[bytes, Blob], commit: dict[str, Any]) -> dict[bytes, Blob]:
    """The committed files after one scenario commit (renames, then deletions, then files)."""
    state = dict(state)
    for old, new in commit.get("rename", {}).items():
        state[new.encode("utf-8")] = state.pop(old.encode("utf-8"))
    for gone in commit.get("delete", ()):
        state.pop(path_bytes(gone), None)
    state.update(file_entries(commit.get("files", {})))
    return state


def committed_state(spec: dict[str, Any]) -> dict[bytes, Blob]:
    """The files at HEAD of a scenario's repo spec (kind git)."""
    return commit_states(spec)[-1]


def append_commit(repo_dir: Path, state: dict[bytes, Blob], commit: dict[str, Any], index: int) -> tuple[dict, str]:
    """Commit one more scenario commit on top of HEAD (a lifecycle step); commit `index` sets its date."""
    repo = repo_dir / ".git"
    ref = repo / "refs" / "heads" / "main"
    state = next_state(state, commit)
    head = _write_commit(repo, _write_tree(repo, state), ref.read_text().strip(), commit, index)
    ref.write_text(head + "\n")
    _write_worktree(repo_dir, state)
    return state, head


def memory_dir_of(repo_dir: Path, spec: dict[str, Any]) -> Path:
    """The directory compilers are pointed at: the repository, or its `memory_subdir`."""
    return repo_dir / spec["memory_subdir"] if spec.get("memory_subdir") else repo_dir


def build_repo(scenario: Scenario, dest: Path, env: dict[str, str]) -> MaterializedRepo:
    """Build the scenario's repository at dest/memory (dest must be empty)."""
    spec = scenario.repo
    kind = spec.get("kind", "git")
    repo_dir = dest / "memory"
    memory_dir = memory_dir_of(repo_dir, spec)
    if kind == "missing":
        dest.mkdir(parents=True, exist_ok=True)
        return MaterializedRepo(dest, memory_dir, None)
    repo_dir.mkdir(parents=True)
    state: dict[bytes, Blob] = {}
    for commit in spec.get("commits", ()):
        state.update(file_entries(commit.get("files", {})))
    if spec.get("generate"):
        state.update(generated_files(spec["generate"]))
    if kind == "no-git":
        _write_worktree(repo_dir, state)
        memory_dir.mkdir(parents=True, exist_ok=True)
        return MaterializedRepo(dest, memory_dir, None)
    subprocess.run(
        ["git", "init", "-q", "--template=", "--initial-branch=main", str(repo_dir)],
        env=env,
        check=True,
        capture_output=True,
    )  # no template: no sample hooks to copy (and delete) for every repository
    repo = repo_dir / ".git"
    head = None
    if kind == "git":
        commits = spec.get("commits") or [{"message": "generated"}]
        states = commit_states(spec)
        for index, (commit, tree_state) in enumerate(zip(commits, states, strict=True)):
            head = _write_commit(repo, _write_tree(repo, tree_state), head, commit, index)
        assert head is not None
        state = states[-1]
        (repo_dir / ".git" / "refs" / "heads" / "main").write_text(head + "\n")
        subprocess.run(["git", "read-tree", "HEAD"], cwd=repo_dir, env=env, check=True, capture_output=True)
    _write_worktree(repo_dir, state)
    _apply_worktree_noise(repo_dir, spec.get("worktree") or {}, env)
    memory_dir.mkdir(parents=True, exist_ok=True)
    return MaterializedRepo(dest, memory_dir, head)


def _apply_worktree_noise(repo_dir: Path, noise: dict[str, Any], env: dict[str, str]) -> None:
    """Uncommitted edits, deletions and untracked files: compilers read HEAD, so they must not matter."""
    entries = dict(file_entries(noise.get("files", {})))
    _write_worktree(repo_dir, entries)
    for gone in noise.get("delete", ()):
        target = repo_dir / gone
        if target.is_symlink() or target.is_file():
            target.unlink()
    if noise.get("stage") and (entries or noise.get("delete")):
        subprocess.run(["git", "add", "-A"], cwd=repo_dir, env=env, check=True, capture_output=True)


def materialize_repo(scenario: Scenario, cache_root: Path) -> MaterializedRepo:
    """The scenario's repository, built once per spec digest under cache_root and reused after.

    Safe when several threads or processes (parallel cases, CI shards on one machine) want
    the same repository: each builds in its own staging directory, marked complete before
    it is renamed into place, and the first rename wins.
    """
    dest = cache_root / "repos" / scenario.repo_digest()
    marker = dest / ".complete"
    env = isolated_env(cache_root / "home", ceiling=cache_root / "repos")
    if not marker.exists():
        if dest.exists():
            shutil.rmtree(dest, ignore_errors=True)  # a build interrupted part-way
        dest.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".build-", dir=dest.parent))
        try:
            build_repo(scenario, staging, env)
            (staging / ".complete").write_text("ok\n")
            try:
                staging.rename(dest)
            except OSError:
                if not marker.exists():
                    raise
                shutil.rmtree(staging, ignore_errors=True)  # another worker built it first
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
    repo_dir = dest / "memory"
    memory_dir = memory_dir_of(repo_dir, scenario.repo)
    head_file = repo_dir / ".git" / "refs" / "heads" / "main"
    head = head_file.read_text().strip() if head_file.exists() else None
    return MaterializedRepo(dest, memory_dir, head)
