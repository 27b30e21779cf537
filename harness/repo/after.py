"""What a repository looks like after an op wrote to it: the `repoAfter` an op case compares (cases/ops/).

Owns `repository_after`: HEAD (the ref it names, or detached), HEAD's commit as git stores it but its id
(message, author, committer, parents, tree id), every entry of HEAD's tree with mode and object id, the
index's entries with their stage, and every work-tree file with its bytes (text when it is UTF-8 and short,
else its size and sha256), `.git` left out. Commit ids are left out on purpose: two sides that wrote the same
commit at the same pinned time have the same ids anyway, and a difference shows as the field that made it.
Git plumbing runs in the isolated environment it is given; nothing here writes to the repository.
"""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path
from typing import Any

#: a work-tree file at most this long and valid UTF-8 is shown as its text; a longer one as size and digest
TEXT_LIMIT = 4096


def _git(memory_dir: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["git", *args], cwd=memory_dir, env=env, capture_output=True, check=False)


def _z_lines(done: subprocess.CompletedProcess[bytes]) -> list[str]:
    return [part.decode("utf-8", "surrogateescape") for part in done.stdout.split(b"\0") if part]


def _head(memory_dir: Path, env: dict[str, str]) -> dict[str, Any]:
    """HEAD's ref and commit (its id left out), or what stands in for a HEAD that names nothing."""
    ref = _git(memory_dir, env, "symbolic-ref", "-q", "HEAD").stdout.decode("utf-8").strip() or "(detached)"
    commit = _git(memory_dir, env, "cat-file", "commit", "HEAD")
    if commit.returncode != 0:
        return {"ref": ref, "commit": None}
    headers, _, message = commit.stdout.decode("utf-8", "surrogateescape").partition("\n\n")
    fields: dict[str, Any] = {"parents": []}
    for line in headers.splitlines():
        key, _, value = line.partition(" ")
        if key == "parent":
            fields["parents"].append(value)
        elif key in ("tree", "author", "committer"):
            fields[key] = value
    return {"ref": ref, "commit": {**fields, "message": message}}


def _tree(memory_dir: Path, env: dict[str, str]) -> list[str]:
    """HEAD's tree, recursively, as `mode type id<TAB>path` lines (empty without a commit)."""
    return _z_lines(_git(memory_dir, env, "ls-tree", "-r", "-z", "--full-tree", "HEAD"))


def _index(memory_dir: Path, env: dict[str, str]) -> list[str]:
    """The index's entries as `mode id stage<TAB>path` lines (`git ls-files -s`), unmerged stages included."""
    return _z_lines(_git(memory_dir, env, "ls-files", "-s", "-z"))


def _file(path: Path) -> Any:
    if path.is_symlink():
        return {"symlink": str(path.readlink())}
    data = path.read_bytes()
    if len(data) <= TEXT_LIMIT:
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            pass
    return {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}


def _work_tree(memory_dir: Path) -> dict[str, Any]:
    """Every file under the memory directory but `.git`, by relative path in sorted order."""
    files: dict[str, Any] = {}
    for path in sorted(memory_dir.rglob("*")):
        relative = path.relative_to(memory_dir)
        if relative.parts[0] == ".git" or (path.is_dir() and not path.is_symlink()):
            continue
        files[relative.as_posix()] = _file(path)
    return files


def repository_after(memory_dir: Path, env: dict[str, str]) -> dict[str, Any]:
    """The repository at `memory_dir` as an op left it (module docstring); no directory: `{"missing": true}`."""
    if not memory_dir.is_dir():
        return {"missing": True}
    return {
        "head": _head(memory_dir, env),
        "tree": _tree(memory_dir, env),
        "index": _index(memory_dir, env),
        "files": _work_tree(memory_dir),
    }
