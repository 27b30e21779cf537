"""Every first-parent commit of an upstream repository from A to B with its compiler module, built
from source (harness.acquire.revision_build) and named by its sha256.

A commit whose build inputs (the source files bun read for the previous build, with the names
beside them, plus tsconfig.json, build.js and the release build entry) carry the same blobs as the
previous commit's has the same module and is not built again; `exhaustive` builds every commit.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.acquire.releases import ensure_bun
from harness.acquire.revision_build import RevisionBuild, build_in_tree, cached_build, repository_tree
from harness.acquire.revision_source import BuildError, SourceTree, git, list_tree, resolve_commit


@dataclass
class Commit:
    commit: str
    date: str
    subject: str


def first_parent_commits(repo: Path, start: str, end: str = "HEAD") -> list[Commit]:
    """`start`, then every first-parent commit after it up to `end`, oldest first."""
    first = resolve_commit(repo, start)
    last = resolve_commit(repo, end)
    fmt = "--format=%H%x1f%aI%x1f%s"
    head = git(repo, "log", "-1", fmt, first).decode("utf-8", "replace").strip()
    rest = git(repo, "log", "--first-parent", "--reverse", fmt, f"{first}..{last}").decode("utf-8", "replace")
    rows = [Commit(*line.split("\x1f", 2)) for line in [head, *rest.splitlines()] if line]
    if rows[-1].commit != last:
        raise ValueError(f"{end} is not a first-parent descendant of {start}")
    return rows


@dataclass
class ScanRow:
    commit: str
    date: str
    subject: str
    version: str | None
    module: str | None  # compiler module sha256; None when the build failed
    error: str | None = None
    built: bool = True  # False: same build inputs as the previous commit, module reused
    pragma: bool | None = None
    release_entry: str | None = None


def _fingerprint(tree_entries: dict[str, Any], build: RevisionBuild) -> tuple[Any, ...]:
    """What a commit's module depends on: the blobs bun read, the names next to them (a new file
    can change how an import resolves), tsconfig.json, build.js and the release entry."""
    paths = set(build.compiler.inputs) | {"tsconfig.json", "build.js", "bunfig.toml"}
    if build.release_entry:
        paths.add(build.release_entry)
    dirs = {str(Path(p).parent) for p in build.compiler.inputs}
    neighbours = sorted(p for p in tree_entries if str(Path(p).parent) in dirs)
    blobs = tuple((p, tree_entries[p].blob if p in tree_entries else None) for p in sorted(paths))
    return blobs, tuple(neighbours)


def scan(
    repo: Path,
    commits: list[Commit],
    *,
    exhaustive: bool = False,
    progress: Callable[[int, ScanRow], None] | None = None,
) -> list[ScanRow]:
    """Build (or reuse) every commit's compiler module; one row per commit, in order."""
    repo = repo.expanduser().resolve()
    bun = ensure_bun()
    rows: list[ScanRow] = []
    previous: tuple[tuple[Any, ...], RevisionBuild] | None = None
    with repository_tree(repo) as tree:
        for index, item in enumerate(commits):
            entries = list_tree(repo, item.commit)
            row: ScanRow
            if not exhaustive and previous is not None and _fingerprint(entries, previous[1]) == previous[0]:
                build = previous[1]
                version = _version_at(repo, item.commit)
                row = ScanRow(
                    item.commit,
                    item.date,
                    item.subject,
                    version,
                    build.module_key,
                    None,
                    False,
                    build.pragma,
                    build.release_entry,
                )
            else:
                try:
                    build = _cached_or_built(tree, item.commit, bun)
                except BuildError as error:
                    rows.append(
                        ScanRow(item.commit, item.date, item.subject, _version_at(repo, item.commit), None, str(error))
                    )
                    previous = None
                    if progress:
                        progress(index, rows[-1])
                    continue
                previous = (_fingerprint(entries, build), build)
                row = ScanRow(
                    item.commit,
                    item.date,
                    item.subject,
                    build.version,
                    build.module_key,
                    None,
                    True,
                    build.pragma,
                    build.release_entry,
                )
            rows.append(row)
            if progress:
                progress(index, row)
    return rows


def _cached_or_built(tree: SourceTree, commit: str, bun: Path) -> RevisionBuild:
    found = cached_build(commit)
    return found if found is not None else build_in_tree(tree, commit, bun)


def _version_at(repo: Path, commit: str) -> str | None:
    try:
        version: str | None = json.loads(git(repo, "show", f"{commit}:package.json")).get("version")
        return version
    except (BuildError, ValueError):
        return None


def first_release_with(repo: Path, commit: str) -> str | None:
    """The oldest release tag (`v*`, by version) whose history holds `commit`."""
    tags = git(repo, "tag", "--contains", commit, "--list", "v[0-9]*").decode().split()
    releases = [t for t in tags if "-" not in t]  # not prereleases (v0.7.4-next.1)

    def key(tag: str) -> tuple[int, ...]:
        return tuple(int(part) if part.isdigit() else -1 for part in tag.removeprefix("v").split("."))

    return min(releases, key=key).removeprefix("v") if releases else None
