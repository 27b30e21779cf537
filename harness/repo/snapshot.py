"""Reading a real memory repository's committed history as a RepoModel (for add-case and reduce).

The history (first-parent chain up to HEAD, or HEAD alone) is read with git plumbing, tree by
tree, as exact bytes: names, contents, symlinks and the executable bit. Each commit keeps its
message and identities when git's commit object can be rebuilt from them, so a linear history
rebuilds with the same commit ids (and the same `memfsRevision`). Git plumbing runs in an isolated
environment; nothing here writes to the repository.
"""

from __future__ import annotations

import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from harness.core.repomodel import MODE_EXEC, MODE_FILE, MODE_LINK, Blob, CommitModel, RepoModel
from harness.repo.catfile import CatFileError, GitObject, read_objects
from harness.repo.gitenv import isolated_env

CANONICAL_MODES = (MODE_FILE, MODE_EXEC, MODE_LINK)


class SnapshotError(Exception):
    """A repository that cannot be written as a scenario; the message says which entry and why."""


@dataclass
class Snapshot:
    model: RepoModel
    source_commits: list[str]  # original ids, oldest first
    notes: list[str] = field(default_factory=list)  # where the rebuilt history cannot have the same ids


def _git(cwd: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, check=False)


def _lines(done: subprocess.CompletedProcess[bytes]) -> list[str]:
    return done.stdout.decode("utf-8").split()


def read_snapshot(memory_dir: Path, *, head_only: bool = False, env: dict[str, str] | None = None) -> Snapshot:
    """The committed history of the repository holding memory_dir, as a RepoModel."""
    env = env or isolated_env(Path(tempfile.gettempdir()) / "letta-conformance-snapshot-home")
    if not memory_dir.exists():
        return Snapshot(RepoModel([], "missing"), [])
    if not memory_dir.is_dir():
        raise SnapshotError(f"{memory_dir} is not a directory")
    top = _git(memory_dir, env, "rev-parse", "--show-toplevel")
    if top.returncode != 0:
        return Snapshot(RepoModel([], "no-git"), [], ["not a git repository: written as kind no-git"])
    prefix = _git(memory_dir, env, "rev-parse", "--show-prefix").stdout.decode("utf-8").strip().rstrip("/")
    head = _git(memory_dir, env, "rev-parse", "--verify", "-q", "HEAD^{commit}")
    if head.returncode != 0:
        return Snapshot(RepoModel([], "unborn", prefix or None), [], ["no commit yet: written as kind unborn"])
    if head_only:
        ids = _lines(head)
    else:
        ids = _lines(_git(memory_dir, env, "rev-list", "--first-parent", "--reverse", "HEAD"))
    root = Path(top.stdout.decode("utf-8").strip())
    notes: list[str] = []
    blobs: dict[str, bytes] = {}
    commits = []
    try:
        for index, (commit_id, obj) in enumerate(zip(ids, read_objects(root, env, ids), strict=True)):
            files = _read_tree(root, env, commit_id, blobs, notes)
            commits.append(_commit_model(obj, commit_id, files, index, head_only, notes))
    except CatFileError as error:
        raise SnapshotError(str(error)) from None
    return Snapshot(RepoModel(commits, "git", prefix or None), ids, notes)


def _read_tree(
    root: Path, env: dict[str, str], commit_id: str, blobs: dict[str, bytes], notes: list[str]
) -> dict[bytes, Blob]:
    listing = _git(root, env, "ls-tree", "-r", "-z", "--full-tree", commit_id)
    if listing.returncode != 0:
        raise SnapshotError(f"git ls-tree {commit_id} failed: {listing.stderr.decode('utf-8', 'replace').strip()}")
    entries: list[tuple[bytes, bytes, str]] = []
    for record in listing.stdout.split(b"\0"):
        if not record:
            continue
        meta, _, path = record.partition(b"\t")
        mode, kind, raw_oid = meta.split(b" ")
        if kind != b"blob":
            raise SnapshotError(
                f"{path.decode('utf-8', 'replace')!r} in {commit_id[:12]} is a {kind.decode()} (a submodule?); "
                "scenarios hold files and symlinks only: remove it from a copy of the repository first"
            )
        if mode not in CANONICAL_MODES:
            notes.append(f"{path.decode('utf-8', 'replace')!r}: mode {mode.decode()} written as 100644")
            mode = MODE_FILE
        entries.append((path, mode, raw_oid.decode("ascii")))
    wanted = [oid for _, _, oid in entries if oid not in blobs]
    for oid, obj in zip(wanted, read_objects(root, env, wanted), strict=True):
        if obj is None:
            raise SnapshotError(f"blob {oid} is missing from the object database (a partial clone?)")
        blobs[oid] = obj.content
    return {path: Blob(mode, blobs[oid]) for path, mode, oid in entries}


def _commit_model(
    obj: GitObject | None, commit_id: str, files: dict[bytes, Blob], index: int, head_only: bool, notes: list[str]
) -> CommitModel:
    """Keep message and identities when the rebuilt commit object can be byte-identical."""
    if obj is None:
        raise SnapshotError(f"commit {commit_id} is missing from the object database")
    header, _, message = obj.content.partition(b"\n\n")
    fields: dict[bytes, list[bytes]] = {}
    for line in header.split(b"\n"):
        key, _, value = line.partition(b" ")
        fields.setdefault(key, []).append(value)
    exact = True
    plain = (b"tree", b"parent", b"author", b"committer")
    extra = sorted(k.decode("utf-8", "replace") for k in fields if k not in plain)
    if extra:
        notes.append(f"commit {commit_id[:12]} has headers {', '.join(extra)} (signed or re-encoded): id will differ")
        exact = False
    if len(fields.get(b"parent", [])) > (0 if index == 0 and not head_only else 1):
        notes.append(f"commit {commit_id[:12]} has parents outside the first-parent chain: id will differ")
        exact = False
    if head_only and fields.get(b"parent"):
        notes.append("--head-only: HEAD is rebuilt without its parents, so its id (memfsRevision) will differ")
        exact = False
    try:
        text = message.decode("utf-8")
    except UnicodeDecodeError:
        notes.append(f"commit {commit_id[:12]}: message is not UTF-8, written lossily: id will differ")
        return CommitModel(files, message.decode("utf-8", "replace"))
    if not text.endswith("\n"):
        notes.append(f"commit {commit_id[:12]}: message has no final newline: id will differ")
        exact = False
    idents = [fields.get(k, [b""])[0].decode("utf-8", "replace") for k in (b"author", b"committer")]
    if not exact:
        return CommitModel(files, text.removesuffix("\n"))
    return CommitModel(files, text.removesuffix("\n"), idents[0], idents[1])


def repository_notes(memory_dir: Path, env: dict[str, str], shown: int = 3) -> list[str]:
    """What to know about a real memory directory before reading a verdict on it (`diff-repo`, `show`), one
    line each: it is in no git repository or one with no commit (upstream compiles no memory file from it),
    its work tree has uncommitted changes (upstream compiles HEAD, so they are not read), or git quotes some
    `.md` names in upstream's `git ls-tree -r --name-only HEAD` listing (upstream drops those files)."""
    if _git(memory_dir, env, "rev-parse", "--git-dir").returncode != 0:
        return [f"{memory_dir} is not in a git repository: upstream compiles no memory file from it"]
    if _git(memory_dir, env, "rev-parse", "--verify", "-q", "HEAD").returncode != 0:
        return [f"{memory_dir} is in a git repository with no commit: upstream compiles no memory file from it"]
    notes = []
    if _git(memory_dir, env, "rev-parse", "--is-inside-work-tree").stdout.strip() == b"true":
        status = _git(
            memory_dir, env, "status", "--porcelain", "-z", "--no-renames", "--untracked-files=all", "--", "."
        )
        changed = [entry for entry in status.stdout.split(b"\0") if entry]
        if changed:
            notes.append(
                f"{memory_dir} has {len(changed)} uncommitted change(s) (git status): upstream compiles "
                "HEAD, so they are not compiled; commit them to compare them"
            )
    printed = _git(memory_dir, env, "ls-tree", "-r", "--name-only", "HEAD").stdout.split(b"\n")
    raw = _git(memory_dir, env, "ls-tree", "-r", "--name-only", "-z", "HEAD").stdout.split(b"\0")
    dropped = [
        shown_name.decode("ascii", "backslashreplace")
        for shown_name, name in zip(printed, raw, strict=False)
        if shown_name.startswith(b'"') and name.endswith(b".md")
    ]
    if dropped:
        more = f" and {len(dropped) - shown} more" if len(dropped) > shown else ""
        notes.append(
            f"{memory_dir}: git quotes {len(dropped)} .md name(s) in upstream's listing, so upstream drops "
            f"those files (docs/quirks.md): {', '.join(dropped[:shown])}{more}"
        )
    return notes
