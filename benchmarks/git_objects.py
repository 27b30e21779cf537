"""How fast each way of writing git objects builds a scenario's repository: the hand-written loose-object
writer (harness.repo.objects) against GitPython (gitdb's LooseObjectDB), dulwich and pygit2 (libgit2).

    python -m benchmarks.git_objects [--files 2000] [--rounds 3]

Each writer stores the same tree (FILES Markdown files over nested directories, one commit) into a fresh
bare repository as loose objects; `git fsck` checks each result and all must give the same commit id.
The libraries are optional: a writer whose library is not installed is reported as such. Also prints,
per library, whether it can create a SHA-256 repository (the repository-shapes work needs that).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness.core.repomodel import MODE_FILE, Blob, CommitModel
from harness.core.repospec import generated_files
from harness.repo.gitenv import isolated_env
from harness.repo.objects import ObjectWriter, nested_tree

MESSAGE = "bench"
IDENT = b"Conformance Bot <bot@letta-conformance.invalid> 1767225600 +0000"


def hand(repo: Path, files: dict[bytes, Blob]) -> str:
    commit = CommitModel(files, MESSAGE, IDENT.decode(), IDENT.decode())
    writer = ObjectWriter(repo)
    return writer.commit(writer.tree(files), [], commit, 0)


def gitpython(repo: Path, files: dict[bytes, Blob]) -> str:
    from io import BytesIO

    from gitdb import IStream, LooseObjectDB  # GitPython's object database

    db = LooseObjectDB(str(repo / "objects"))

    def store(kind: bytes, data: bytes) -> bytes:
        return db.store(IStream(kind, len(data), BytesIO(data))).binsha  # type: ignore[no-any-return]

    def tree(node: dict[bytes, Any]) -> bytes:
        body = bytearray()
        for name, value in sorted(node.items(), key=lambda kv: kv[0] + (b"/" if isinstance(kv[1], dict) else b"")):
            if isinstance(value, dict):
                body += b"40000 " + name + b"\0" + tree(value)
            else:
                body += value.mode + b" " + name + b"\0" + store(b"blob", value.data)
        return store(b"tree", bytes(body))

    root = tree(nested_tree(files))
    data = b"tree %s\nauthor %s\ncommitter %s\n\n%s\n" % (root.hex().encode(), IDENT, IDENT, MESSAGE.encode())
    return store(b"commit", data).hex()


def dulwich(repo: Path, files: dict[bytes, Blob]) -> str:
    from dulwich.object_store import DiskObjectStore
    from dulwich.objects import Blob as DBlob
    from dulwich.objects import Commit, Tree

    store = DiskObjectStore(str(repo / "objects"))

    def tree(node: dict[bytes, Any]) -> bytes:
        result = Tree()
        for name, value in node.items():
            if isinstance(value, dict):
                result.add(name, 0o040000, tree(value))
            else:
                blob = DBlob.from_string(value.data)
                store.add_object(blob)
                result.add(name, int(value.mode, 8), blob.id)
        store.add_object(result)
        return result.id  # type: ignore[no-any-return]

    commit = Commit()
    commit.tree = tree(nested_tree(files))
    commit.author = commit.committer = IDENT.rsplit(b" ", 2)[0]
    commit.author_time = commit.commit_time = 1767225600
    commit.author_timezone = commit.commit_timezone = 0
    commit.message = MESSAGE.encode() + b"\n"
    store.add_object(commit)
    return commit.id.decode()  # type: ignore[no-any-return]


def pygit2(repo: Path, files: dict[bytes, Blob]) -> str:
    import pygit2 as git

    handle = git.Repository(str(repo))

    def tree(node: dict[bytes, Any]) -> git.Oid:
        builder = handle.TreeBuilder()
        for name, value in node.items():
            if isinstance(value, dict):
                builder.insert(name.decode("utf-8", "surrogateescape"), tree(value), git.GIT_FILEMODE_TREE)
            else:
                oid = handle.create_blob(value.data)
                builder.insert(name.decode("utf-8", "surrogateescape"), oid, int(value.mode, 8))
        return builder.write()

    signature = git.Signature("Conformance Bot", "bot@letta-conformance.invalid", 1767225600, 0)
    return str(handle.create_commit(None, signature, signature, MESSAGE + "\n", tree(nested_tree(files)), []))


def sha256_support() -> dict[str, str]:
    """Whether each library can create a repository in the SHA-256 object format."""
    out: dict[str, str] = {"hand-written": "yes (ObjectWriter(object_format='sha256'), case field object_format)"}
    with tempfile.TemporaryDirectory() as tmp:
        try:
            from dulwich.repo import Repo

            Repo.init_bare(str(Path(tmp) / "d"), mkdir=True, object_format="sha256")  # type: ignore[call-arg]
            out["dulwich"] = "yes (init_bare object_format=sha256)"
        except Exception as error:  # any refusal is the answer
            out["dulwich"] = f"no ({type(error).__name__}: {str(error)[:80]})"
        try:
            import pygit2 as git

            out["pygit2"] = (
                "yes" if getattr(git, "GIT_OID_SHA256", None) is not None else "no (libgit2 built without SHA-256)"
            )
        except ImportError as error:
            out["pygit2"] = f"not installed ({error})"
        out["GitPython"] = "no (gitdb hashes with SHA-1 only)"
    return out


WRITERS: dict[str, Callable[[Path, dict[bytes, Blob]], str]] = {
    "hand-written": hand,
    "GitPython (gitdb)": gitpython,
    "dulwich": dulwich,
    "pygit2": pygit2,
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.git_objects", description=__doc__)
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    files = generated_files({"seed": 7, "files": args.files, "depth": 2})
    files = {name: Blob(MODE_FILE, blob.data) for name, blob in files.items()}
    with tempfile.TemporaryDirectory(prefix="git-objects-") as tmp:
        env = isolated_env(Path(tmp) / "home")
        ids: dict[str, str] = {}
        print(f"{len(files)} files, best of {args.rounds} rounds (loose objects into a fresh bare repository)")
        for name, writer in WRITERS.items():
            best, best_cpu = float("inf"), float("inf")
            try:
                for round_ in range(args.rounds):
                    repo = Path(tmp) / f"{name.split()[0]}-{round_}"
                    subprocess.run(["git", "init", "-q", "--bare", str(repo)], env=env, check=True)
                    started, cpu = time.perf_counter(), time.process_time()
                    ids[name] = writer(repo, files)
                    best = min(best, time.perf_counter() - started)
                    best_cpu = min(best_cpu, time.process_time() - cpu)
                    fsck = subprocess.run(["git", "fsck", "--strict"], cwd=repo, env=env, capture_output=True)
                    assert fsck.returncode == 0, fsck.stderr
                    shutil.rmtree(repo)
            except ImportError as error:
                print(f"  {name:<20} not installed ({error})")
                continue
            print(f"  {name:<20} {best * 1000:8.1f} ms wall {best_cpu * 1000:8.1f} ms CPU  commit {ids[name][:12]}")
        print("same commit id from every writer:", len(set(ids.values())) == 1)
    for name, answer in sha256_support().items():
        print(f"  SHA-256 {name:<14} {answer}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
