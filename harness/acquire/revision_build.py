"""Building what the harness calls from an upstream letta-code git revision, from source.

A full upstream build (`bun install --frozen-lockfile && bun run build`) of an old revision fails
for reasons unrelated to the compiler (install scripts, node versions, dependencies the registry no
longer has) and writes into the user's checkout. Only two modules are ever called:

- the **compiler module**: `bun build <entry> --target node --packages external`, where the entry is
  `src/backend/local/system-prompt-compilation.ts` (or `systemPromptCompilation.ts`, its name
  before the kebab-case rename). It imports only node builtins, so nothing is installed.
- the **lifecycle module** (`LocalBackend` and `DeterministicPongExecutor`), built the same way
  from a small generated entry. It imports a few packages at load; only those are installed, at
  the versions of the revision's `bun.lock`, with `--ignore-scripts`.

Both are built from the revision's blobs, read with `git ls-tree`/`git cat-file` into a source
tree in the cache; nothing is written inside the repository. The revision's `tsconfig.json` sits
at the root of that tree, so `@/` imports resolve as upstream's own build resolves them.

A checkout's work tree (`checkout:PATH`, run with its uncommitted edits: `build_worktree`) is built
the same way, from its files as the file system holds them (revision_source.read_worktree) copied
into a source tree of its own; it is named by a digest of what was read (`worktree-<sha256>`) where
a revision is named by its commit, so an unchanged work tree is not built again and an edited one is.
Nothing is written in the checkout either (no `bun install`, no `letta.js`). This is the one builder
of upstream from source: `git:PATH@REV`, `checkout:PATH`, `bisect --checkout` and the history tools.

**The `// @bun` rule.** bun puts a `// @bun` pragma at the top of a bundle whose entry starts
with a bun shebang (`#!/usr/bin/env bun`). The 0.25.x-era release bundles were built from
`src/index.ts`, which has one; from 91e3790f6 on, the build entry is `src/standalone-entry.ts`,
which has none. Loaded by bun with the pragma, non-ASCII string literals decode as Latin-1, which
changes the compiler's output, so the built module gets `// @bun` as its first line exactly when
the revision's build entry (the first `entrypoints` of its `build.js`) starts with a shebang
naming bun. A change of the build entry is therefore an output-changing commit although no
compiler file changed.

Layout under `$LETTA_CONFORMANCE_CACHE/git-builds/` (default ~/.cache/letta-conformance):

    <commit>/build.json         what was built: entries, pragma, sha256 of each module, version
    <commit>/package.json       {"version": ...}: the revision's version, for the driver's hello
    <commit>/compiler.mjs       the compiler module (a copy of modules/<sha256>.mjs)
    <commit>/lifecycle.mjs      the lifecycle module, node_modules -> deps/<key>/node_modules
    <commit>/failed.json        a build that failed, with the build's own message (not retried)
    worktree-<sha256>/          the same for a work tree, by the digest of its (path, mode, bytes)
    modules/<sha256>.mjs        every distinct module built, by content
    deps/<key>/                 installed load-time packages, by (packages, versions, lockfile)
    trees/<repo key>/           the source tree, updated blob by blob from one revision to the next
    trees/<repo key>-worktree/  the work tree's source tree, updated file by file from one build to the next

Builds are serialised by a lock file per repository (and one per work tree; across threads and
processes), so parallel workers build each revision, and each state of a work tree, once.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from harness.acquire.releases import cache_root, ensure_bun
from harness.acquire.revision_source import (
    COMPILER_ENTRIES,
    LOCAL_BACKEND_MODULES,
    PONG_MODULES,
    TURN_REMINDER_EXPORTS,
    BuildError,
    SourceTree,
    WorkTreeSource,
    bun_pragma,
    compiler_entry,
    load_time_packages,
    locked_versions,
    release_build_entry,
    resolve_commit,
)

LOADERS = (".md:text", ".mdx:text", ".txt:text")  # as upstream's build.js loads them
LIFECYCLE_ENTRY = ".conformance-lifecycle-entry.ts"  # generated in the source tree, never in the repo
BUILD_FORMAT = 2  # bump when what a build produces changes, so old cache entries are rebuilt (2: turn reminders)


@dataclass
class BuiltModule:
    path: str  # in the commit's directory
    sha256: str
    entry: str
    seconds: float
    packages: dict[str, str] = field(default_factory=dict)  # load-time package -> locked version
    inputs: list[str] = field(default_factory=list)  # source files the build read (bun's metafile)


@dataclass
class RevisionBuild:
    repo: str
    commit: str  # the commit built, or `worktree-<sha256>` for a work tree (build_worktree)
    version: str | None
    compiler_entry: str
    release_entry: str | None
    pragma: bool
    compiler: BuiltModule
    lifecycle: BuiltModule | None = None
    format: int = BUILD_FORMAT

    @property
    def directory(self) -> Path:
        return Path(self.compiler.path).parent

    @property
    def module_key(self) -> str:
        """What identifies the behaviour: the compiler module's bytes (the pragma is part of them)."""
        return self.compiler.sha256

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RevisionBuild:
        data = dict(data)
        data["compiler"] = BuiltModule(**data["compiler"])
        if data.get("lifecycle"):
            data["lifecycle"] = BuiltModule(**data["lifecycle"])
        return cls(**data)


def builds_root() -> Path:
    return cache_root() / "git-builds"


def repo_key(repo: Path) -> str:
    return hashlib.sha256(str(repo.resolve()).encode()).hexdigest()[:16]


_THREAD_LOCKS: dict[str, threading.Lock] = {}
_THREAD_LOCKS_GUARD = threading.Lock()


@contextlib.contextmanager
def build_lock(name: str) -> Iterator[None]:
    """One builder at a time per name, across threads (a lock) and processes (flock)."""
    with _THREAD_LOCKS_GUARD:
        thread_lock = _THREAD_LOCKS.setdefault(name, threading.Lock())
    path = builds_root() / "locks" / f"{name}.lock"
    path.parent.mkdir(parents=True, exist_ok=True)
    with thread_lock, path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _bun_build(bun: Path, tree: Path, entry: str, outfile: Path) -> tuple[str, list[str]]:
    """Build `entry` (relative to the tree); the module's text and the source files it read."""
    metafile = outfile.with_suffix(".meta.json")
    command = [
        str(bun),
        "build",
        f"./{entry}",
        "--target",
        "node",
        "--packages",
        "external",
        *(f"--loader={loader}" for loader in LOADERS),
        "--outfile",
        str(outfile),
        f"--metafile={metafile}",
    ]
    done = subprocess.run(command, cwd=tree, capture_output=True, text=True, check=False, timeout=600)
    if done.returncode != 0 or not outfile.exists():
        output = (done.stderr.strip() or done.stdout.strip()).replace(f"{tree}/", "")[-2000:]  # paths as in the repo
        raise BuildError(f"bun build {entry} failed (exit {done.returncode}): {output}")
    try:
        inputs = sorted(json.loads(metafile.read_text(encoding="utf-8"))["inputs"])
    except (OSError, ValueError, KeyError):
        inputs = []
    return outfile.read_text(encoding="utf-8"), inputs


def _store_module(text: str, dest: Path) -> str:
    """Write a module to `dest` and to modules/<sha256>.mjs; return its sha256."""
    data = text.encode("utf-8")
    digest = hashlib.sha256(data).hexdigest()
    stored = builds_root() / "modules" / f"{digest}.mjs"
    if not stored.exists():
        stored.parent.mkdir(parents=True, exist_ok=True)
        tmp = stored.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_bytes(data)
        tmp.replace(stored)
    tmp = dest.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_bytes(data)
    tmp.replace(dest)
    return digest


def _version(tree: SourceTree) -> str | None:
    try:
        return json.loads(tree.read("package.json") or b"{}").get("version")
    except ValueError:
        return None


def _build_compiler(bun: Path, tree: SourceTree, dest: Path, scratch: Path) -> tuple[BuiltModule, str | None, bool]:
    entry = compiler_entry(tree.entries)
    if entry is None:
        raise BuildError(f"no compiler at this revision (none of {', '.join(COMPILER_ENTRIES)})")
    if tree.missing:
        shown = ", ".join(tree.missing[:5])
        raise BuildError(f"the repository lacks the blobs of {len(tree.missing)} source file(s): {shown}")
    release_entry = release_build_entry(tree.read("build.js"))
    pragma = bun_pragma(tree.read(release_entry)) if release_entry else False
    started = time.perf_counter()
    text, inputs = _bun_build(bun, tree.root, entry, scratch / "compiler.mjs")
    if pragma:
        text = "// @bun\n" + text
    digest = _store_module(text, dest / "compiler.mjs")
    seconds = round(time.perf_counter() - started, 3)
    module = BuiltModule(str(dest / "compiler.mjs"), digest, entry, seconds, inputs=inputs)
    return module, release_entry, pragma


def install_locked_packages(bun: Path, tree: SourceTree, versions: dict[str, str]) -> Path:
    """node_modules holding `versions` and their dependencies as the revision's bun.lock resolves
    them (its lockfile is kept and the manifest cut down to these packages), with --ignore-scripts."""
    lock = tree.read("bun.lock") or b""
    key = hashlib.sha256(json.dumps([versions, hashlib.sha256(lock).hexdigest()]).encode()).hexdigest()[:24]
    home = builds_root() / "deps" / key
    if (home / ".installed").exists():
        return home / "node_modules"
    with build_lock(f"deps-{key}"):
        if (home / ".installed").exists():
            return home / "node_modules"
        shutil.rmtree(home, ignore_errors=True)
        home.mkdir(parents=True)
        (home / "bun.lock").write_bytes(lock)
        (home / "package.json").write_text(
            json.dumps({"name": "conformance-lifecycle-deps", "private": True, "dependencies": versions}, indent=1)
        )
        command = [str(bun), "install", "--ignore-scripts", "--no-save", "--no-progress"]
        done = subprocess.run(command, cwd=home, capture_output=True, text=True, check=False, timeout=900)
        if done.returncode != 0:
            raise BuildError(
                f"bun install of {', '.join(versions)} failed: {(done.stderr or done.stdout).strip()[-1500:]}"
            )
        (home / ".installed").write_text(json.dumps(versions, sort_keys=True) + "\n")
    return home / "node_modules"


def _build_lifecycle(bun: Path, tree: SourceTree, dest: Path, scratch: Path, pragma: bool) -> BuiltModule:
    backend = next((p for p in LOCAL_BACKEND_MODULES if p in tree.entries), None)
    pong = next((p for p in PONG_MODULES if p in tree.entries), None)
    if backend is None or pong is None:
        raise BuildError(
            f"no LocalBackend ({' or '.join(LOCAL_BACKEND_MODULES)}) or DeterministicPongExecutor "
            f"({' or '.join(PONG_MODULES)}) at this revision"
        )
    entry_file = tree.root / LIFECYCLE_ENTRY
    lines = [
        f'export {{ LocalBackend }} from "./{backend}";',
        f'export {{ DeterministicPongExecutor }} from "./{pong}";',
    ]
    if all(module in tree.entries for module, _ in TURN_REMINDER_EXPORTS):
        lines += [f'export {{ {", ".join(names)} }} from "./{module}";' for module, names in TURN_REMINDER_EXPORTS]
    entry_file.write_text("\n".join(lines) + "\n")
    started = time.perf_counter()
    try:
        text, inputs = _bun_build(bun, tree.root, LIFECYCLE_ENTRY, scratch / "lifecycle.mjs")
    finally:
        entry_file.unlink(missing_ok=True)
    if pragma:
        text = "// @bun\n" + text
    packages = load_time_packages(text)
    versions = locked_versions(tree.read("bun.lock"), packages)
    node_modules = install_locked_packages(bun, tree, versions) if versions else None
    digest = _store_module(text, dest / "lifecycle.mjs")
    link = dest / "node_modules"
    if link.is_symlink():
        link.unlink()
    if node_modules is not None:
        link.symlink_to(node_modules)
    seconds = round(time.perf_counter() - started, 3)
    entry = f"{backend} + {pong}"
    return BuiltModule(
        str(dest / "lifecycle.mjs"), digest, entry, seconds, versions, [i for i in inputs if i != LIFECYCLE_ENTRY]
    )


def cached_build(commit: str, lifecycle: bool = False) -> RevisionBuild | None:
    """A finished build of `commit` from the cache (None: not built yet). A recorded failure raises it again."""
    dest = builds_root() / commit
    failed = dest / "failed.json"
    if failed.exists():
        recorded = json.loads(failed.read_text(encoding="utf-8"))
        if recorded.get("format") == BUILD_FORMAT and (not lifecycle or recorded.get("lifecycle")):
            raise BuildError(recorded["error"])
    try:
        build = RevisionBuild.from_json(json.loads((dest / "build.json").read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError, KeyError):
        return None
    if build.format != BUILD_FORMAT or (lifecycle and build.lifecycle is None):
        return None
    for module in (build.compiler, build.lifecycle):
        if module is not None:
            path = Path(module.path)
            if not path.exists() or hashlib.sha256(path.read_bytes()).hexdigest() != module.sha256:
                return None  # altered or cut short: build again
    return build


def build_revision(repo: Path, rev: str = "HEAD", *, lifecycle: bool = False, bun: Path | None = None) -> RevisionBuild:
    """The compiler module (and, with `lifecycle`, the lifecycle module) of `repo` at `rev`, built
    once per commit and cached; a failed build raises BuildError with the build's own message (and
    is remembered, so it is not retried on every run)."""
    repo = repo.expanduser().resolve()
    commit = resolve_commit(repo, rev)
    found = cached_build(commit, lifecycle)
    if found is not None:
        return found
    with build_lock(f"tree-{repo_key(repo)}"):
        found = cached_build(commit, lifecycle)
        if found is not None:
            return found
        return _build_locked(repo, commit, lifecycle, bun or ensure_bun())


def build_worktree(checkout: Path, *, lifecycle: bool = False, bun: Path | None = None) -> RevisionBuild:
    """build_revision for a checkout's work tree, its uncommitted edits included: its files read once
    (tracked, or untracked and not ignored), built into a source tree of the cache as a revision is and
    cached by the digest of what was read. Nothing is written in the checkout."""
    checkout = checkout.expanduser().resolve()
    with build_lock(f"worktree-{repo_key(checkout)}"):
        tree = WorkTreeSource(checkout, builds_root() / "trees" / f"{repo_key(checkout)}-worktree")
        found = cached_build(tree.key, lifecycle)
        if found is not None:
            return found
        return _build_locked(checkout, tree.key, lifecycle, bun or ensure_bun(), tree)


def _build_locked(repo: Path, commit: str, lifecycle: bool, bun: Path, tree: SourceTree | None = None) -> RevisionBuild:
    dest = builds_root() / commit
    dest.mkdir(parents=True, exist_ok=True)
    scratch = builds_root() / "scratch" / f"{os.getpid()}-{threading.get_ident()}"
    scratch.mkdir(parents=True, exist_ok=True)
    tree = tree or SourceTree(repo, builds_root() / "trees" / repo_key(repo))
    try:
        tree.checkout(commit)
        version = _version(tree)
        compiler, release_entry, pragma = _build_compiler(bun, tree, dest, scratch)
        build = RevisionBuild(str(repo), commit, version, compiler.entry, release_entry, pragma, compiler)
        if lifecycle:
            build.lifecycle = _build_lifecycle(bun, tree, dest, scratch, pragma)
    except BuildError as error:
        (dest / "failed.json").write_text(
            json.dumps({"format": BUILD_FORMAT, "commit": commit, "lifecycle": lifecycle, "error": str(error)})
        )
        raise
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    (dest / "failed.json").unlink(missing_ok=True)
    (dest / "package.json").write_text(json.dumps({"name": "@letta-ai/letta-code", "version": version}) + "\n")
    (dest / "build.json").write_text(json.dumps(build.to_json(), indent=1) + "\n")
    return build


@contextlib.contextmanager
def repository_tree(repo: Path) -> Iterator[SourceTree]:
    """The repository's source tree in the cache, held (locked) for a walk over many commits."""
    repo = repo.expanduser().resolve()
    with build_lock(f"tree-{repo_key(repo)}"):
        yield SourceTree(repo, builds_root() / "trees" / repo_key(repo))


def build_in_tree(tree: SourceTree, commit: str, bun: Path) -> RevisionBuild:
    """build_revision for a caller holding the tree (repository_tree): the compiler module only."""
    found = cached_build(commit)
    if found is not None:
        return found
    return _build_locked(tree.repo, commit, False, bun, tree)
