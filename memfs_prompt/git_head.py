"""Reading a memory repository's committed HEAD: one `git cat-file --batch` process per compile.

Upstream runs `git rev-parse --verify HEAD`, `git ls-tree -r --name-only HEAD` and one
`git show HEAD:<path>` per file, from inside the memory directory. This module gets the
same answers from a single batch process: the HEAD commit, the trees under the
directory (ls-tree lists relative to the working directory), and the blobs.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class TreeEntry:
    """One non-tree entry of `git ls-tree -r` (blob, symlink or gitlink), path as raw bytes."""

    path: bytes
    mode: bytes
    oid: str


@dataclass(frozen=True)
class GitObject:
    oid: str
    type: str
    content: bytes


class CatFileBatch:
    """A `git cat-file --batch` process answering object requests in order."""

    def __init__(self, cwd: Path, env: Mapping[str, str] | None = None) -> None:
        self._proc = subprocess.Popen(
            ["git", "cat-file", "--batch"],
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )

    def read_many(self, names: list[bytes]) -> list[GitObject | None]:
        """The object for each name, None where git says `missing`.

        Requests are written from a thread so a long list cannot deadlock on full pipes.
        """
        assert self._proc.stdin is not None and self._proc.stdout is not None
        payload = b"".join(name + b"\n" for name in names)
        stdin = self._proc.stdin

        def write() -> None:
            try:
                stdin.write(payload)
                stdin.flush()
            except BrokenPipeError:
                pass

        writer = threading.Thread(target=write, daemon=True)
        writer.start()
        answers: list[GitObject | None] = []
        out = self._proc.stdout
        for _ in names:
            header = out.readline()
            if not header:
                raise OSError("git cat-file --batch ended early")
            line = header.rstrip(b"\n")
            if line.endswith((b" missing", b" ambiguous")):  # the name itself may hold spaces
                answers.append(None)
                continue
            parts = line.split(b" ")
            size = int(parts[2])
            content = out.read(size)
            out.read(1)  # the newline after the content
            answers.append(GitObject(parts[0].decode("ascii"), parts[1].decode("ascii"), content))
        writer.join()
        return answers

    def close(self) -> int:
        for stream in (self._proc.stdin, self._proc.stdout):
            with contextlib.suppress(OSError):  # git may have exited already (not a repository)
                if stream:
                    stream.close()
        return self._proc.wait()


def _tree_entries(content: bytes) -> list[tuple[bytes, bytes, str]]:
    """Parse a raw tree object into (mode, name, hex oid), in stored (ls-tree) order."""
    entries = []
    i = 0
    while i < len(content):
        space = content.index(b" ", i)
        nul = content.index(b"\0", space)
        mode = content[i:space]
        name = content[space + 1 : nul]
        oid = content[nul + 1 : nul + 21].hex()
        entries.append((mode, name, oid))
        i = nul + 21
    return entries


@dataclass
class CommittedHead:
    """What upstream learns from HEAD: the revision, the recursive listing, and a way to read paths."""

    revision: str | None
    entries: list[TreeEntry]
    batch: CatFileBatch | None

    def read_paths(self, paths: list[str]) -> list[bytes | None]:
        """Contents of `git show HEAD:<path>` for each path; None where git show would fail."""
        if self.batch is None or not paths:
            return [None] * len(paths)
        answers = self.batch.read_many([b"HEAD:" + p.encode("utf-8") for p in paths])
        results: list[bytes | None] = []
        for path, answer in zip(paths, answers, strict=True):
            if answer is None:
                results.append(None)
            elif answer.type == "blob":
                results.append(answer.content)
            elif answer.type == "tree":
                results.append(git_show_tree_text(path, answer.content))
            else:
                results.append(None)
        return results

    def close(self) -> None:
        if self.batch is not None:
            self.batch.close()
            self.batch = None


def git_show_tree_text(path: str, tree: bytes) -> bytes:
    """What `git show HEAD:<dir>` prints for a tree: a header and one name per line, `/` after subtrees."""
    lines = [b"tree HEAD:" + path.encode("utf-8"), b""]
    for mode, name, _ in _tree_entries(tree):
        lines.append(name + (b"/" if mode == b"40000" else b""))
    return b"\n".join(lines) + b"\n"


def open_committed_head(memory_dir: Path, env: Mapping[str, str] | None = None) -> CommittedHead:
    """Read HEAD as upstream sees it from `memory_dir`; revision None when there is none.

    `env` is the environment git runs under (default: this process's), as upstream inherits its own.
    """
    if not os.path.exists(memory_dir):
        return CommittedHead(None, [], None)
    try:
        batch = CatFileBatch(memory_dir, env)
    except OSError:  # not a directory, git missing
        return CommittedHead(None, [], None)
    try:
        head, subtree = batch.read_many([b"HEAD", b"HEAD:./"])
    except OSError:  # not a repository: git exits before answering
        batch.close()
        return CommittedHead(None, [], None)
    if head is None or head.type != "commit":
        batch.close()
        return CommittedHead(None, [], None)
    entries: list[TreeEntry] = []
    if subtree is not None and subtree.type == "tree":
        entries = _walk(batch, subtree.content)
    return CommittedHead(head.oid, entries, batch)


def _walk(batch: CatFileBatch, root: bytes) -> list[TreeEntry]:
    """Recursive listing in `ls-tree -r` order (depth first, stored order), one batch round per level."""
    # Fetch every subtree level by level, then emit depth-first from the cache.
    trees: dict[str, bytes] = {}
    pending = [oid for mode, _, oid in _tree_entries(root) if mode == b"40000"]
    while pending:
        wanted = [oid for oid in dict.fromkeys(pending) if oid not in trees]
        answers = batch.read_many([oid.encode("ascii") for oid in wanted])
        pending = []
        for oid, answer in zip(wanted, answers, strict=True):
            content = answer.content if answer else b""
            trees[oid] = content
            pending.extend(o for mode, _, o in _tree_entries(content) if mode == b"40000")

    entries: list[TreeEntry] = []

    def emit(content: bytes, prefix: bytes) -> None:
        for mode, name, oid in _tree_entries(content):
            if mode == b"40000":
                emit(trees[oid], prefix + name + b"/")
            else:
                entries.append(TreeEntry(prefix + name, mode, oid))

    emit(root, b"")
    return entries


def committed_revision(memory_dir: Path, env: Mapping[str, str] | None = None) -> str | None:
    """Upstream `getCommittedMemfsRevision`: `git rev-parse --verify HEAD` in `memory_dir`, None if none."""
    if not os.path.isdir(memory_dir):
        return None
    result = subprocess.run(
        ["git", "rev-parse", "--verify", "HEAD"],
        cwd=memory_dir,
        env=dict(env) if env is not None else None,
        capture_output=True,
    )
    revision = result.stdout.decode("utf-8", "replace").strip()
    return revision if result.returncode == 0 and revision else None
