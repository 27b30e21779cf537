"""What a case's repository spec may name, checked at load time with the file and line at fault.

Owns confinement: every path a case names (committed files, renames, deletions, work tree files
and deletions, generated names, `memory_subdir`) is relative, has no empty, `.` or `..`
component and no `.git` component, so building a case can touch nothing outside its own
repository. Owns the history rules the builder relies on: a rename or deletion names a file
that exists at that commit (not a directory, not a missing path), no path is a file and a
directory in one tree, every text can be written as UTF-8 (no lone surrogates), base64 is
valid and sizes stay under their limits; a commit's `parents`, a `reset` and a `conversation`
step name one made before them, and no lifecycle step commits while HEAD is broken (`_check_steps`).
And which keys belong to which kind of case, and which shapes (layout, object format, HEAD,
config, gitlinks, listing size) go together.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from harness.cases.yamlnodes import line_at
from harness.core.listing import ListingError
from harness.core.model import ScenarioError
from harness.core.protocol import OPS
from harness.core.repospec import generated_files, listed_prefix, listing_padding, mtime_ns, path_problem

MAX_FILE_BYTES = 64 * 1024 * 1024  # one repository file after `repeat`
LIFECYCLE_KEYS = ("steps", "facts", "model", "delivery", "golden", "recorded")
OP_KEYS = ("op", "args")
SHAPE_KEYS = ("layout", "object_format", "head", "config", "listing", "missing_objects", "layout_policy")
# the layouts a lifecycle case may take: a work tree, its `.git` a directory or a file (docs/cases.md)
LIFECYCLE_LAYOUTS = ("work-tree", "separate-git-dir")
CONFIG_SECTIONS = ("core", "color", "log", "format", "i18n", "diff", "grep", "advice", "column", "pretty")
CONFIG_REFUSED = (  # keys that run programs or point git outside the repository
    "core.fsmonitor",
    "core.hookspath",
    "core.pager",
    "core.editor",
    "core.sshcommand",
    "core.askpass",
    "core.gitproxy",
    "core.worktree",
    "core.alternaterefscommand",
    "core.repositoryformatversion",
    "diff.external",
)
CONFIG_KEY = re.compile(r"^[A-Za-z][A-Za-z0-9-]*(\.[^\n]+)?\.[A-Za-z][A-Za-z0-9-]*$")
CONFINED = "a case may only name paths inside its own repository (relative, like system/persona.md)"


def _shown(name: bytes) -> str:
    return repr(name.decode("utf-8", "backslashreplace"))


class _Checker:
    """Walks one case's repository spec in build order, keeping the set of committed file names."""

    def __init__(self, path: Path, root: yaml.Node, repo: dict[str, Any], kind: str) -> None:
        self.path, self.root = path, root
        self.state: set[bytes] = set()
        self.states: list[set[bytes]] = []  # the tree of each commit walked so far, for `parents` and `reset`
        self.commits = 0  # commits walked so far: a gitlink, a parent or a reset may name commit 1..commits
        self.hex_digits = 64 if repo.get("object_format") == "sha256" else 40
        self.gitlinks = kind == "compile" and repo.get("kind", "git") == "git"

    def fail(self, where: list[Any], message: str) -> ScenarioError:
        return ScenarioError(self.path, line_at(self.root, where), message)

    def confined(self, where: list[Any], name: bytes, what: str) -> bytes:
        problem = path_problem(name)
        if problem:
            raise self.fail(where, f"{what}: path {_shown(name)} {problem}; {CONFINED}")
        return name

    def existing(self, where: list[Any], name: bytes, what: str, files: set[bytes]) -> None:
        """A rename or deletion must name a file that is there."""
        if name in files:
            return
        prefix = name + b"/"
        if any(f.startswith(prefix) for f in files):
            raise self.fail(where, f"{what}: {_shown(name)} is a directory here; name each file in it")
        raise self.fail(where, f"{what}: {_shown(name)} does not exist at this point of the history; remove it")

    def earlier(self, where: list[Any], number: int, what: str) -> int:
        """A commit number (1-based) that names a commit already walked; its position (0-based)."""
        if number > self.commits:
            raise self.fail(
                where,
                f"{what}: {number} names commit {number}, but only {self.commits} commit(s) come "
                "before this point of the case; name an earlier commit (1 is the first)",
            )
        return number - 1

    def commit(self, where: list[Any], commit: dict[str, Any], base: set[bytes] | None = None) -> None:
        """One commit over `base` (default: the tree walked last), or over its first parent's tree when it
        names `parents`: renames, then deletions, then files (core.repospec.next_state's order)."""
        if "parents" in commit:
            parents = commit["parents"]
            for index, number in enumerate(parents):
                self.earlier([*where, "parents", index], number, "parents")
            base = self.states[parents[0] - 1] if parents else set()
        self.state = set(self.state if base is None else base)
        for old, new in commit.get("rename", {}).items():
            key = [*where, "rename", old]
            self.existing(key, self.confined(key, old.encode("utf-8"), "rename"), "rename", self.state)
            self.state.discard(old.encode("utf-8"))
            self.state.add(self.confined(key, new.encode("utf-8"), "rename"))
        for index, gone in enumerate(commit.get("delete", ())):
            spot = [*where, "delete", index]
            name = self.confined(spot, _path_bytes(gone), "delete")
            self.existing(spot, name, "delete", self.state)
            self.state.discard(name)
        for spot, name, content in self.files(where, commit.get("files", {})):
            self.content(spot, name, content)
            self.state.add(name)
        self.tree(where, self.state)
        self.states.append(set(self.state))
        self.commits += 1

    def files(
        self, where: list[Any], files: dict[str, Any] | list[dict[str, Any]]
    ) -> Iterator[tuple[list[Any], bytes, Any]]:
        if isinstance(files, dict):
            for name, content in files.items():
                spot = [*where, "files", name]
                yield spot, self.confined(spot, name.encode("utf-8"), "files"), content
            return
        for index, entry in enumerate(files):
            spot = [*where, "files", index]
            yield spot, self.confined(spot, _path_bytes(entry.get("path", entry)), "files"), entry["content"]

    def content(self, where: list[Any], name: bytes, content: Any) -> None:
        shown = name.decode("utf-8", "replace")
        if isinstance(content, dict) and "text" in content:
            size = len(content["text"].encode("utf-8", "surrogatepass")) * content.get("repeat", 1)
            if size > MAX_FILE_BYTES:
                raise self.fail(
                    where,
                    f"{shown}: text x repeat is {size} bytes, over the {MAX_FILE_BYTES}-byte limit; lower `repeat`",
                )
        if isinstance(content, dict) and "gitlink" in content:
            self.gitlink([*where, "gitlink"], shown, content["gitlink"])
        for key in ("base64", "symlink_base64"):
            if isinstance(content, dict) and key in content:
                try:
                    base64.b64decode(content[key], validate=True)
                except ValueError:
                    raise self.fail(where, f"{shown}: {key} is not valid; encode the bytes with base64") from None

    def gitlink(self, where: list[Any], shown: str, target: int | str) -> None:
        """A gitlink names an earlier commit of this case, or an id of the repository's object format."""
        if not self.gitlinks:
            raise self.fail(where, f"{shown}: a gitlink is only for a committed tree of a compile case (kind git)")
        if isinstance(target, int) and target > self.commits:
            raise self.fail(
                where,
                f"{shown}: gitlink {target} names commit {target}, but only {self.commits} "
                "commit(s) come before this one; name an earlier commit (1 is the first)",
            )
        if isinstance(target, str) and len(target) != self.hex_digits:
            raise self.fail(
                where,
                f"{shown}: gitlink id has {len(target)} hex digits; this repository's object "
                f"format takes {self.hex_digits}",
            )

    def tree(self, where: list[Any], files: set[bytes]) -> None:
        """No name may be a file and a directory in one tree."""
        for name in sorted(files):
            parts = name.split(b"/")
            for depth in range(1, len(parts)):
                if b"/".join(parts[:depth]) in files:
                    clash = _shown(b"/".join(parts[:depth]))
                    raise self.fail(
                        where,
                        f"{clash} is a file and also a directory (of {_shown(name)}) in one tree; "
                        "delete the file in the commit that adds the directory",
                    )


def _path_bytes(path: str | dict[str, str]) -> bytes:
    if isinstance(path, dict):
        return base64.b64decode(path["path_base64"]) if "path_base64" in path else path["path"].encode("utf-8")
    return path.encode("utf-8")


def _strings(value: Any, where: list[Any]) -> Iterator[tuple[list[Any], str]]:
    """Every string (keys too) under a value, with where it is."""
    if isinstance(value, str):
        yield where, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield [*where, key], key
            yield from _strings(item, [*where, key])
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _strings(item, [*where, index])


def _lone_surrogate(text: str) -> str | None:
    return next((f"U+{ord(ch):04X}" for ch in text if "\ud800" <= ch <= "\udfff"), None)


def check_content(path: Path, root: yaml.Node, data: dict[str, Any], kind: str) -> None:
    """Checks the schema cannot express; raises ScenarioError at the first problem."""
    repo = data["repo"]
    checker = _Checker(path, root, repo, kind)
    _check_kind(checker, data, kind)
    _check_shape(checker, repo)
    commit_steps = [
        (["steps", i, key], step[key])
        for i, step in enumerate(data.get("steps", ()))
        for key in ("commit", "amend")
        if key in step
    ]
    for where, text in [*_strings(repo, ["repo"]), *(pair for w, c in commit_steps for pair in _strings(c, w))]:
        surrogate = _lone_surrogate(text)
        if surrogate:
            raise checker.fail(
                where,
                f"{'/'.join(map(str, where))}: lone surrogate {surrogate} cannot be written "
                "as UTF-8; give exact bytes with base64 (or path_base64)",
            )
    if repo.get("memory_subdir"):
        checker.confined(["repo", "memory_subdir"], repo["memory_subdir"].encode("utf-8"), "memory_subdir")
    if repo.get("generate"):  # the first commit's starting tree (core.repospec.commit_states)
        for name in generated_files(repo["generate"]):
            checker.confined(["repo", "generate"], name, "generate")
            checker.state.add(name)
        checker.tree(["repo", "generate"], checker.state)
    for index, commit in enumerate(repo.get("commits", ())):
        checker.commit(["repo", "commits", index], commit)
    if not checker.commits:  # no commits: one, holding the generated tree (or nothing)
        checker.states.append(set(checker.state))
        checker.commits = 1
    if repo.get("listing"):
        _check_listing(checker, repo)
    head = set(checker.state)
    for index, name in enumerate(repo.get("missing_objects", ())):
        _check_missing_object(checker, ["repo", "missing_objects", index], name, head)
    _check_worktree(checker, ["repo", "worktree"], repo.get("worktree") or {}, head, "worktree")
    if "in_progress" in repo:
        _check_in_progress(checker, repo, kind)
    if kind == "lifecycle":
        _check_steps(checker, data["steps"])


def _check_worktree(
    checker: _Checker, where: list[Any], worktree: dict[str, Any], head: set[bytes], label: str
) -> set[bytes]:
    """`repo.worktree` (or a lifecycle `edit` step, `label` naming it) over a work tree holding `head`: a deletion
    names a file there, a date a file there after the change, a staged path one it writes or deletes. The files
    the work tree holds after it."""
    written = {name for _, name, _ in checker.files(where, worktree.get("files", {}))}
    for index, gone in enumerate(worktree.get("delete", ())):
        spot = [*where, "delete", index]
        checker.existing(
            spot, checker.confined(spot, _path_bytes(gone), f"{label} delete"), f"{label} delete", head | written
        )
    deleted = {_path_bytes(gone) for gone in worktree.get("delete", ())}
    _check_mtimes(checker, where, label, worktree.get("mtimes") or {}, (head | written) - deleted)
    if isinstance(worktree.get("stage"), list):
        for index, staged in enumerate(worktree["stage"]):
            if _path_bytes(staged) not in written | deleted:
                raise checker.fail(
                    [*where, "stage", index],
                    f"{label} stage: {_shown(_path_bytes(staged))} is not written or deleted by this `{label}`; "
                    "stage only paths listed under its `files` or `delete`",
                )
    return (head | written) - deleted


def _check_mtimes(checker: _Checker, where: list[Any], label: str, mtimes: dict[str, Any], files: set[bytes]) -> None:
    """`worktree.mtimes` dates files the work tree holds (committed or written, not deleted), with a time."""
    for name, value in mtimes.items():
        spot = [*where, "mtimes", name]
        path = checker.confined(spot, name.encode("utf-8"), f"{label} mtimes")
        if path not in files:
            what = "a directory" if any(f.startswith(path + b"/") for f in files) else "not in the work tree"
            raise checker.fail(
                spot,
                f"{label} mtimes: {_shown(path)} is {what}; date a file that is committed or in {label} files "
                f"(and not in {label} delete)",
            )
        try:
            mtime_ns(value)
        except ValueError as error:
            raise checker.fail(
                spot,
                f"{label} mtimes: {_shown(path)}: {value!r} is not a time ({error}); give seconds since the "
                "epoch (1767225660) or an ISO 8601 time with its zone (2026-01-01T00:01:00Z)",
            ) from None


def _check_in_progress(checker: _Checker, repo: dict[str, Any], kind: str) -> None:
    """`in_progress` (harness.repo.in_progress): an op case's or a lifecycle case's work-tree repository (the
    post-turn sync reads it), another commit than HEAD."""
    started, where = repo["in_progress"], ["repo", "in_progress"]
    if kind not in ("op", "lifecycle"):
        raise checker.fail(
            where,
            "in_progress: only op and lifecycle cases take it (compilers read HEAD); move the file to cases/ops/",
        )
    if repo.get("kind", "git") != "git" or repo.get("layout", "work-tree") != "work-tree":
        raise checker.fail(
            where, "in_progress: git stops a merge or rebase in a work tree: use kind git and layout work-tree"
        )
    checker.earlier([*where, "commit"], started["commit"], "in_progress commit")
    if started["commit"] == checker.commits:
        raise checker.fail(
            [*where, "commit"],
            f"in_progress: commit {started['commit']} is HEAD itself (the last commit); name a commit on another "
            "line of the history (give the last commit `parents` that leave it out)",
        )
    if "backend" in started and started["kind"] != "rebase":
        raise checker.fail(
            [*where, "backend"], f"in_progress: backend is a rebase's; remove it from a {started['kind']}"
        )


def _check_missing_object(checker: _Checker, where: list[Any], name: str, head: set[bytes]) -> None:
    """`HEAD:<path>` names a file or a directory of the last commit."""
    if name in ("HEAD", "HEAD:"):
        return
    path = checker.confined(where, name.removeprefix("HEAD:").encode("utf-8"), "missing_objects")
    if path not in head and not any(f.startswith(path + b"/") for f in head):
        raise checker.fail(
            where,
            f"missing_objects: {name!r} names no file or directory of the last commit; write "
            "HEAD (the commit), HEAD: (its root tree) or HEAD:<path> of a committed path",
        )


def _check_kind(checker: _Checker, data: dict[str, Any], kind: str) -> None:
    """Steps only in lifecycle cases; a lifecycle case starts from a committed git repository at its root."""
    repo = data["repo"]
    if kind == "lifecycle":
        if "steps" not in data:
            raise checker.fail([], "a lifecycle case needs `steps` (turns, commits, ...); see docs/cases.md")
        if repo.get("kind", "git") != "git":
            raise checker.fail(["repo", "kind"], "repo: a lifecycle case starts from a committed git repo (kind: git)")
        if "client_skills" in data.get("inputs", {}):
            raise checker.fail(
                ["inputs", "client_skills"],
                "inputs.client_skills: a compile input; in a lifecycle case give "
                "`client_skills` on the turn steps that send it",
            )
        if "delivery" in data and "golden" not in data:
            raise checker.fail(["delivery"], "delivery: only golden cases choose it (upstream has one delivery)")
        bare = [key for key in repo.get("config") or {} if key.lower() == "core.bare"]
        if bare:
            raise checker.fail(
                ["repo", "config", bare[0]],
                f"config: {bare[0]} is not for a lifecycle case: "
                "upstream's turn loop works in the memory directory's work tree; make this a "
                "compile case",
            )
        _check_lifecycle_shape(checker, repo)
        if repo.get("memory_subdir"):
            raise checker.fail(
                ["repo", "memory_subdir"],
                "memory_subdir: not in a lifecycle case: upstream runs `git init` inside "
                "the subdirectory (a nested repository committed with the real clock), so the harness's commits "
                "would not be what it reads; probe the repository root, or make this a compile case",
            )
        return
    present = [k for k in LIFECYCLE_KEYS if k in data]
    if present:
        raise checker.fail(
            [present[0]], f"{present[0]}: only lifecycle cases take it; move the file to cases/lifecycle/"
        )
    if kind == "op":
        _check_op(checker, data)
    elif present := [k for k in OP_KEYS if k in data]:
        raise checker.fail([present[0]], f"{present[0]}: only op cases take it; move the file to cases/ops/")


def _check_op(checker: _Checker, data: dict[str, Any]) -> None:
    """An op case names an op that op cases can send (OPS rows with `case=True`), and has no golden output."""
    served = sorted(name for name, row in OPS.items() if row.case)
    if "op" not in data:
        raise checker.fail([], f"an op case needs `op` (one of {', '.join(served)}) and its `args`; see docs/cases.md")
    if data["op"] not in served:
        raise checker.fail(
            ["op"], f"op: {data['op']!r} is not an op a case can send; write one of {', '.join(served) or '(none yet)'}"
        )
    if "expect" in data:
        raise checker.fail(["expect"], "expect: op cases are compared with real releases only; remove it")
    if "inputs" in data:
        raise checker.fail(["inputs"], "inputs: compile inputs; an op case's request fields go in `args`")
    reserved = [key for key in data.get("args", {}) if key in ("op", "id", "memoryDir", "profile")]
    if reserved:
        raise checker.fail(
            ["args", reserved[0]],
            f"args: {reserved[0]!r} is set by the harness (the copy's path, the profile); remove it",
        )
    if data["op"] == "memory_write":
        _check_memory_write(checker, data.get("args", {}))


#: a memory_write case's request fields (docs/protocol.md): the tool's command, its other arguments, the agent,
#: the backend's sync
MEMORY_WRITE_KEYS = ("command", "args", "agentId", "agentName", "syncMode")


def _check_memory_write(checker: _Checker, args: Any) -> None:
    """`args` of a memory_write case: `command` (a string), the tool's `args` (a mapping without `command`),
    `agentId` and `agentName` (strings or null), `syncMode` (local, remote or null), nothing else."""
    if not isinstance(args, dict) or not isinstance(args.get("command"), str):
        raise checker.fail(["args"], "args: a memory_write case needs `command: <create|str_replace|...>` in args")
    unknown = [key for key in args if key not in MEMORY_WRITE_KEYS]
    if unknown:
        raise checker.fail(
            ["args", unknown[0]],
            f"args: {unknown[0]!r} is not a memory_write field ({', '.join(MEMORY_WRITE_KEYS)}); "
            "the tool's own arguments go in args.args",
        )
    tool_args = args.get("args", {})
    if not isinstance(tool_args, dict):
        raise checker.fail(["args", "args"], "args.args: the tool's arguments as a mapping, e.g. {reason: why, ...}")
    if "command" in tool_args:
        raise checker.fail(["args", "args", "command"], "args.args: `command` goes one level up, in args")
    for key in ("agentId", "agentName"):
        if args.get(key) is not None and not isinstance(args[key], str):
            raise checker.fail(["args", key], f"args.{key}: a string, or null for the default")
    if args.get("syncMode") not in (None, "local", "remote"):
        raise checker.fail(["args", "syncMode"], "args.syncMode: local, remote, or null for local")


def _check_steps(checker: _Checker, steps: list[dict[str, Any]]) -> None:
    """A lifecycle case's steps in order, as harness.repo.checkout runs them: a commit goes on the branch tip
    (or on its `parents`), an amend rewrites the tip, a reset names a commit made before it, nothing commits
    while HEAD is broken, an `edit` deletes and dates files the work tree holds, and a `conversation` step names a
    conversation made before it."""
    tip: int | None = checker.commits - 1
    broken: list[Any] = []
    conversations = 1  # the one opened with the agent
    worktree = set(checker.states[-1])  # the files the work tree holds: the tip's, then as edits leave them
    for index, step in enumerate(steps):
        where: list[Any] = ["steps", index]
        if "commit" in step or "amend" in step:
            key = "commit" if "commit" in step else "amend"
            if tip is None:
                raise checker.fail(
                    [*where, key],
                    f"{key}: HEAD is broken here (break_head on line "
                    f"{line_at(checker.root, broken)}), so there is no branch tip to commit on; "
                    "put a `reset: N` step before it",
                )
            if key == "amend" and "parents" in step["amend"]:
                raise checker.fail(
                    [*where, "amend", "parents"],
                    "amend: keeps HEAD's own parents; to choose parents, use a commit step",
                )
            checker.commit([*where, key], step[key], checker.states[tip])
            tip = checker.commits - 1
            worktree = set(checker.states[tip])
        elif "reset" in step:
            tip = checker.earlier([*where, "reset"], step["reset"], "reset")
            worktree = set(checker.states[tip])
        elif "edit" in step:
            worktree = _check_worktree(checker, [*where, "edit"], step["edit"], worktree, "edit")
        elif "break_head" in step:
            tip, broken = None, [*where, "break_head"]
        elif "conversation" in step and step["conversation"] > conversations:
            raise checker.fail(
                [*where, "conversation"],
                f"conversation: {step['conversation']} names conversation "
                f"{step['conversation']}, but only {conversations} are made before this step (1 is "
                "the one opened with the agent, then each new_conversation and "
                "agent_free_conversation step); name an earlier one",
            )
        conversations += "new_conversation" in step or "agent_free_conversation" in step


def _check_lifecycle_shape(checker: _Checker, repo: dict[str, Any]) -> None:
    """A lifecycle case takes `config` and `layout: separate-git-dir` (a work tree whose `.git` is a file);
    upstream's turn loop starts from a work tree on a branch, so nothing else of the shape."""
    layout = repo.get("layout", "work-tree")
    if layout not in LIFECYCLE_LAYOUTS:
        raise checker.fail(
            ["repo", "layout"],
            f"layout: {layout} not in a lifecycle case: upstream's turn loop works in a work tree; "
            f"use {' or '.join(LIFECYCLE_LAYOUTS)}, or make this a compile case",
        )
    shaped = [key for key in SHAPE_KEYS if key in repo and key not in ("config", "layout")]
    if shaped:
        raise checker.fail(
            ["repo", shaped[0]],
            f"{shaped[0]}: not in a lifecycle case: upstream's turn loop "
            "starts from a work tree on a branch; make this a compile case",
        )


def _check_shape(checker: _Checker, repo: dict[str, Any]) -> None:
    """Layouts, object formats, HEADs, config and listings need a git repository; each config key is
    one git reads from the repository without running a program or leaving it."""
    kind = repo.get("kind", "git")
    for key in SHAPE_KEYS:
        if key in repo and kind not in ("git", "unborn"):
            raise checker.fail(["repo", key], f"{key}: only for a git repository (kind git or unborn), not {kind}")
    if kind == "unborn" and repo.get("head", "branch") != "branch":
        raise checker.fail(
            ["repo", "head"],
            "head: an unborn repository has no commit to point HEAD at; remove head or add commits (kind git)",
        )
    if kind == "unborn" and "missing_objects" in repo:
        raise checker.fail(
            ["repo", "missing_objects"], "missing_objects: an unborn repository has no objects to lose; use kind git"
        )
    if kind == "unborn" and "listing" in repo:
        raise checker.fail(["repo", "listing"], "listing: an unborn repository lists nothing; use kind git")
    if repo.get("layout") == "bare" and repo.get("worktree"):
        raise checker.fail(
            ["repo", "worktree"],
            "worktree: a bare repository has no work tree; remove it, "
            "or use layout git-dir (a work tree beside the git directory)",
        )
    for key in repo.get("config") or {}:
        section = key.split(".", 1)[0].lower()
        if not CONFIG_KEY.match(key):
            raise checker.fail(
                ["repo", "config", key],
                f"config: {key!r} is not a git config name; write "
                "section.key or section.subsection.key (core.quotePath)",
            )
        driver = section == "diff" and key.count(".") > 1  # diff.<driver>.command / textconv run programs
        if section not in CONFIG_SECTIONS or key.lower() in CONFIG_REFUSED or driver:
            raise checker.fail(
                ["repo", "config", key],
                f"config: {key!r} may run a program or lead git outside "
                f"the repository; a case may set keys of {', '.join(CONFIG_SECTIONS)} but not "
                f"{', '.join(CONFIG_REFUSED)} or diff drivers",
            )


def _check_listing(checker: _Checker, repo: dict[str, Any]) -> None:
    """The padding can reach `bytes`, and its directory is confined and used by no file of the case."""
    listing = repo["listing"]
    directory = listing.get("directory", "pad")
    where = ["repo", "listing", "directory"] if "directory" in listing else ["repo", "listing"]
    checker.confined(where, directory.encode("utf-8"), "listing directory")
    prefix = listed_prefix(repo)
    full = (prefix + b"/" if prefix else b"") + directory.encode("utf-8")
    for name in sorted(checker.state):
        if name == full or name.startswith(full + b"/") or full.startswith(name + b"/"):
            raise checker.fail(
                where,
                f"listing: the padding directory {_shown(full)} clashes with the case's file "
                f"{_shown(name)}; choose another `directory`",
            )
    try:
        listing_padding(repo, sorted(checker.state))
    except ListingError as error:
        raise checker.fail(["repo", "listing", "bytes"], f"listing: {error}") from None
