"""Reading a memory repository's committed HEAD: two git processes per compile, whatever its size.

Upstream runs `git rev-parse --verify HEAD`, `git ls-tree -r --name-only HEAD` and one
`git show HEAD:<path>` per file, from inside the memory directory. This module gets the
same answers from `git ls-tree -r HEAD` (the same listing, relative to the directory, names
quoted as the repository's own `core.quotePath` says, plus each entry's object id) and one
`git cat-file --batch` process (HEAD and the blobs), started side by side. Measured
(benchmarks/, issue 9): listing with ls-tree costs git half the CPU of walking the trees
through cat-file, and Python a tenth.

`git show HEAD:<path>` is a revision argument (issue 17), so the blob at `<path>` is only
what upstream prints when `revision_syntax_needs_git_show` and `work_tree_is_ambiguous` say
so; for every other path this module runs upstream's own `git show` (same directory, same
repository configuration), see `CommittedHead.iter_paths`.

cat-file exits at the first object it cannot read (in a partial clone, a promised blob or tree whose
promisor remote cannot be reached; a corrupt object), where upstream's per-file `git show` fails for
that file alone. So every object cat-file did not answer is upstream's own command's: `git show`
for a file (and a fresh cat-file for the rest), `git rev-parse` and `git ls-tree` for HEAD.
"""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from subprocess import Popen

from .git_command import run_git


@dataclass(frozen=True)
class TreeEntry:
    """One non-tree entry of `git ls-tree -r` (blob, symlink or gitlink).

    `path` is the raw name; `printed` is the name as upstream's `git ls-tree` prints it (C-quoted
    where the repository's `core.quotePath` and git's fixed rules say so).
    """

    path: bytes
    mode: bytes
    oid: str
    printed: bytes = b""

    @property
    def listed(self) -> bytes:
        return self.printed or self.path


@dataclass(frozen=True)
class GitObject:
    oid: str
    type: str
    content: bytes


UNREAD = GitObject("", "", b"")  # `CommittedHead._answers`: cat-file exited on this object, so git show reads it
USAGE_ERROR = 129  # git's exit code for an unknown option
SHORT_WRITE = 4096  # bytes a pipe always takes without a reader (one page, its least capacity under Linux)
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
        the caller can work on one answer while git looks up the next; a list of a few names
        (under SHORT_WRITE bytes) is written at once, the pipe being empty between rounds.
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

        # a pipe holds at least one page whatever git does, so a short request list cannot block: no thread
        writer = threading.Thread(target=write, daemon=True) if len(payload) > SHORT_WRITE else None
        if writer is None:
            write()
        else:
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
            if out.read(1) != b"\n":  # the newline after the content; without it, git exited mid-object
                raise OSError("git cat-file --batch ended inside an object")
            yield GitObject(parts[0].decode("ascii"), parts[1].decode("ascii"), content)
        if writer is not None:
            writer.join()

    def close(self) -> int:
        # stdout first: a writer still blocked on a full pipe is then freed by git's exit, not waited for
        for stream in (self._proc.stdout, self._proc.stdin):
            with contextlib.suppress(OSError):  # git may have exited already (not a repository)
                if stream:
                    stream.close()
        return self._proc.wait()


# Where `git show HEAD:<path>` can print something else than the blob at <path>, or fail where
# cat-file finds it (git 2.39 revision.c handle_revision_arg_1, setup.c verify_non_filename /
# verify_filename / check_filename, object-name.c resolve_relative_path); measured in
# tests/test_git_show_paths.py and pinned by the cases tagged `revision`.
_NAME_MAX = 255  # lstat("HEAD:<first component>") fails with ENAMETOOLONG past this: git show dies
_PATH_MAX = 4096
_GLOB_SPECIAL = frozenset("*?[")  # looks_like_pathspec: a failed revision becomes a pathspec, git show exits 0


def revision_syntax_needs_git_show(path: str, memory_dir_bytes: int = 0) -> bool:
    """True when `git show HEAD:<path>` is not the plain lookup of <path> in HEAD's tree.

    - `..` anywhere: `HEAD:<a>..<b>` is first tried as the range `HEAD:<a>` .. `<b>` (or `...`);
      when both sides name objects git show prints the range (nothing for two blobs), not the file.
    - `^-` anywhere: `<rev>^-<n>` syntax; the rest is not a number, so the argument is no revision
      and git show dies (or, when it exists in the work tree, takes it as a path).
    - a leading `./` or `../`: relative to the current directory, not to the top of the tree
      (and a fatal error outside a work tree).
    - a first component of more than 250 bytes, or a path near PATH_MAX: git lstat()s
      `HEAD:<path>` in the work tree to refuse an ambiguous argument, and dies on ENAMETOOLONG.
    (`^@` and `^!` only count at the very end, where every path has `.md`; `:`, `~`, `^`, `@{`,
    `{}` after `HEAD:` are looked up verbatim in the tree.)
    """
    if ".." in path or "^-" in path or path.startswith("./"):
        return True
    encoded = len(path.encode("utf-8"))
    first = path.split("/", 1)[0]
    return len(first.encode("utf-8")) + len("HEAD:") > _NAME_MAX or memory_dir_bytes + encoded + 6 >= _PATH_MAX


def work_tree_is_ambiguous(memory_dir: Path) -> bool:
    """True when the directory holds an entry named `HEAD:...`: git show's argument may then also be a
    file (relative to the current directory), which git refuses as ambiguous or takes as a pathspec."""
    try:
        return any(name.startswith("HEAD:") for name in os.listdir(memory_dir))
    except OSError:
        return True  # cannot tell: ask git


def git_show(memory_dir: Path, path: str, env: Mapping[str, str] | None) -> bytes | None:
    """Upstream's own read: `git show HEAD:<path>` in `memory_dir`; None where it exits non-zero."""
    try:
        done = run_git(memory_dir, env, "show", f"HEAD:{path}")
    except OSError:
        return None
    return done.stdout if done.returncode == 0 else None


@dataclass
class CommittedHead:
    """What upstream learns from HEAD: the revision, the recursive listing, and a way to read paths."""

    revision: str | None
    entries: list[TreeEntry]
    batch: CatFileBatch | None
    at_top: bool = False  # the listing is of the commit's root tree, so an entry's oid is what HEAD:<path> names
    memory_dir: Path | None = None
    env: Mapping[str, str] | None = None

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
        """`read_paths`, one path at a time as git answers.

        A path is read from cat-file only where that is provably what `git show HEAD:<path>` prints:
        no revision syntax (`revision_syntax_needs_git_show`), no `HEAD:` entry in the directory, and a
        blob answer (or a missing one for a name git would not take as a pathspec). Everything else,
        trees and gitlinked commits included, is read by running `git show` itself.
        """
        if self.batch is None or not paths:
            yield from [None] * len(paths)
            return
        memory_dir = self.memory_dir if self.memory_dir is not None else Path(".")
        if work_tree_is_ambiguous(memory_dir):
            for path in paths:
                yield git_show(memory_dir, path, self.env)
            return
        dir_bytes = len(os.fsencode(os.path.abspath(memory_dir)))
        slow = [revision_syntax_needs_git_show(path, dir_bytes) for path in paths]
        fast = [path for path, is_slow in zip(paths, slow, strict=True) if not is_slow]
        answers = self._answers(self.object_names(fast))
        for path, is_slow in zip(paths, slow, strict=True):
            if is_slow:
                yield git_show(memory_dir, path, self.env)
                continue
            answer = next(answers)
            if answer is UNREAD:  # cat-file could not read it (a promised blob out of reach): upstream's git show
                yield git_show(memory_dir, path, self.env)
            elif answer is not None and answer.type == "blob":
                yield answer.content  # git show streams a blob as it is, whatever the configuration
            elif answer is None and _GLOB_SPECIAL.isdisjoint(path):
                yield None  # not in HEAD, and not a pathspec either: git show dies
            else:
                yield git_show(memory_dir, path, self.env)  # trees, commits, pathspecs: git's own output

    def _answers(self, names: list[bytes]) -> Iterator[GitObject | None]:
        """cat-file's answer for each name, UNREAD for the one it exited on; a fresh cat-file answers the rest."""
        done = 0
        while done < len(names):
            if self.batch is None:
                yield from [UNREAD] * (len(names) - done)
                return
            try:
                for answer in self.batch.iter_many(names[done:]):
                    done += 1
                    yield answer
                return
            except OSError:
                self.batch.close()
                done += 1
                yield UNREAD
                try:
                    self.batch = CatFileBatch(self.memory_dir or Path("."), self.env)
                except OSError:
                    self.batch = None

    def close(self) -> None:
        if self.batch is not None:
            self.batch.close()
            self.batch = None


def open_committed_head(memory_dir: Path, env: Mapping[str, str] | None = None) -> CommittedHead:
    """Read HEAD as upstream sees it from `memory_dir`; revision None when there is none.

    Two git processes run side by side: `git cat-file` (HEAD, then the blobs) and
    `git ls-tree -r HEAD`, upstream's own listing (relative to the directory, quoted as upstream's).
    `env` is the environment git runs under (default: this process's), as upstream inherits its own.
    The revision is whatever HEAD names (a commit, an annotated tag, ...), as `git rev-parse --verify HEAD`.
    """
    if not os.path.exists(memory_dir):
        return CommittedHead(None, [], None)
    try:
        batch = CatFileBatch(memory_dir, env)
    except OSError:  # not a directory, git missing
        return CommittedHead(None, [], None)
    try:
        listing = subprocess.Popen(
            ["git", "ls-tree", "-r", "HEAD"],
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
            head, root = batch.read_many([b"HEAD", b"HEAD^{tree}"])
        except OSError:  # not a repository (git exits before answering), or HEAD or its tree unreadable
            if batch.close() == USAGE_ERROR and batch.command_mode:  # a git before 2.36
                global _git_lacks_batch_command
                _git_lacks_batch_command = True
                return open_committed_head(memory_dir, env)
            return _head_from_git_commands(memory_dir, env, listing)
        if head is None:  # unborn, or HEAD names an object that is not there
            batch.close()
            return CommittedHead(committed_revision(memory_dir, env), [], None)
        try:
            [subtree] = batch.read_many([b"HEAD:./"])
            in_work_tree = True
        except OSError:  # `./` outside a work tree (bare repository, a .git directory) is fatal
            batch.close()
            batch = CatFileBatch(memory_dir, env)
            subtree, in_work_tree = root, False
        entries: list[TreeEntry] = []
        at_top = False
        if subtree is not None and subtree.type == "tree":
            output, _ = listing.communicate()
            entries = parse_ls_tree(output) if listing.returncode == 0 else []  # upstream: a failed ls-tree lists none
            at_top = not in_work_tree or (root is not None and root.oid == subtree.oid)
        return CommittedHead(head.oid, entries, batch, at_top, Path(memory_dir), env)
    finally:
        if listing.returncode is None:  # not read: HEAD is missing
            listing.kill()
            listing.communicate()


def _head_from_git_commands(memory_dir: Path, env: Mapping[str, str] | None, listing: Popen[bytes]) -> CommittedHead:
    """Upstream's own reads where cat-file could not read HEAD or its tree (a treeless partial clone whose
    promisor remote is out of reach): `git rev-parse --verify HEAD`, `git ls-tree -r HEAD` (none listed when it
    fails), and `HEAD:<path>` names for a fresh cat-file (never the listed oids)."""
    revision = committed_revision(memory_dir, env)
    if revision is None:  # not a repository, or unborn
        return CommittedHead(None, [], None)
    output, _ = listing.communicate()
    entries = parse_ls_tree(output) if listing.returncode == 0 else []
    return CommittedHead(revision, entries, CatFileBatch(memory_dir, env), False, Path(memory_dir), env)


_C_UNESCAPES = {b"a": 7, b"b": 8, b"t": 9, b"n": 10, b"v": 11, b"f": 12, b"r": 13, b'"': 34, b"\\": 92}
# One escape of git's C quoting (quote.c): a backslash and a letter, or three octal digits of a byte (\000 to
# \377); any other backslash is itself.
_C_ESCAPE = re.compile(rb'\\(?:([abtnvfr"\\])|([0-3][0-7]{2}))')


def _unescaped(match: re.Match[bytes]) -> bytes:
    letter, octal = match.groups()
    return bytes([_C_UNESCAPES[letter] if letter else int(octal, 8)])


def git_unquote(printed: bytes) -> bytes:
    """The raw name behind a name `git ls-tree` printed (C-quoted names start with `"`)."""
    if not printed.startswith(b'"') or not printed.endswith(b'"') or len(printed) < 2:
        return printed
    return _C_ESCAPE.sub(_unescaped, printed[1:-1])


def parse_ls_tree(output: bytes) -> list[TreeEntry]:
    """`git ls-tree -r` output (`<mode> <type> <oid>\\t<name>\\n` ...) as entries, in its order.

    git quotes every name that holds a newline, so lines split cleanly.
    """
    entries = []
    for line in output.split(b"\n"):
        if line:
            meta, _, printed = line.partition(b"\t")
            mode, _, oid = meta.split(b" ")
            entries.append(TreeEntry(git_unquote(printed), mode, oid.decode("ascii"), printed))
    return entries


def committed_revision(memory_dir: Path, env: Mapping[str, str] | None = None) -> str | None:
    """Upstream `getCommittedMemfsRevision`: `git rev-parse --verify HEAD` in `memory_dir`, None if none."""
    if not os.path.isdir(memory_dir):
        return None
    result = run_git(memory_dir, env, "rev-parse", "--verify", "HEAD")
    revision = result.stdout.decode("utf-8", "replace").strip()
    return revision if result.returncode == 0 and revision else None
