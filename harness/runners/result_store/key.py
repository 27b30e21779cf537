"""The result store's key: a reference's identity (everything its outcomes depend on besides the request) and
the content digest of a materialized repository. docs/scale.md lists each component and why."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import threading
from pathlib import Path
from typing import Any

from harness.acquire import manifest
from harness.core.reference import ReferenceSpec
from harness.core.registries import pin_of, registry
from harness.runners.base import Runner
from harness.runners.bun_reference import BunReferenceRunner
from harness.runners.git_reference import GitReferenceRunner
from harness.runners.node_reference import NodeReferenceRunner
from harness.runners.result_store.store import FORMAT, ResultStore, canonical

_HARNESS = Path(__file__).resolve().parents[2]
#: the harness code that turns a reference's answer into an Outcome (a change misses every entry)
READERS = (_HARNESS / "runners" / "jsonl_process.py", _HARNESS / "runners" / "result_store" / "memoized.py")
#: the harness code that writes a lifecycle probe's commits into its working copy (harness.repo.build)
BUILDERS = (*sorted((_HARNESS / "repo").glob("*.py")), _HARNESS / "core" / "repomodel.py")
#: the harness code that builds a git: revision's modules (harness.acquire.revision_build)
RECIPES = (_HARNESS / "acquire" / "revision_build.py", _HARNESS / "acquire" / "revision_source.py")
REFERENCE_RUNNERS = (BunReferenceRunner, NodeReferenceRunner, GitReferenceRunner)  # by exact type


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


_MEMO: dict[tuple[Any, ...], Any] = {}
_MEMO_LOCK = threading.Lock()


def _memo(key: tuple[Any, ...], make: Any) -> Any:
    with _MEMO_LOCK:
        if key in _MEMO:
            return _MEMO[key]
    value = make()
    with _MEMO_LOCK:
        _MEMO[key] = value
    return value


def file_digest(path: Path) -> str:
    """sha256 of a file's bytes (memoized by path, size and modification time)."""
    stat = path.stat()
    return str(_memo(("file", str(path), stat.st_size, stat.st_mtime_ns), lambda: sha256_hex(path.read_bytes())))


def files_digest(paths: tuple[Path, ...]) -> str:
    return sha256_hex(canonical([[p.name, file_digest(p)] for p in paths]))


def _probe(argv: list[str], what: str) -> str:
    done = subprocess.run(argv, capture_output=True, timeout=60, check=False, env={"PATH": "/usr/bin:/bin"})
    if done.returncode != 0:
        raise OSError(f"{what}: `{' '.join(argv)}` exited {done.returncode}")
    return done.stdout.decode("utf-8", "replace").strip()


def runtime_build(interpreter: Path, runtime: str) -> str:
    """What identifies the runtime binary's build: `bun --revision` (version and commit), or node's
    `process.versions` (node, v8, ICU, Unicode, ...). Memoized by the binary's path, size and time."""
    real = Path(os.path.realpath(interpreter))
    stat = real.stat()
    argv = [str(real), "--revision"] if runtime == "bun" else [str(real), "-p", "JSON.stringify(process.versions)"]
    return str(_memo(("runtime", str(real), stat.st_size, stat.st_mtime_ns), lambda: _probe(argv, runtime)))


def git_build(env: dict[str, str]) -> str:
    """`git --version --build-options` of the git the reference spawns (the first on its PATH)."""
    git = shutil.which("git", path=env.get("PATH"))
    if git is None:
        return "no git"
    real = os.path.realpath(git)
    stat = os.stat(real)
    return str(
        _memo(
            ("git", real, stat.st_size, stat.st_mtime_ns), lambda: _probe([real, "--version", "--build-options"], "git")
        )
    )


def _lockfile_digests(names: list[str]) -> dict[str, str]:
    """reference/runtime-deps/NAME's package.json and package-lock.json, for each NAME installed beside a bundle."""
    out = {}
    for name in names:
        source = manifest.REFERENCE_DIR / "runtime-deps" / name
        out[name] = files_digest((source / "package.json", source / "package-lock.json"))
    return out


def artifact_identity(runner: BunReferenceRunner) -> dict[str, Any] | None:
    """The verified digest of what the reference loads: an npm tarball's pinned sha512 integrity (and the
    lockfiles of the runtime dependencies installed beside it), a PyPI wheel's pinned sha256, a git
    revision's commit (and the harness's build recipe). None for a bundle file or a checkout's work tree
    (`checkout:`, though the same builder builds it): nothing verifies those, so they are never memoized."""
    spec = runner.spec
    if isinstance(runner, GitReferenceRunner):
        if runner.reference.worktree:
            return None
        from harness.acquire.revision_build import BUILD_FORMAT
        from harness.acquire.revision_source import resolve_commit

        reference = runner.reference
        commit = resolve_commit(reference.repo.expanduser().resolve(), reference.rev)
        return {"git": commit, "build_format": BUILD_FORMAT, "recipe": files_digest(RECIPES)}
    return release_identity(spec) if spec.is_release else None


def release_identity(spec: ReferenceSpec) -> dict[str, Any] | None:
    """A pinned release's identity: its registry and version, the digest its pin carries (harness.core.registries)
    and, for a registry whose pins name runtime dependencies, their lockfiles' digests. None when not pinned."""
    row = registry(spec.kind)
    pinned = pin_of(row.name, spec.value)
    if pinned is None:
        return None
    identity: dict[str, Any] = {row.name: spec.value, row.digest_key: pinned[row.digest_key]}
    if row.runtime_deps:
        # under bun the bundle sees runtime_deps; under node its own install with node_runtime_deps, and (through
        # the symlinked letta.js) runtime_deps too
        kinds = ("runtime_deps", "node_runtime_deps") if spec.runtime == "node" else ("runtime_deps",)
        identity["runtime_deps"] = _lockfile_digests([pinned[k] for k in kinds if pinned.get(k)])
    return identity


def reference_identity(runner: Runner) -> dict[str, Any] | None:
    """Everything about a reference its outcomes depend on, besides the request: None when the runner is not
    one of the real reference runners (a stand-in, a subclass) or its artifact is not verified."""
    if type(runner) not in REFERENCE_RUNNERS:
        return None
    assert isinstance(runner, BunReferenceRunner)
    artifact = artifact_identity(runner)
    if artifact is None:
        return None
    interpreter = runner.interpreter()
    env = runner.reference_env()
    return {
        "format": FORMAT,
        "artifact": artifact,
        "runtime": {
            "kind": runner.spec.runtime,
            "binary": os.path.realpath(interpreter),
            "build": runtime_build(interpreter, runner.spec.runtime),
            "flags": runner.interpreter_flags(),
        },
        "driver": file_digest(manifest.DRIVER_PATH),
        "env": env,
        "cwd": str(runner.home),
        "git": git_build(env),
        "readers": files_digest(READERS),
    }


# --- the key: the repository ---------------------------------------------------------------------------------


def repository_root(memory_dir: Path, repos: Path) -> Path | None:
    """The materialized repository holding `memory_dir` (`repos/<digest>/`, marked complete), or None."""
    try:
        relative = Path(os.path.abspath(memory_dir)).relative_to(os.path.abspath(repos))
    except ValueError:
        return None
    if not relative.parts or relative.parts[0].startswith("."):
        return None  # .lifecycle work copies, .build- staging directories
    root = Path(os.path.abspath(repos)) / relative.parts[0]
    return root if (root / ".complete").is_file() else None


def repository_digest(root: Path, store: ResultStore) -> str:
    """The content digest of a materialized repository, computed once per build of it (by the stamp of its
    `.complete` marker): every path under it with its type, executable bit and bytes, or a symlink's
    target; a git index with its stat data left out (a rebuild writes other times and inodes); and each
    work-tree file's modification time (the builder dates every file it writes: upstream's Memory tool
    orders uncommitted entries by it), but not a git directory's (written at build time, read by no one)."""
    marker = (root / ".complete").stat()
    stamp = f"{marker.st_ino}:{marker.st_mtime_ns}:{marker.st_ctime_ns}"

    def compute() -> str:
        known = store.repository(str(root), stamp)
        if known is not None:
            return known
        found = tree_digest(root)
        store.remember_repository(str(root), stamp, found)
        return found

    return str(_memo(("repo", str(root), stamp, str(store.path)), compute))


def tree_digest(root: Path) -> str:
    digest = hashlib.sha256()
    _walk(root, b"", digest, top=True)
    return digest.hexdigest()


def _walk(path: Path | str, relative: bytes, digest: Any, top: bool = False, in_git: bool = False) -> None:
    with os.scandir(path) as scan:
        entries = sorted(scan, key=lambda e: os.fsencode(e.name))
    names = {e.name for e in entries}
    git_dir = "HEAD" in names and "objects" in names
    in_git = in_git or git_dir
    for entry in entries:
        if top and entry.name == ".complete":
            continue
        name = relative + os.fsencode(entry.name)
        if entry.is_symlink():
            digest.update(b"L" + name + b"\0" + os.fsencode(os.readlink(entry.path)) + b"\0")
        elif entry.is_dir(follow_symlinks=False):
            digest.update(b"D" + name + b"\0")
            _walk(entry.path, name + b"/", digest, in_git=in_git or entry.name == ".git")
        elif entry.is_file(follow_symlinks=False):
            data = Path(entry.path).read_bytes()
            if git_dir and entry.name == "index":
                data = index_without_stat(data)
            info = entry.stat(follow_symlinks=False)
            executable = b"x" if info.st_mode & 0o100 else b"-"
            digest.update(b"F" + executable + name + b"\0" + len(data).to_bytes(8, "big") + data)
            if not in_git:
                digest.update(b"M" + info.st_mtime_ns.to_bytes(8, "big"))
        else:
            digest.update(b"O" + name + b"\0")


def index_without_stat(data: bytes) -> bytes:
    """A git index (version 2 or 3) with each entry's ctime, mtime, dev, ino, uid and gid zeroed and its
    extensions and checksum left out: what it says about the files, not when they were written. Any other
    index is kept as it is (a rebuilt repository then misses the store, which is safe)."""
    if len(data) < 12 or data[:4] != b"DIRC" or int.from_bytes(data[4:8], "big") not in (2, 3):
        return data
    for hash_size in (20, 32):  # SHA-1 or SHA-256 repositories: the trailing checksum says which
        algorithm = hashlib.sha1 if hash_size == 20 else hashlib.sha256
        if len(data) > 12 + hash_size and algorithm(data[:-hash_size]).digest() == data[-hash_size:]:
            break
    else:
        return data
    count, offset, out = int.from_bytes(data[8:12], "big"), 12, bytearray(data[:12])
    for _ in range(count):
        start = offset
        flags_at = start + 40 + hash_size
        if flags_at + 2 > len(data):
            return data
        flags = int.from_bytes(data[flags_at : flags_at + 2], "big")
        name_at = flags_at + 2 + (2 if flags & 0x4000 else 0)
        end_of_name = data.find(b"\0", name_at)
        if end_of_name < 0:
            return data
        offset = start + ((end_of_name - start) // 8 + 1) * 8  # NUL-padded to a multiple of 8
        entry = bytearray(data[start:offset])
        entry[0:24] = bytes(24)  # ctime, mtime, dev, ino
        entry[28:36] = bytes(8)  # uid, gid
        out += entry
    return bytes(out)
