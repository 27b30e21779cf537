"""An upstream letta-code revision's source, read from its repository without writing to it, and the
rules that decide what a build of it is.

- `git ls-tree` / `git cat-file --batch` with a read-only git environment: nothing is written inside
  the repository (no worktree, no index, no checkout).
- A checkout's work tree (`checkout:PATH`, a tree run with its uncommitted edits): the tracked and
  the untracked-but-not-ignored files under SOURCE_PATHS (`git ls-files`), their bytes read from the
  file system (a file deleted in the work tree is absent), named by a content digest of (path,
  mode, bytes) instead of a commit (`worktree-<sha256>`).
- `SourceTree`: a directory in the cache holding one revision's (or one work tree's) SOURCE_PATHS,
  updated file by file from one to the next.
- The rules: the compiler's entry under either name (`system-prompt-compilation.ts`, or
  `systemPromptCompilation.ts` before the kebab-case rename); the release bundle's build entry (the
  first `entrypoints` of build.js) and bun's `// @bun` rule (a bundle whose entry starts with a
  shebang naming bun starts with the pragma); the packages a built module imports at load and the
  versions the revision's bun.lock resolves them to.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import stat
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

COMPILER_ENTRIES = (
    "src/backend/local/system-prompt-compilation.ts",
    "src/backend/local/systemPromptCompilation.ts",
)
LOCAL_BACKEND_MODULES = ("src/backend/local/local-backend.ts", "src/backend/local/LocalBackend.ts")
PONG_MODULES = ("src/backend/dev/headless-turn-executor.ts", "src/backend/dev/HeadlessTurnExecutor.ts")
# What a lifecycle turn runs around LocalBackend where the revision has the post-turn sync (0.30.0+): the client
# loop's reminder engine and state, the sync, the permission mode the engine reads and the backend the sync asks
# (reference/driver.mjs `turnReminders`). The lifecycle module re-exports them, so that they are one module
# instance with the backend; a revision without every one of these modules has no reminders on its turns.
TURN_REMINDER_EXPORTS = (
    ("src/reminders/engine.ts", ("buildSharedReminderParts", "prependReminderPartsToContent")),
    ("src/reminders/state.ts", ("createSharedReminderState", "enqueueMemoryGitSyncReminder")),
    ("src/reminders/memory-git-sync.ts", ("runPostTurnMemorySync",)),
    ("src/permissions/mode.ts", ("permissionMode",)),
    ("src/backend/backend.ts", ("getBackend", "__testSetBackend")),
)
# Paths of a revision the builds read; everything else in the repository is left alone.
SOURCE_PATHS = ("src", "tsconfig.json", "package.json", "build.js", "bun.lock", "bunfig.toml")


class BuildError(Exception):
    """A revision whose module could not be built; the message carries the build's own output."""


def git_env() -> dict[str, str]:
    """Read-only git: no global/system config, no optional locks, no prompts."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        {
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_OPTIONAL_LOCKS": "0",
            "GIT_TERMINAL_PROMPT": "0",
            "LC_ALL": "C",
        }
    )
    return env


def git(repo: Path, *args: str, input: bytes | None = None) -> bytes:
    done = subprocess.run(["git", "-C", str(repo), *args], input=input, capture_output=True, check=False, env=git_env())
    if done.returncode != 0:
        raise BuildError(f"git {' '.join(args)} in {repo}: {done.stderr.decode(errors='replace').strip()}")
    return done.stdout


def resolve_commit(repo: Path, rev: str = "HEAD") -> str:
    """The full commit id `rev` names in `repo` (any commit-ish)."""
    return git(repo, "rev-parse", "--verify", "--end-of-options", f"{rev}^{{commit}}").decode().strip()


@dataclass(frozen=True)
class TreeEntry:
    mode: str
    blob: str


def list_tree(repo: Path, commit: str, paths: tuple[str, ...] = SOURCE_PATHS) -> dict[str, TreeEntry]:
    """path -> (mode, blob) of the files under `paths` at `commit` (submodules left out)."""
    out = git(repo, "ls-tree", "-r", "-z", "--full-tree", commit, "--", *paths)
    entries: dict[str, TreeEntry] = {}
    for record in out.split(b"\0"):
        if not record:
            continue
        meta, _, path = record.partition(b"\t")
        mode, kind, blob = meta.decode().split()
        if kind == "blob":
            entries[path.decode("utf-8", "surrogateescape")] = TreeEntry(mode, blob)
    return entries


def read_blobs(repo: Path, blobs: list[str]) -> dict[str, bytes | None]:
    """blob id -> content (None: the object is not in the repository, e.g. a partial clone)."""
    if not blobs:
        return {}
    out = git(repo, "cat-file", "--batch", input="".join(f"{b}\n" for b in blobs).encode())
    found: dict[str, bytes | None] = {}
    position = 0
    for blob in blobs:
        end = out.index(b"\n", position)
        header = out[position:end].decode().split()
        position = end + 1
        if len(header) == 2 and header[1] == "missing":
            found[blob] = None
            continue
        size = int(header[2])
        found[blob] = out[position : position + size]
        position += size + 1
    return found


WORKTREE_PREFIX = "worktree-"  # what names a work tree where a commit names a revision


def _worktree_entry(path: Path) -> tuple[str, bytes] | None:
    """(git mode, bytes) of a file in a work tree (a symlink: its target), None when it is absent or no file."""
    try:
        info = path.lstat()
        if stat.S_ISLNK(info.st_mode):
            return "120000", os.fsencode(os.readlink(path))
        if not stat.S_ISREG(info.st_mode):
            return None  # a submodule's directory, a fifo
        return ("100755" if info.st_mode & 0o111 else "100644"), path.read_bytes()
    except OSError:
        return None  # deleted in the work tree (or gone while it was read)


def read_worktree(repo: Path, paths: tuple[str, ...] = SOURCE_PATHS) -> tuple[dict[str, TreeEntry], dict[str, bytes]]:
    """path -> (mode, sha256 of the bytes) of the work tree's files under `paths`, tracked or untracked but
    not ignored, and sha256 -> bytes: what a build of the work tree reads, read once."""
    out = git(repo, "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", *paths)
    entries: dict[str, TreeEntry] = {}
    contents: dict[str, bytes] = {}
    for record in sorted(set(out.split(b"\0")) - {b""}):
        path = record.decode("utf-8", "surrogateescape")
        found = _worktree_entry(repo / path)
        if found is None:
            continue
        mode, data = found
        digest = hashlib.sha256(data).hexdigest()
        entries[path], contents[digest] = TreeEntry(mode, digest), data
    return entries, contents


def worktree_key(entries: dict[str, TreeEntry]) -> str:
    """`worktree-<sha256>`: a digest of every (path, mode, sha256 of the bytes) a work tree's build reads."""
    listing = json.dumps(sorted((path, e.mode, e.blob) for path, e in entries.items()))
    return WORKTREE_PREFIX + hashlib.sha256(listing.encode("utf-8", "surrogateescape")).hexdigest()


class SourceTree:
    """A directory in the cache holding one revision's SOURCE_PATHS, updated incrementally:
    only files whose blob changed since the last revision are written. `wanted` and `contents`
    say where the files come from: the repository's objects here, a work tree in WorkTreeSource."""

    STATE = ".conformance-tree.json"

    def __init__(self, repo: Path, root: Path) -> None:
        self.repo, self.root = repo, root
        self.entries: dict[str, TreeEntry] = {}
        self.missing: list[str] = []  # blobs absent from the repository
        self.commit: str | None = None

    def _load_state(self) -> dict[str, list[str]]:
        try:
            state = json.loads((self.root / self.STATE).read_text(encoding="utf-8"))
            return dict(state["files"])
        except (OSError, ValueError, KeyError):
            shutil.rmtree(self.root, ignore_errors=True)
            return {}

    def wanted(self, commit: str) -> dict[str, TreeEntry]:
        """The files the tree holds for `commit`."""
        return list_tree(self.repo, commit)

    def contents(self, blobs: list[str]) -> dict[str, bytes | None]:
        """The bytes of these blobs (None: not in the repository)."""
        return read_blobs(self.repo, blobs)

    def checkout(self, commit: str) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        have = self._load_state()
        want = self.wanted(commit)
        (self.root / self.STATE).unlink(missing_ok=True)  # a run cut short leaves no state: start over
        for path in set(have) - set(want):
            (self.root / path).unlink(missing_ok=True)
        changed = [p for p, e in want.items() if have.get(p) != [e.mode, e.blob]]
        contents = self.contents(sorted({want[p].blob for p in changed}))
        written: dict[str, list[str]] = {p: have[p] for p in want if p not in changed}
        self.missing = []
        for path in changed:
            entry, target = want[path], self.root / path
            target.parent.mkdir(parents=True, exist_ok=True)
            if target.is_symlink() or target.exists():
                target.unlink()
            data = contents[entry.blob]
            if data is None:
                self.missing.append(path)
                continue
            if entry.mode == "120000":
                target.symlink_to(os.fsdecode(data))
            else:
                target.write_bytes(data)
            written[path] = [entry.mode, entry.blob]
        (self.root / self.STATE).write_text(json.dumps({"commit": commit, "files": written}), encoding="utf-8")
        self.entries, self.commit = want, commit

    def blob(self, path: str) -> str | None:
        entry = self.entries.get(path)
        return entry.blob if entry else None

    def read(self, path: str) -> bytes | None:
        try:
            return (self.root / path).read_bytes()
        except OSError:
            return None


class WorkTreeSource(SourceTree):
    """A SourceTree filled from a checkout's work tree, read once when it is made (`read_worktree`);
    `key` (worktree_key) stands where a commit would, and `checkout(key)` writes what was read."""

    def __init__(self, repo: Path, root: Path) -> None:
        super().__init__(repo, root)
        self.files, self.data = read_worktree(repo)
        self.key = worktree_key(self.files)

    def wanted(self, commit: str) -> dict[str, TreeEntry]:
        return self.files

    def contents(self, blobs: list[str]) -> dict[str, bytes | None]:
        return {blob: self.data[blob] for blob in blobs}


def compiler_entry(paths: dict[str, TreeEntry] | set[str]) -> str | None:
    """The compiler's source file at a revision, under whichever name that revision uses."""
    return next((p for p in COMPILER_ENTRIES if p in paths), None)


_ENTRYPOINTS = re.compile(r"entrypoints\s*:\s*\[\s*[\"'`]([^\"'`]+)[\"'`]")


def release_build_entry(build_js: bytes | None) -> str | None:
    """The entry of the release bundle: the first `entrypoints` of the revision's build.js."""
    if build_js is None:
        return None
    match = _ENTRYPOINTS.search(build_js.decode("utf-8", "replace"))
    return os.path.normpath(match.group(1)) if match else None


def bun_pragma(entry_source: bytes | None) -> bool:
    """bun's rule: a bundle whose entry starts with a shebang naming bun begins with `// @bun`."""
    if not entry_source or not entry_source.startswith(b"#!"):
        return False
    return b"bun" in entry_source.split(b"\n", 1)[0]


_IMPORT = re.compile(r'^(?:import|export)\b[^;"\']*?(?:\bfrom\s*)?"([^"]+)";?\s*$', re.M | re.S)


def load_time_packages(module: str) -> list[str]:
    """Packages a built module imports at load: its top-level static imports of non-builtins."""
    names = set()
    for match in _IMPORT.finditer(module):
        specifier = match.group(1)
        if specifier.startswith(("node:", ".", "/")) or specifier in _NODE_BUILTINS:
            continue
        parts = specifier.split("/")
        names.add("/".join(parts[:2]) if specifier.startswith("@") else parts[0])
    return sorted(names)


_NODE_BUILTINS = frozenset(
    [
        "assert",
        "async_hooks",
        "buffer",
        "child_process",
        "crypto",
        "events",
        "fs",
        "fs/promises",
        "http",
        "https",
        "module",
        "net",
        "os",
        "path",
        "path/posix",
        "process",
        "readline",
        "stream",
        "stream/promises",
        "string_decoder",
        "timers",
        "tls",
        "tty",
        "url",
        "util",
        "worker_threads",
        "zlib",
    ]
)


def _read_bun_lock(text: str) -> dict[str, Any]:
    """bun.lock is JSON with trailing commas."""
    return json.loads(re.sub(r",(\s*[}\]])", r"\1", text))


def locked_versions(bun_lock: bytes | None, packages: list[str]) -> dict[str, str]:
    """The version bun.lock resolves each top-level package to."""
    if not packages:
        return {}
    if bun_lock is None:
        raise BuildError("the revision has no bun.lock: cannot pin the lifecycle module's packages")
    try:
        lock = _read_bun_lock(bun_lock.decode("utf-8"))
    except ValueError as error:
        raise BuildError(f"cannot read the revision's bun.lock: {error}") from None
    versions: dict[str, str] = {}
    for name in packages:
        entry = lock.get("packages", {}).get(name)
        if not entry:
            raise BuildError(f"bun.lock has no entry for {name}, which the lifecycle module imports")
        versions[name] = str(entry[0]).rpartition("@")[2]
    return versions
