"""Writing git objects straight into an object database: blobs, trees, commits and annotated tags.

Owns the object format: loose objects (zlib of `<kind> <size>\\0<data>`) named by SHA-1 or SHA-256
(the repository's `object_format`), trees sorted the way git sorts them, gitlink entries (mode
160000) naming a commit by id or by its place in the case's history, and the fixed identities and
dates that make every build of a case give the same object ids. No `git add`: no autocrlf, filters,
hooks or name restrictions of the porcelain (docs/reliability.md).
"""

from __future__ import annotations

import hashlib
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harness.core.repomodel import MODE_GITLINK, MODE_TREE, Blob, CommitModel

AUTHOR = b"Conformance Bot <bot@letta-conformance.invalid>"
EPOCH = 1767225600  # 2026-01-01T00:00:00Z; commit n is dated EPOCH + n minutes
COMMIT_REF = b"commit:"  # a gitlink's data naming the case's own commit n (1-based): `commit:1`


def nested_tree(files: dict[bytes, Blob]) -> dict[bytes, Any]:
    """Flat `a/b/c` paths -> nested dicts of directory name -> subtree or Blob."""
    nested: dict[bytes, Any] = {}
    for path, blob in files.items():
        parts = path.split(b"/")
        node = nested
        for part in parts[:-1]:
            node = node.setdefault(part, {})
        node[parts[-1]] = blob
    return nested


def _tree_sort_key(item: tuple[bytes, Any]) -> bytes:
    name, value = item
    return name + (b"/" if isinstance(value, dict) else b"")


class ObjectWriter:
    """Writes one repository's objects; remembers the commits it wrote, so a gitlink can name commit n."""

    def __init__(self, git_dir: Path, object_format: str = "sha1", commits: list[str] | None = None) -> None:
        self.git_dir, self.algorithm = git_dir, object_format
        self.commits: list[str] = list(commits or [])
        self.trees: dict[str, str] = {}  # commit id -> its tree's id, for the commits written here

    def store(self, kind: bytes, data: bytes) -> bytes:
        """Write one loose object; return its binary id."""
        raw = kind + b" " + str(len(data)).encode("ascii") + b"\0" + data
        oid = hashlib.new(self.algorithm, raw).digest()
        path = self.git_dir / "objects" / oid[:1].hex() / oid[1:].hex()
        if not path.exists():
            path.parent.mkdir(exist_ok=True)
            path.write_bytes(zlib.compress(raw, 1))
        return oid

    def gitlink(self, blob: Blob) -> bytes:
        """The binary commit id a gitlink entry holds: its own hex, or the id of the case's commit n."""
        if blob.data.startswith(COMMIT_REF):
            return bytes.fromhex(self.commits[int(blob.data[len(COMMIT_REF) :]) - 1])
        return bytes.fromhex(blob.data.decode("ascii"))

    def tree(self, files: dict[bytes, Blob]) -> bytes:
        """Store blobs and nested trees; return the root tree's binary id."""

        def store(node: dict[bytes, Any]) -> bytes:
            body = bytearray()
            for name, value in sorted(node.items(), key=_tree_sort_key):
                if isinstance(value, dict):
                    body += MODE_TREE + b" " + name + b"\0" + store(value)
                elif value.mode == MODE_GITLINK:
                    body += MODE_GITLINK + b" " + name + b"\0" + self.gitlink(value)
                else:
                    body += value.mode + b" " + name + b"\0" + self.store(b"blob", value.data)
            return self.store(b"tree", bytes(body))

        return store(nested_tree(files))

    def commit(self, tree: bytes, parents: Sequence[str], commit: CommitModel, index: int) -> str:
        """Store commit `index` (0-based; its default date is EPOCH + index minutes) with these parent ids, in
        order (none: a root commit; two or more: a merge); return its hex id."""
        default = AUTHOR + f" {EPOCH + 60 * index} +0000".encode()
        author = commit.author.encode("utf-8") if commit.author is not None else default
        committer = commit.committer.encode("utf-8") if commit.committer is not None else default
        message = commit.message if commit.message is not None else f"commit {index + 1}"
        lines = [b"tree " + tree.hex().encode()]
        lines += [b"parent " + parent.encode() for parent in parents]
        lines += [b"author " + author, b"committer " + committer, b"", message.encode("utf-8")]
        oid = self.store(b"commit", b"\n".join(lines) + b"\n").hex()
        self.commits.append(oid)
        self.trees[oid] = tree.hex()
        return oid

    def tag(self, target: str, kind: str, name: str) -> str:
        """Store an annotated tag `name` of the object `target` (of type `kind`); return its hex id."""
        tagger = AUTHOR + f" {EPOCH} +0000".encode()
        lines = [b"object " + target.encode(), b"type " + kind.encode(), b"tag " + name.encode(), b"tagger " + tagger]
        return self.store(b"tag", b"\n".join(lines) + b"\n\n" + name.encode() + b"\n").hex()
