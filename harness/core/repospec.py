"""The one interpreter of a case's `repo` mapping: from the YAML form to a RepoModel (trees of exact bytes).

Owns what a repository spec means: file contents (text, bom, newlines, repeat, base64, symlinks,
executables, gitlinks), renames, deletions, parents (merges, roots), generated trees, padded listings,
work tree noise, and the repository's shape (layout, object format, HEAD, own configuration; `shape_of`).
The builder (repo.build), the case checks (cases.checks), the reducer and the fuzzer all read a repository
through `model_of`, so they see the same trees. Pure rules over core records: it lives in core so that cases/
and repo/ both read it without importing each other.
"""

from __future__ import annotations

import base64
import hashlib
import json
import random
from datetime import UTC, datetime, timedelta
from typing import Any

from harness.core.listing import config_bool, listing_size, padding, quote_path
from harness.core.model import Scenario
from harness.core.repomodel import (
    MODE_EXEC,
    MODE_FILE,
    MODE_GITLINK,
    MODE_LINK,
    Blob,
    CommitModel,
    InProgress,
    RepoModel,
    RepoShape,
    WorktreeNoise,
)


def file_bytes(content: str | dict[str, Any]) -> Blob:
    """The exact bytes (and mode) a scenario's file content stands for."""
    if isinstance(content, str):
        return Blob(MODE_FILE, content.encode("utf-8"))
    if "symlink" in content:
        return Blob(MODE_LINK, content["symlink"].encode("utf-8"))
    if "symlink_base64" in content:
        return Blob(MODE_LINK, base64.b64decode(content["symlink_base64"]))
    if "gitlink" in content:  # a commit number of this case (1-based), or a commit id
        target = content["gitlink"]
        return Blob(MODE_GITLINK, f"commit:{target}".encode() if isinstance(target, int) else target.encode("ascii"))
    mode = MODE_EXEC if content.get("executable") else MODE_FILE
    if "base64" in content:
        return Blob(mode, base64.b64decode(content["base64"]))
    text = content["text"] * content.get("repeat", 1)
    text = apply_newlines(text, content.get("newlines", "lf"))
    data = text.encode("utf-8")
    if content.get("bom"):
        data = b"\xef\xbb\xbf" + data
    return Blob(mode, data)


def apply_newlines(text: str, style: str) -> str:
    """Rewrite LF line ends as CRLF, CR, or a CRLF/LF/CR rotation (mixed)."""
    if style == "lf":
        return text
    if style == "crlf":
        return text.replace("\n", "\r\n")
    if style == "cr":
        return text.replace("\n", "\r")
    endings = ["\r\n", "\n", "\r"]
    parts = text.split("\n")
    return "".join(p + (endings[i % 3] if i < len(parts) - 1 else "") for i, p in enumerate(parts))


def file_entries(files: dict[str, Any] | list[dict[str, Any]]) -> list[tuple[bytes, Blob]]:
    if isinstance(files, dict):
        return [(name.encode("utf-8"), file_bytes(content)) for name, content in files.items()]
    out = []
    for entry in files:
        name = base64.b64decode(entry["path_base64"]) if "path_base64" in entry else entry["path"].encode("utf-8")
        out.append((name, file_bytes(entry["content"])))
    return out


def path_bytes(path: str | dict[str, str]) -> bytes:
    """A `delete` entry's bytes: text as UTF-8, or `{path_base64}`."""
    return base64.b64decode(path["path_base64"]) if isinstance(path, dict) else path.encode("utf-8")


def commit_parents(commit: dict[str, Any]) -> tuple[int, ...] | None:
    """A scenario commit's `parents` (commit numbers, 1-based) as positions in its history (0-based); None
    when it gives none (its parent is the commit before it)."""
    return tuple(number - 1 for number in commit["parents"]) if "parents" in commit else None


def commit_base(states: list[dict[bytes, Blob]], commit: dict[str, Any]) -> dict[bytes, Blob]:
    """The tree a scenario commit's changes apply to: its first parent's (`parents`), none for a root
    commit (`parents: []`), else the tree of the commit before it."""
    parents = commit_parents(commit)
    if parents is None:
        return states[-1] if states else {}
    return states[parents[0]] if parents else {}


def commit_states(spec: dict[str, Any]) -> list[dict[bytes, Blob]]:
    """The tree after each commit of a `git` repo spec: a commit's changes apply to its first parent's tree
    (commit_base). A generated tree is the first commit's starting tree (its own changes apply on top), a
    listing's padding lands in the last."""
    states: list[dict[bytes, Blob]] = []
    for index, commit in enumerate(spec.get("commits") or [{"message": "generated"}]):
        base = commit_base(states, commit)
        if index == 0 and spec.get("generate"):
            base = {**base, **generated_files(spec["generate"])}
        states.append(next_state(base, commit))
    if spec.get("listing"):
        states[-1] = {**states[-1], **listing_padding(spec, list(states[-1]))}
    return states


def listed_prefix(spec: dict[str, Any]) -> bytes | None:
    """Where `git ls-tree` runs relative to the top of the tree: `memory_subdir` in a work tree; in a
    git directory (bare, git-dir, or core.bare=true) there is no prefix and the whole tree is listed."""
    shape = shape_of(spec)
    bare = config_bool(shape.config, "core.bare", False)
    if shape.layout in ("bare", "git-dir") or bare or not spec.get("memory_subdir"):
        return None
    return str(spec["memory_subdir"]).encode("utf-8")


def listing_padding(spec: dict[str, Any], head: list[bytes]) -> dict[bytes, Blob]:
    """The files `listing: {bytes, directory}` adds to a HEAD holding `head` (every leaf's name), so that
    the listing is `bytes` long (core.listing.padding; ListingError when no padding fits)."""
    listing = spec["listing"]
    prefix = listed_prefix(spec)
    quoted = quote_path(shape_of(spec).config)
    own = listing_size(head, prefix, quoted)
    files = padding(own, listing["bytes"], listing.get("directory", "pad").encode("utf-8"))
    return {(prefix + b"/" if prefix else b"") + name: blob for name, blob in files.items()}


def config_value(value: str | bool | int) -> str:
    """A `config` value as git stores it: booleans as true/false, numbers as decimals."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def shape_of(spec: dict[str, Any]) -> RepoShape:
    """The repository's layout, object format, HEAD, own configuration and listing size."""
    listing = spec.get("listing")
    return RepoShape(
        spec.get("layout", "work-tree"),
        spec.get("object_format", "sha1"),
        spec.get("head", "branch"),
        tuple((key, config_value(value)) for key, value in (spec.get("config") or {}).items()),
        listing["bytes"] if listing else None,
        tuple(spec.get("missing_objects") or ()),
        spec.get("layout_policy"),
    )


def generated_files(spec: dict[str, Any]) -> dict[bytes, Blob]:
    """A seeded tree of `files` Markdown files over `depth` directory levels."""
    rng = random.Random(spec["seed"])
    names = spec.get("name_alphabet", "abcdefghijklmnopqrstuvwxyz0123456789-_")
    text = spec.get("content_alphabet", "abcdefghijklmnopqrstuvwxyz ")
    roots = spec.get("roots", ["system", "", "notes", "skills"])
    depth = spec.get("depth", 2)
    out: dict[bytes, Blob] = {}
    while len(out) < spec["files"]:
        parts = [rng.choice(roots)] if roots else []
        parts += ["".join(rng.choices(names, k=rng.randint(1, 6))) for _ in range(rng.randint(0, depth))]
        parts.append("".join(rng.choices(names, k=rng.randint(1, 10))) + ".md")
        path = "/".join(p for p in parts if p)
        body = "".join(rng.choices(text, k=rng.randint(0, 120)))
        description = "".join(rng.choices(text, k=rng.randint(0, 30)))
        out[path.encode("utf-8")] = Blob(MODE_FILE, f"---\ndescription: {description}\n---\n{body}\n".encode())
    return out


def next_state(state: dict[bytes, Blob], commit: dict[str, Any]) -> dict[bytes, Blob]:
    """The committed files after one scenario commit (renames, then deletions, then files)."""
    state = dict(state)
    for old, new in commit.get("rename", {}).items():
        state[new.encode("utf-8")] = state.pop(old.encode("utf-8"))
    for gone in commit.get("delete", ()):
        state.pop(path_bytes(gone), None)
    state.update(file_entries(commit.get("files", {})))
    return state


def committed_state(spec: dict[str, Any]) -> dict[bytes, Blob]:
    """The files at HEAD of a scenario's repo spec (kind git)."""
    return commit_states(spec)[-1]


def mtime_ns(value: Any) -> int:
    """A `worktree.mtimes` value as nanoseconds since the epoch: seconds (an integer or a decimal) or an ISO 8601
    time with its zone (`2026-01-01T00:00:00Z`, `...+02:00`); ValueError for anything else (a zoneless time
    would be the machine's local time)."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise ValueError("not a time")
    if isinstance(value, str):
        moment = datetime.fromisoformat(value.replace("Z", "+00:00") if value.endswith("Z") else value)
        if moment.tzinfo is None:
            raise ValueError("an ISO time needs its zone (Z or +hh:mm)")
        value = (moment - datetime(1970, 1, 1, tzinfo=UTC)) / timedelta(seconds=1)
    if not 0 <= value < 2**33:
        raise ValueError("seconds since the epoch, from 0")
    return int(value) * 1_000_000_000 if isinstance(value, int) else round(value * 1_000_000) * 1000


def _staged(stage: bool | list[str | dict[str, str]] | None) -> bool | tuple[bytes, ...]:
    """`worktree.stage`: true (everything), false or absent, or the paths `git add` is given."""
    if isinstance(stage, list):
        return tuple(path_bytes(p) for p in stage)
    return bool(stage)


def worktree_noise(noise: dict[str, Any]) -> WorktreeNoise:
    """A `worktree` mapping (or a lifecycle `edit` step, which has its form) as the changes it makes."""
    return WorktreeNoise(
        dict(file_entries(noise.get("files", {}))),
        tuple(path_bytes(p) for p in noise.get("delete", ())),
        _staged(noise.get("stage")),
        {path_bytes(p): mtime_ns(value) for p, value in (noise.get("mtimes") or {}).items()},
    )


def model_of(scenario: Scenario) -> RepoModel:
    """The trees a scenario's repository holds after each commit, and its work tree noise."""
    spec = scenario.repo
    kind = spec.get("kind", "git")
    commits = spec.get("commits") or [{"message": "generated"}]
    worktree = worktree_noise(spec.get("worktree") or {})
    if kind != "git":
        heads = [CommitModel(commit_states(spec)[-1])] if kind != "missing" else []
        return RepoModel(heads, kind, spec.get("memory_subdir"), worktree, shape_of(spec))
    models = [
        CommitModel(state, commit.get("message"), commit.get("author"), commit.get("committer"), commit_parents(commit))
        for commit, state in zip(commits, commit_states(spec), strict=True)
    ]
    started = spec.get("in_progress")
    in_progress = InProgress(started["kind"], started["commit"], started.get("backend", "merge")) if started else None
    return RepoModel(models, kind, spec.get("memory_subdir"), worktree, shape_of(spec), in_progress)


def repo_digest(spec: dict[str, Any]) -> str:
    """Names the built repository: the same spec gives the same bytes on disk."""
    canonical = json.dumps(spec, sort_keys=True, ensure_ascii=True)
    return hashlib.sha256(canonical.encode("ascii")).hexdigest()[:20]


def path_problem(name: bytes) -> str | None:
    """Why a case may not name this path, or None when it stays inside the repository: not empty, not
    absolute, no empty, `.` or `..` component, no `.git` component, no NUL."""
    if not name:
        return "is empty"
    if name.startswith(b"/"):
        return "is absolute"
    for part in name.split(b"/"):
        if part == b"":
            return "has an empty component (a doubled or trailing /)"
        if part in (b".", b".."):
            return f"has a {part.decode()!r} component"
        if part.lower() == b".git":
            return "has a .git component"
        if b"\0" in part:
            return "contains NUL"
    return None


def valid_tree(files: dict[bytes, Blob]) -> bool:
    """Names one git tree can hold: every path confined (path_problem), no file that is also a directory."""
    names = set(files)
    for name in names:
        if path_problem(name) is not None:
            return False
        parts = name.split(b"/")
        if any(b"/".join(parts[:i]) in names for i in range(1, len(parts))):
            return False
    return True
