"""Reading a memory repository's committed HEAD: two git processes per compile, whatever its size.

Upstream runs `git rev-parse --verify HEAD`, `git ls-tree -r --name-only HEAD` and one
`git show HEAD:<path>` per file, from inside the memory directory. This module gets the
same answers from `git ls-tree -r -z HEAD` (the same listing, relative to the directory,
with raw names) and one `git cat-file --batch` process (the HEAD commit and the blobs),
started side by side. Measured (benchmarks/, issue 9): listing with ls-tree costs git half
the CPU of walking the trees through cat-file, and Python a tenth.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import threading
from collections.abc import Iterator, Mapping
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


USAGE_ERROR = 129  # git's exit code for an unknown option
_git_lacks_batch_command = False  # learnt once per process: git before 2.36


class CatFileBatch:
    """A `git cat-file` process answering object requests in order, `--batch` style.

    With `--batch-command --buffer` (git 2.36+) git writes each round's answers in one go at
    `flush` instead of one write per object; with an older git, plain `--batch`.
    """

    def __init__(self, cwd: Path, env: Mapping[str, str] | None = None, *, command_mode: bool | None = None) -> None:
        self.command_mode = not _git_lacks_batch_command if command_mode is None else command_mode
        mode = ["--batch-command", "--buffer"] if self.command_mode else ["--batch"]
        self._proc = subprocess.Popen(
            ["git", "cat-file", *mode],
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            bufsize=1 << 16,  # fewer reads when git is ahead
        )

    def read_many(self, names: list[bytes]) -> list[GitObject | None]:
        """The object for each name, None where git says `missing`."""
        return list(self.iter_many(names))

    def iter_many(self, names: list[bytes]) -> Iterator[GitObject | None]:
        """The object for each name as git answers it, None where git says `missing`.

        Requests are written from a thread so a long list cannot deadlock on full pipes, and
        the caller can work on one answer while git looks up the next.
        """
        assert self._proc.stdin is not None and self._proc.stdout is not None
        if self.command_mode:
            payload = b"".join(b"contents " + name + b"\n" for name in names) + b"flush\n"
        else:
            payload = b"".join(name + b"\n" for name in names)
        stdin = self._proc.stdin

        def write() -> None:
            try:
                stdin.write(payload)
                stdin.flush()
            except (BrokenPipeError, ValueError):  # git exited, or close() closed the pipe
                pass

        writer = threading.Thread(target=write, daemon=True)
        writer.start()
        out = self._proc.stdout
        for _ in names:
            header = out.readline()
            if not header:
                raise OSError("git cat-file --batch ended early")
            line = header.rstrip(b"\n")
            if line.endswith((b" missing", b" ambiguous")):  # the name itself may hold spaces
                yield None
                continue
            parts = line.split(b" ")
            size = int(parts[2])
            content = out.read(size)
            out.read(1)  # the newline after the content
            yield GitObject(parts[0].decode("ascii"), parts[1].decode("ascii"), content)
        writer.join()

    def close(self) -> int:
        # stdout first: a writer still blocked on a full pipe is then freed by git's exit, not waited for
        for stream in (self._proc.stdout, self._proc.stdin):
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
    at_top: bool = False  # the listing is of the commit's root tree, so an entry's oid is what HEAD:<path> names

    def object_names(self, paths: list[str]) -> list[bytes]:
        """What to ask cat-file for each path: the listed entry's oid when that is what `HEAD:<path>` resolves
        to (git then skips resolving the path through every tree above it), else `HEAD:<path>` itself."""
        oids = {e.path: e.oid.encode("ascii") for e in self.entries} if self.at_top else {}
        names = []
        for path in paths:
            raw = path.encode("utf-8")
            names.append(oids.get(raw) or b"HEAD:" + raw)
        return names

    def read_paths(self, paths: list[str]) -> list[bytes | None]:
        """Contents of `git show HEAD:<path>` for each path; None where git show would fail."""
        return list(self.iter_paths(paths))

    def iter_paths(self, paths: list[str]) -> Iterator[bytes | None]:
        """`read_paths`, one path at a time as git answers."""
        if self.batch is None or not paths:
            yield from [None] * len(paths)
            return
        answers = self.batch.iter_many(self.object_names(paths))
        for path, answer in zip(paths, answers, strict=True):
            if answer is None:
                yield None
            elif answer.type == "blob":
                yield answer.content
            elif answer.type == "tree":
                yield git_show_tree_text(path, answer.content)
            else:
                yield None

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

    Two git processes run side by side: `git cat-file` (HEAD, then the blobs) and
    `git ls-tree -r -z HEAD`, upstream's own listing (relative to the directory) with raw names.
    `env` is the environment git runs under (default: this process's), as upstream inherits its own.
    """
    if not os.path.exists(memory_dir):
        return CommittedHead(None, [], None)
    try:
        batch = CatFileBatch(memory_dir, env)
    except OSError:  # not a directory, git missing
        return CommittedHead(None, [], None)
    try:
        listing = subprocess.Popen(
            ["git", "ls-tree", "-r", "-z", "HEAD"],
            cwd=memory_dir,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
    except OSError:
        batch.close()
        return CommittedHead(None, [], None)
    try:
        try:
            head, subtree = batch.read_many([b"HEAD", b"HEAD:./"])
        except OSError:  # not a repository: git exits before answering
            if batch.close() == USAGE_ERROR and batch.command_mode:  # a git before 2.36
                global _git_lacks_batch_command
                _git_lacks_batch_command = True
                return open_committed_head(memory_dir, env)
            return CommittedHead(None, [], None)
        if head is None or head.type != "commit":
            batch.close()
            return CommittedHead(None, [], None)
        entries: list[TreeEntry] = []
        at_top = False
        if subtree is not None and subtree.type == "tree":
            output, _ = listing.communicate()
            entries = parse_ls_tree(output) if listing.returncode == 0 else []  # upstream: a failed ls-tree lists none
            at_top = head.content.startswith(b"tree " + subtree.oid.encode("ascii") + b"\n")
        return CommittedHead(head.oid, entries, batch, at_top)
    finally:
        if listing.returncode is None:  # not read: HEAD is missing
            listing.kill()
            listing.communicate()


def parse_ls_tree(output: bytes) -> list[TreeEntry]:
    """`git ls-tree -r -z` output (`<mode> <type> <oid>\\t<path>\\0` ...) as entries, in its order."""
    entries = []
    for record in output.split(b"\0"):
        if record:
            meta, _, path = record.partition(b"\t")
            mode, _, oid = meta.split(b" ")
            entries.append(TreeEntry(path, mode, oid.decode("ascii")))
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
