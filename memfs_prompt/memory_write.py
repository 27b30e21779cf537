"""Upstream's memory write tool: `memory({command, reason, ...})` on a local memory repository.

letta-code before 0.33.3 gives the model a `memory` tool (`src/tools/impl/Memory.ts` in 0.25.x,
`src/tools/impl/memory.ts` from 0.30.28 to 0.33.2) with six commands: `create`, `str_replace`, `insert`,
`delete`, `rename`, `update_description`. Each checks its arguments, refuses a repository with uncommitted
changes, writes the memory file (its frontmatter re-rendered from `description` and `read_only` alone),
stages the paths it touched and commits them with the tool's `reason` as the message, authored by the agent
(`<agent id>@letta.com`). What the model gets back is one line (`Memory str_replace committed locally
(1a2b3c4).`) or the exception's message; `memfs_prompt.protocol` answers them as `written` and `thrown`.

This module owns that tool as a local backend runs it (`capabilities.localMemfs`: commit, never push; the
memory format is always memfs-v1 there, `detectMemoryFormat(dir, true)`), and as a remote MemFS backend runs it
where that too only commits (`WriteCall.sync_mode` "remote", `Profile.remote_write_hook_policy`; 0.30.28 to
0.33.2: `commitMemoryWrite` with `syncMode: "remote"` commits the same paths the same way and leaves the push to
the harness after the turn). There the message is `Memory X committed (1a2b3c4); harness will sync after the
turn.`, the hook's policy is `root-marker` from 0.31.12 (`installPreCommitHook(dir, true)`), and the identity
config is set only where the repository has none (`ensureLocalMemfsGitConfig`). Not ported there: the remote's
own config (`maybeUpdateMemoryRemoteOrigin`, `configureLocalCredentialHelper`: an `origin` and a credential
helper, repository config no answer shows) and the memfs-v2 format a remote backend detects from a `MEMORY.md`
(0.31.12+, `detectMemoryFormat(dir, false)`), answered unsupported. 0.25.x's remote mode pushes pending
commits before the write and pushes its commit (replaying it on newer remote memory) after: the port runs it up
to the first push, so a refusal of the arguments is answered, and a push is unsupported.

`Profile.memory_write` says which tool a release has: `""` none, `noop-message` (0.25.x: a write that changes
nothing is a message), `noop-error` (0.30.28: it is an error, "surface no-op memory writes as errors", and
every git command runs with `-c commit.gpgsign=false`), `format-aware` (0.31.12 to 0.33.2: `create` checks its
path before its description).

Upstream installs its pre-commit and post-commit hooks before committing; the port writes none but runs the
pre-commit hook's rules (memfs_prompt.commit_validation, the `legacy-only` policy the tool installs) where git
would run the hook, and a refusal fails the commit as upstream's does: the touched paths unstaged again, the
work tree keeping the write, the thrown text git's `Command failed` with the hook's lines. Left out: the
post-commit hook (it pushes only where a memory-repository remote is configured, which a local backend has not).
"""

from __future__ import annotations

import math
import os
import re
import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .commit_validation import NotPorted, validate_staged
from .errors import UpstreamError
from .git_command import run_git
from .memory_repo import install_hooks
from .profiles import Profile
from .quirks import js_trim, js_utf8_encode

DEFAULT_AGENT_ID = "agent-local-00000000-0000-4000-8000-000000000001"  # reference/driver.mjs's WRITE_AGENT_ID
DIRTY = "Memory repo has uncommitted changes. Commit, discard, or sync them before using memory tools."
_FRONTMATTER = re.compile(r"---\r?\n([\s\S]*?)\r?\n---\r?\n?([\s\S]*)\Z")
_WINDOWS_ABSOLUTE = re.compile(r"[a-zA-Z]:[\\/]")
_LINE_BREAK = re.compile(r"\r?\n")


@dataclass(frozen=True)
class WriteCall:
    """One call: the memory directory (MEMORY_DIR), the command, the model's other arguments in order, and
    the agent (its id, and its name as the backend knows it: None for an agent the backend does not know)."""

    memory_dir: str
    command: str
    args: Mapping[str, Any]
    agent_id: str = DEFAULT_AGENT_ID
    agent_name: str | None = None
    sync_mode: str = "local"  # the backend's: "local" (`capabilities.localMemfs`) or "remote" (a remote MemFS)


@dataclass(frozen=True)
class _Parsed:
    description: str
    read_only: str | None
    body: str


class _Tool:
    """One call of the tool on one memory directory (`memoryDir` absolute, as `resolve(MEMORY_DIR)`)."""

    def __init__(self, call: WriteCall, profile: Profile, git_env: Mapping[str, str] | None) -> None:
        self.call = call
        self.args = {"command": call.command, **call.args}
        self.profile = profile
        self.git_env = git_env
        self.memory_dir = os.path.normpath(os.path.join(os.getcwd(), call.memory_dir))
        # 0.30.28+ run every git command with `-c commit.gpgsign=false` (GIT_DISABLE_COMMIT_SIGNING_ARGS)
        self.git_prefix = () if profile.memory_write == "noop-message" else ("-c", "commit.gpgsign=false")
        self.remote = call.sync_mode == "remote"


def memory_write(call: WriteCall, profile: Profile, git_env: Mapping[str, str] | None) -> str:
    """`memory(args)`: the message the model receives; UpstreamError where upstream throws."""
    tool = _Tool(call, profile, git_env)
    args = tool.args
    missing = [key for key in ("command", "reason") if key not in args]
    if missing:  # validateRequiredParams(args, ["command", "reason"], "memory")
        plural = "s" if len(missing) > 1 else ""
        raise UpstreamError(
            f"Error: memory tool missing required parameter{plural}: {', '.join(missing)}. "
            f"Received parameters: {', '.join(args)}"
        )
    if not isinstance(args["reason"], str):
        raise NotImplementedError("a reason that is not a string (JavaScript's TypeError text is the runtime's)")
    reason = js_trim(args["reason"])
    if not reason:
        raise UpstreamError("Error: memory: 'reason' must be a non-empty string")
    _ensure_memory_repo(tool.memory_dir)
    agent_id = js_trim(call.agent_id)
    if not agent_id:
        raise UpstreamError("Error: memory: unable to resolve agent id for git author email")
    author = js_trim(call.agent_name or "") or agent_id
    if (
        tool.remote
        and tool.profile.memory_write == "format-aware"
        and os.path.exists(os.path.join(tool.memory_dir, "MEMORY.md"))
    ):  # detectMemoryFormat(memoryDir, localMemfs): a remote backend writes memfs-v2 where MEMORY.md is
        raise NotImplementedError("the memory tool's memfs-v2 format (a remote MemFS backend and a MEMORY.md)")
    _assert_clean(tool)
    pushes = tool.remote and not tool.profile.remote_write_hook_policy
    if pushes:
        _assert_nothing_to_push(tool)
    paths = _apply(tool)
    if pushes:  # commitAndSyncMemoryWrite, remote mode: the commit is pushed (replayed on newer remote memory)
        raise NotImplementedError(f"{tool.profile.name}'s remote memory sync (the tool pushes its commit)")
    return _commit(tool, paths, reason, agent_id, author)


def _assert_nothing_to_push(tool: _Tool) -> None:
    """0.25.x's `assertMemoryRepoReadyForWrite` in remote mode, after the clean check:
    `pushCleanPendingMemoryCommitsForWrite` prepares the repository (its hooks among it) and pushes when HEAD is
    ahead of its upstream (`git rev-list --left-right --count HEAD...@{u}`; none configured: nothing to push),
    then the tool refuses a repository still ahead. With nothing to push none of it reaches the remote, and the
    tool's checks of its arguments come next, as under a local backend; a push is not ported."""
    install_hooks(Path(tool.memory_dir))
    counts = _git_or_none(tool, "rev-list", "--left-right", "--count", "HEAD...@{u}")
    ahead = (counts or "").split()
    if ahead and ahead[0].isdigit() and int(ahead[0]) > 0:
        raise NotImplementedError(
            f"{tool.profile.name}'s remote memory sync (the tool pushes the {ahead[0]} pending commit(s) first)"
        )


def _ensure_memory_repo(memory_dir: str) -> None:
    if not os.path.exists(memory_dir):
        raise UpstreamError(f"Error: memory: memory directory does not exist: {memory_dir}")
    if not os.path.exists(os.path.join(memory_dir, ".git")):
        raise UpstreamError(
            f"Error: memory: {memory_dir} is not a git repository. This tool requires a git-backed memory filesystem."
        )


def _assert_clean(tool: _Tool) -> None:
    """`assertMemoryRepoReadyForWrite` (local) / `assertMemoryRepoCleanForWrite`: no uncommitted change at all;
    from 0.30.28 the message names dirty Markdown files that look like UTF-16."""
    status = _git(tool, "status", "--porcelain")
    if not js_trim(status):
        return
    details = "" if tool.profile.memory_write == "noop-message" else _encoding_details(tool.memory_dir, status)
    raise UpstreamError(f"Error: {DIRTY}{details}")


def _encoding_details(memory_dir: str, status: str) -> str:
    """`describeDirtyMarkdownEncodingIssues`: each dirty `.md` file (not deleted) with a UTF-16 BOM or a NUL."""
    issues = []
    for line in _LINE_BREAK.split(status):
        line = line.rstrip(" \t\n\r\v\f\u00a0\ufeff")
        if len(line) < 4 or line[:2] in (" D", "D ", "DD"):
            continue
        path = line[3:].split(" -> ")[-1]
        path = re.sub(r'^"|"$', "", path)
        target = os.path.join(memory_dir, path)
        if not path.endswith(".md") or not os.path.exists(target):
            continue
        data = Path(target).read_bytes()
        if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
            issues.append(f"{path} has {'UTF-16LE' if data[0] == 0xFF else 'UTF-16BE'} BOM")
        elif b"\0" in data:
            issues.append(f"{path} contains NUL bytes, possibly UTF-16")
    return f" Dirty markdown encoding issue(s): {'; '.join(issues)}." if issues else ""


# --- the commands ------------------------------------------------------------------------------


def _apply(tool: _Tool) -> list[str]:
    """`applyMemoryCommand`: the repository-relative paths the command touched."""
    command = tool.args["command"]
    run = _COMMANDS.get(command) if isinstance(command, str) else None
    if run is None:
        raise UpstreamError(f"Error: Unsupported memory command: {_js_string(command)}")
    return run(tool)


def _create(tool: _Tool) -> list[str]:
    args = tool.args
    path_arg = _require(args.get("file_path"), "file_path", "create")
    early = tool.profile.memory_write != "format-aware"  # 0.31.12+ check the description after the path
    description = _require(args.get("description"), "description", "create") if early else ""
    label = _label(tool.memory_dir, path_arg, "file_path")
    file_path = _resolve_inside(tool.memory_dir, f"{label}.md")
    rel_path = _repo_relative(tool.memory_dir, file_path)
    if not early:
        description = _require(args.get("description"), "description", "create")
    body = args.get("file_text")
    if body is None:
        body = ""
    if not isinstance(body, str):
        raise NotImplementedError("a file_text that is not a string (JavaScript's template stringification)")
    rendered = _render(description, None, body)
    if os.path.exists(file_path):
        raise UpstreamError(f"Error: memory create: block already exists at {path_arg}")
    os.makedirs(os.path.dirname(file_path), exist_ok=True)
    _write(file_path, rendered)
    return [rel_path]


def _str_replace(tool: _Tool) -> list[str]:
    args = tool.args
    path_arg = _require(args.get("file_path"), "file_path", "str_replace")
    old = _require(args.get("old_string"), "old_string", "str_replace")
    new = _require(args.get("new_string"), "new_string", "str_replace")
    file_path, rel_path = _target(tool, path_arg, "file_path")
    parsed = _load_editable(file_path, path_arg)
    index = parsed.body.find(old)
    if index == -1:
        raise UpstreamError("Error: memory str_replace: old_string was not found in the target memory block")
    body = parsed.body[:index] + new + parsed.body[index + len(old) :]
    _write(file_path, _render(parsed.description, parsed.read_only, body))
    return [rel_path]


def _insert(tool: _Tool) -> list[str]:
    args = tool.args
    path_arg = _require(args.get("file_path"), "file_path", "insert")
    text = _require(args.get("insert_text"), "insert_text", "insert")
    line = args.get("insert_line")
    if isinstance(line, bool) or not isinstance(line, int | float) or (isinstance(line, float) and math.isnan(line)):
        raise UpstreamError("Error: memory insert: 'insert_line' must be a number")
    file_path, rel_path = _target(tool, path_arg, "file_path")
    parsed = _load_editable(file_path, path_arg)
    number = max(1, math.floor(line))  # Math.max(1, Math.floor(insert_line))
    lines = parsed.body.split("\n") if parsed.body else []
    at = min(max(number - 1, 0), len(lines))
    lines[at:at] = text.split("\n")
    _write(file_path, _render(parsed.description, parsed.read_only, "\n".join(lines)))
    return [rel_path]


def _delete(tool: _Tool) -> list[str]:
    path_arg = _require(tool.args.get("file_path"), "file_path", "delete")
    label = _label(tool.memory_dir, path_arg, "file_path")
    target = _resolve_inside(tool.memory_dir, label)
    if os.path.exists(target) and os.path.isdir(target):  # a directory goes whole, read_only files and all
        rel_dir = _repo_relative(tool.memory_dir, target)
        shutil.rmtree(target)
        return [rel_dir]
    file_path = _resolve_inside(tool.memory_dir, f"{label}.md")
    rel_path = _repo_relative(tool.memory_dir, file_path)
    _load_editable(file_path, path_arg)
    os.unlink(file_path)
    return [rel_path]


def _rename(tool: _Tool) -> list[str]:
    args = tool.args
    old_arg = _require(args.get("old_path"), "old_path", "rename")
    new_arg = _require(args.get("new_path"), "new_path", "rename")
    old_label = _label(tool.memory_dir, old_arg, "old_path")
    new_label = _label(tool.memory_dir, new_arg, "new_path")
    old_file = _resolve_inside(tool.memory_dir, f"{old_label}.md")
    new_file = _resolve_inside(tool.memory_dir, f"{new_label}.md")
    old_rel = _repo_relative(tool.memory_dir, old_file)
    new_rel = _repo_relative(tool.memory_dir, new_file)
    if os.path.exists(new_file):
        raise UpstreamError(f"Error: memory rename: destination already exists at {new_arg}")
    _load_editable(old_file, old_arg)
    os.makedirs(os.path.dirname(new_file), exist_ok=True)
    os.rename(old_file, new_file)
    return [old_rel, new_rel]


def _update_description(tool: _Tool) -> list[str]:
    args = tool.args
    path_arg = _require(args.get("file_path"), "file_path", "update_description")
    description = _require(args.get("description"), "description", "update_description")
    file_path, rel_path = _target(tool, path_arg, "file_path")
    parsed = _load_editable(file_path, path_arg)
    _write(file_path, _render(description, parsed.read_only, parsed.body))
    return [rel_path]


_COMMANDS: dict[str, Callable[[_Tool], list[str]]] = {
    "create": _create,
    "str_replace": _str_replace,
    "insert": _insert,
    "delete": _delete,
    "rename": _rename,
    "update_description": _update_description,
}


# --- paths: normalizeMemoryLabel, resolveMemoryPath, toRepoRelative ---------------------------------


def _require(value: Any, field: str, command: str) -> str:
    """`requireString`: a string that is not blank once trimmed."""
    if not isinstance(value, str) or not js_trim(value):
        raise UpstreamError(f"Error: memory {command}: '{field}' must be a non-empty string")
    return value


def _target(tool: _Tool, path_arg: str, field: str) -> tuple[str, str]:
    """The memory file a path argument names (`<label>.md`), absolute and repository-relative."""
    file_path = _resolve_inside(tool.memory_dir, f"{_label(tool.memory_dir, path_arg, field)}.md")
    return file_path, _repo_relative(tool.memory_dir, file_path)


def _label(memory_dir: str, path_arg: str, field: str) -> str:
    """`normalizeMemoryLabel`: a memory-relative path (or an absolute one inside the memory directory) as a label."""
    raw = js_trim(path_arg)
    if not raw:
        raise UpstreamError(f"Error: memory: '{field}' must be a non-empty string")
    if raw.startswith(("~/", "$HOME/")):
        raise UpstreamError(
            f"Error: memory: '{field}' must be a memory-relative file path, not a home-relative filesystem path"
        )
    if raw.startswith("/") or _WINDOWS_ABSOLUTE.match(raw):
        rel = _relative(memory_dir, os.path.normpath(os.path.join(os.getcwd(), raw)))
        if rel and not rel.startswith("..") and not rel.startswith("/"):
            return _relative_label(rel, field)
        raise UpstreamError(
            f"Error: The memory tool can only be used to modify files in {{{memory_dir}}} "
            "or provided as a relative path"
        )
    return _relative_label(raw, field)


def _relative_label(path: str, field: str) -> str:
    """`normalizeRelativeMemoryLabel`: backslashes as slashes, one `memory/` prefix and one `.md` suffix off."""
    raw = js_trim(path)
    if not raw:
        raise UpstreamError(f"Error: memory: '{field}' must be a non-empty string")
    normalized = raw.replace("\\", "/")
    if normalized.startswith("/"):
        raise UpstreamError(f"Error: memory: '{field}' must be a relative path like system/contacts.md")
    label = normalized.removeprefix("memory/")
    label = label[:-3] if label.endswith(".md") else label
    segments = [segment for segment in label.split("/") if segment]
    if not segments:
        raise UpstreamError(f"Error: memory: '{field}' resolves to an empty memory label")
    for segment in segments:
        if segment in (".", ".."):
            raise UpstreamError(f"Error: memory: '{field}' contains invalid path traversal segment")
        if "\0" in segment:
            raise UpstreamError(f"Error: memory: '{field}' contains invalid null bytes")
    return "/".join(segments)


def _relative(start: str, target: str) -> str:
    """node's `path.relative(start, target)` for two absolute, normalised paths ("" when they are the same)."""
    return "" if start == target else os.path.relpath(target, start)


def _resolve_inside(memory_dir: str, path: str) -> str:
    """`resolveMemoryPath`: refused when the relative path back starts with `..` (a label `..notes` too)."""
    absolute = os.path.normpath(os.path.join(memory_dir, path))
    if _relative(memory_dir, absolute).startswith(".."):
        raise UpstreamError("Error: memory: resolved path escapes memory directory")
    return absolute


def _repo_relative(memory_dir: str, absolute: str) -> str:
    rel = _relative(memory_dir, absolute)
    if not rel or rel.startswith(".."):
        raise UpstreamError("Error: memory: path is outside memory repository")
    return rel.replace("\\", "/")


# --- the file: loadEditableMemoryFile, parseMemoryFile, renderMemoryFile -----------------------------


def _load_editable(file_path: str, source: str) -> _Parsed:
    try:
        data = Path(file_path).read_bytes()
    except OSError as error:
        raise UpstreamError(f"Error: memory: failed to read {source}: {_node_fs_message(error, file_path)}") from None
    parsed = _parse(data.decode("utf-8", "replace"))
    if parsed.read_only == "true":
        raise UpstreamError(f"Error: memory: {source} is read_only and cannot be modified")
    return parsed


def _node_fs_message(error: OSError, file_path: str) -> str:
    """`readFile`'s rejection message: `ENOENT: no such file or directory, open '<path>'`."""
    if isinstance(error, FileNotFoundError):
        return f"ENOENT: no such file or directory, open '{file_path}'"
    if isinstance(error, IsADirectoryError):
        return "EISDIR: illegal operation on a directory, read"
    raise NotImplementedError(f"node's message for {type(error).__name__} reading a memory file") from error


def _parse(content: str) -> _Parsed:
    """`parseMemoryFile` (memfs-v1): the last `description:` and `read_only:` lines, trimmed; the rest dropped."""
    match = _FRONTMATTER.match(content)
    if not match:
        raise UpstreamError("Error: memory: target file is missing required frontmatter")
    fields: dict[str, str] = {}
    for line in _LINE_BREAK.split(match.group(1)):
        index = line.find(":")
        if index > 0:
            fields[js_trim(line[:index])] = js_trim(line[index + 1 :])
    description = fields.get("description")
    if not description or not js_trim(description):
        raise UpstreamError("Error: memory: target file frontmatter is missing 'description'")
    return _Parsed(description, fields.get("read_only"), match.group(2))


def _render(description: str, read_only: str | None, body: str) -> str:
    """`renderMemoryFile`: `description` (newlines as spaces) and `read_only` if it was there, then the body."""
    description = js_trim(description)
    if not description:
        raise UpstreamError("Error: memory: 'description' must not be empty")
    lines = ["---", f"description: {js_trim(_LINE_BREAK.sub(' ', description))}"]
    if read_only is not None:
        lines.append(f"read_only: {read_only}")
    lines.append("---")
    header = "\n".join(lines)
    return f"{header}\n{body}" if body else f"{header}\n"


def _write(file_path: str, text: str) -> None:
    """`writeFile(path, text, "utf8")`: a lone surrogate is written as U+FFFD."""
    Path(file_path).write_bytes(js_utf8_encode(text))


def _js_string(value: Any) -> str:
    return value if isinstance(value, str) else str(value)


# --- git: commitMemoryWrite in local mode --------------------------------------------------------


def _commit(tool: _Tool, paths: list[str], reason: str, agent_id: str, author: str) -> str:
    """Stage the touched paths and commit them as the agent; the message for the model."""
    command = tool.args["command"]
    pathspecs = [path for path in dict.fromkeys(paths) if js_trim(path)]
    if not pathspecs:
        return _no_change(
            tool,
            f"Memory {command} made no changes: it produced no changed paths. "
            "Verify the command targets the intended file(s) and actually modifies content.",
            f"Memory {command} completed with no changed paths.",
        )
    install_hooks(Path(tool.memory_dir))  # prepare(LocalOnly)MemoryRepoForGitOps: a `.git` file cannot take hooks
    email = f"{agent_id}@letta.com"
    if tool.remote:
        _remote_identity(tool, agent_id, email)
    else:
        _git(tool, "config", "--local", "letta.agentId", agent_id)
        _git(tool, "config", "--local", "user.email", email)
        _git(tool, "config", "--local", "user.name", js_trim(author) or "Letta Agent")
    if tool.profile.memory_write != "noop-message" and not js_trim(_git_config(tool, "commit.gpgsign")):
        _git(tool, "config", "--local", "commit.gpgsign", "false")  # 0.30.28+: only where the repository says nothing
    _git(tool, "add", "-A", "--", *pathspecs)
    if not js_trim(_git(tool, "status", "--porcelain", "--", *pathspecs)):
        return _no_change(
            tool,
            f"Memory {command} made no effective changes; nothing was committed. "
            "The resulting content matched what was already on disk.",
            f"Memory {command} made no effective changes; skipped commit.",
        )
    commit = ("-c", f"user.name={js_trim(author) or agent_id}", "-c", f"user.email={email}", "commit", "-m", reason)
    try:
        _run_hook(tool, commit)
        _git(tool, *commit)
    except UpstreamError:
        _git_or_none(tool, "reset", "HEAD", "--", *pathspecs)  # unstageMemoryPaths: the work tree keeps the write
        raise
    sha = js_trim(_git(tool, "rev-parse", "HEAD"))
    if tool.remote:
        return f"Memory {command} committed ({sha[:7]}); harness will sync after the turn."
    return f"Memory {command} committed locally ({sha[:7]})."


def _remote_identity(tool: _Tool, agent_id: str, email: str) -> None:
    """`ensureLocalMemfsGitConfig` (a remote backend's `prepareMemoryRepoForGitOps`): the agent id always, the
    identity only where the repository has none (the name: the agent's as the backend knows it, else `Letta
    Agent`). Its failures are swallowed upstream ("never block memfs startup on it")."""
    if js_trim(_git_config(tool, "letta.agentId")) != agent_id:
        _git_or_none(tool, "config", "--local", "letta.agentId", agent_id)
    if not js_trim(_git_config(tool, "user.email")):
        _git_or_none(tool, "config", "--local", "user.email", email)
    if not js_trim(_git_config(tool, "user.name")):
        _git_or_none(tool, "config", "--local", "user.name", js_trim(tool.call.agent_name or "") or "Letta Agent")


def _run_hook(tool: _Tool, commit: tuple[str, ...]) -> None:
    """The pre-commit hook `git commit` runs, as prepareLocalOnlyMemoryRepoForGitOps installed it (installPreCommitHook
    without a root layout: the `legacy-only` policy from 0.31.12), or a remote backend's prepareMemoryRepoForGitOps
    (`Profile.remote_write_hook_policy`). A refusal fails the commit: node's `Command failed:
    git <arguments>`, then git's stderr, which is all the hook printed (git adds nothing of its own)."""
    try:
        policy = tool.profile.remote_write_hook_policy if tool.remote else "legacy-only"
        validation = validate_staged(Path(tool.memory_dir), tool.profile, tool.git_env, policy=policy)
    except NotPorted as what:
        raise NotImplementedError(str(what)) from None
    if not validation.accepted:
        printed = "".join(line + "\n" for line in validation.messages)
        raise UpstreamError(f"Error: Command failed: git {' '.join((*tool.git_prefix, *commit))}\n{printed}")


def _no_change(tool: _Tool, error: str, message: str) -> str:
    """A write that changed nothing: a message in 0.25.x, an error from 0.30.28."""
    if tool.profile.memory_write == "noop-message":
        return message
    raise UpstreamError(f"Error: {error}")


def _git(tool: _Tool, *args: str) -> str:
    """`runGit` in the memory directory: its stdout; a failure is node's `Command failed: git ...` and stderr."""
    argv = (*tool.git_prefix, *args)
    done = run_git(tool.memory_dir, tool.git_env, *argv)
    if done.returncode != 0:
        stderr = done.stderr.decode("utf-8", "replace")
        raise UpstreamError(f"Error: Command failed: git {' '.join(argv)}\n{stderr}")
    return done.stdout.decode("utf-8", "replace")


def _git_config(tool: _Tool, key: str) -> str:
    """`getLocalGitConfig`: the local value, "" where git has none (or fails)."""
    return _git_or_none(tool, "config", "--local", "--get", key) or ""


def _git_or_none(tool: _Tool, *args: str) -> str | None:
    try:
        return _git(tool, *args)
    except UpstreamError:
        return None
