"""Reading objects out of a git repository: one `git cat-file --batch` per call, exact bytes.

The harness's own reader (snapshot.py reads a repository's history with it), so the harness reads git
without the port's reader (memfs_prompt.git_head), which is code under test.
"""

from __future__ import annotations

import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class GitObject:
    oid: str
    type: str  # blob, tree, commit or tag
    content: bytes


class CatFileError(OSError):
    """git could not answer (not a repository, or its answer was cut short); the message has git's words."""


def read_objects(cwd: Path, env: Mapping[str, str], names: Sequence[str]) -> list[GitObject | None]:
    """The object each name names (an id, or any name cat-file reads without a newline), None where git
    says it is missing."""
    if not names:
        return []
    done = subprocess.run(
        ["git", "cat-file", "--batch"],
        cwd=cwd,
        env=dict(env),
        input=b"".join(name.encode("utf-8") + b"\n" for name in names),
        capture_output=True,
        check=False,
    )  # both pipes drained together: no deadlock however many objects
    if done.returncode != 0:
        raise CatFileError(f"git cat-file --batch in {cwd}: {done.stderr.decode('utf-8', 'replace').strip()}")
    out, position = done.stdout, 0
    found: list[GitObject | None] = []
    for _ in names:
        end = out.find(b"\n", position)
        if end < 0:
            raise CatFileError(f"git cat-file --batch in {cwd}: the answer ended early")
        header = out[position:end]
        position = end + 1
        if header.endswith((b" missing", b" ambiguous")):
            found.append(None)
            continue
        oid, kind, size = header.decode("ascii").split(" ")
        content = out[position : position + int(size)]
        if len(content) != int(size):
            raise CatFileError(f"git cat-file --batch in {cwd}: object {oid} was cut short")
        found.append(GitObject(oid, kind, content))
        position += int(size) + 1  # the newline after the content
    return found
