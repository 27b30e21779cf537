"""`compile_system_prompt`: the port of upstream `compileLocalSystemPrompt`.

Stateless: reads the committed HEAD of a memory directory and returns the compile
record. The per-conversation cache lives elsewhere.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .frontmatter import parse_frontmatter
from .git_head import CommittedHead, open_committed_head
from .jsvalues import JsDate, as_js_date, format_utc_timestamp, js_number_to_string
from .profiles import DEFAULT, Profile
from .quirks import (
    bun_pragma_literal,
    decode_utf8_lossy,
    exceeds_exec_max_buffer,
    js_replace_all,
    js_trim,
    js_trim_end,
    locale_compare_key,
    sha256_hex_of_js_string,
)
from .render_v1 import MemoryFile, render_memfs_v1
from .render_v2 import is_v2_repository, render_memfs_v2, v2_reads_body

CORE_MEMORY_VARIABLE = "{CORE_MEMORY}"


@dataclass(frozen=True)
class CompiledPrompt:
    content: str
    core_memory: str
    compiled_at: str
    raw_system_hash: str
    memfs_revision: str | None
    has_core_memory_field: bool = True

    def to_json(self) -> dict[str, Any]:
        """The record with upstream's keys and key order; absent fields are left out, as JSON.stringify does."""
        record: dict[str, Any] = {"content": self.content}
        if self.has_core_memory_field:
            record["coreMemory"] = self.core_memory
        record["compiledAt"] = self.compiled_at
        record["rawSystemHash"] = self.raw_system_hash
        if self.memfs_revision is not None:
            record["memfsRevision"] = self.memfs_revision
        return record


def listed_memory_paths(head: CommittedHead) -> list[str]:
    """What upstream keeps of `git ls-tree -r --name-only HEAD`: each printed line decoded as UTF-8 (invalid
    bytes become U+FFFD), trimmed, `\\` made `/`, ending `.md`. A quoted name ends in `"` and is dropped."""
    if exceeds_exec_max_buffer(sum(len(e.listed) + 1 for e in head.entries)):
        return []  # upstream's ls-tree throws ENOBUFS and its catch returns no files
    paths = []
    for entry in head.entries:
        path = normalize_path(js_trim(decode_utf8_lossy(entry.listed)))
        if path and path.endswith(".md"):
            paths.append(path)
    return paths


def normalize_path(value: str) -> str:
    """Upstream `normalizePath`: backslashes become slashes."""
    return value.replace("\\", "/")


def label_from_path(relative_path: str) -> str:
    return relative_path[: -len(".md")] if relative_path.endswith(".md") else relative_path


def memory_file(path: str, raw: bytes | None, profile: Profile) -> MemoryFile | None:
    """One read file as upstream keeps it; None where `git show` failed (upstream's try/catch skips it)."""
    if raw is None or exceeds_exec_max_buffer(len(raw)):
        return None
    parsed = parse_frontmatter(decode_utf8_lossy(raw), profile.frontmatter)
    description = parsed.frontmatter.get("description")
    return MemoryFile(
        path, label_from_path(path), parsed.body, js_trim(description) if isinstance(description, str) else ""
    )


_HEADS: ContextVar[dict[tuple[str, tuple[tuple[str, str], ...] | None], CommittedHead] | None] = ContextVar(
    "heads", default=None
)


@contextmanager
def one_reading_of_head() -> Iterator[None]:
    """Inside, each memory directory's HEAD is read once (per git environment) and every compile of it uses that
    reading; for a caller that compiles a repository nothing changes several ways (a matrix, under each profile),
    which saves the git processes each compile would start."""
    heads: dict[tuple[str, tuple[tuple[str, str], ...] | None], CommittedHead] = {}
    token = _HEADS.set(heads)
    try:
        yield
    finally:
        _HEADS.reset(token)
        for head in heads.values():
            head.close()


def collect_memory_files(
    memory_dir: Path, profile: Profile, git_env: Mapping[str, str] | None = None
) -> tuple[list[MemoryFile], str | None, bool]:
    """Files (sorted by label, as upstream sorts), the HEAD revision, and whether the tree is memfs-v2."""
    heads = _HEADS.get()
    key = (str(memory_dir), tuple(sorted(git_env.items())) if git_env is not None else None)
    head = heads.get(key) if heads is not None else None
    if head is None:
        head = open_committed_head(memory_dir, git_env)
        if heads is not None:
            heads[key] = head
    try:
        if head.revision is None:
            return [], None, False
        paths = listed_memory_paths(head)
        v2 = profile.memfs_v2 and is_v2_repository(paths)
        all_paths = set(paths)
        to_read = [p for p in paths if not v2 or v2_reads_body(p, all_paths)]
        # each file is parsed as git answers, while git looks up the next
        read = {
            path: memory_file(path, raw, profile) for path, raw in zip(to_read, head.iter_paths(to_read), strict=True)
        }
        files = []
        for path in paths:
            if v2 and not v2_reads_body(path, all_paths):
                files.append(MemoryFile(path, label_from_path(path), "", ""))
            elif (file := read[path]) is not None:
                files.append(file)
        files.sort(key=lambda f: locale_compare_key(f.label))
        return files, head.revision, v2
    finally:
        if heads is None:
            head.close()


def compile_memory_metadata(
    agent_id: str, conversation_id: str, compiled_at: datetime | JsDate, previous: int | float
) -> str:
    """Upstream `compileMemoryMetadata`: the clock through `formatUtcTimestamp`, the count as `${n}` prints a JS
    number (`jsvalues.js_number_to_string`: `9007199254740992`, `1e+21`, `3`, `-5`)."""
    return "\n".join(
        [
            "<memory_metadata>",
            f"- AGENT_ID: {agent_id}",
            f"- CONVERSATION_ID: {conversation_id}",
            f"- System prompt last recompiled: {format_utc_timestamp(as_js_date(compiled_at))}",
            f"- {js_number_to_string(previous)} previous messages between you and the user are stored in recall memory",
            "</memory_metadata>",
        ]
    )


def inject_core_memory(raw_system_prompt: str, core_memory: str) -> str:
    """Replace `{CORE_MEMORY}`, or append it after the trimmed prompt when absent."""
    prompt = (
        raw_system_prompt
        if CORE_MEMORY_VARIABLE in raw_system_prompt
        else f"{js_trim_end(raw_system_prompt)}\n\n{CORE_MEMORY_VARIABLE}"
    )
    return js_replace_all(prompt, CORE_MEMORY_VARIABLE, core_memory)


def compile_system_prompt(
    memory_dir: str | Path,
    *,
    system: str,
    agent_id: str,
    conversation_id: str,
    now: datetime | JsDate | None = None,
    previous_message_count: int | float = 0,
    include_memfs: bool = True,
    profile: Profile = DEFAULT,
    git_env: Mapping[str, str] | None = None,
) -> CompiledPrompt:
    """Compile the system prompt for the memory repository at `memory_dir`, as `profile` does.

    `git_env` is the environment for the git processes (default: inherited, as upstream's is).
    `now` is the Date upstream is given (`jsvalues.parse_js_date` reads a string as `new Date` does; an
    Invalid Date makes the compile throw `RangeError`, as `toISOString` does); `previous_message_count` is
    any JS number.
    """
    compiled_at = as_js_date(now if now is not None else datetime.now(UTC))
    if include_memfs or not profile.honours_include_memfs:
        files, revision, v2 = collect_memory_files(Path(memory_dir), profile, git_env)
    else:
        files, revision, v2 = [], None, False
    literal = bun_pragma_literal if profile.pragma_latin1_literals else _identity
    memfs = render_memfs_v2(files) if v2 else render_memfs_v1(files, literal)
    metadata = "" if v2 else compile_memory_metadata(agent_id, conversation_id, compiled_at, previous_message_count)
    core_memory = "\n\n".join(part for part in (memfs, metadata) if js_trim(part))
    return CompiledPrompt(
        content=inject_core_memory(system, core_memory),
        core_memory=core_memory,
        compiled_at=compiled_at.to_iso_string(),  # after rendering, as upstream: an Invalid Date throws here
        raw_system_hash=sha256_hex_of_js_string(system),
        memfs_revision=revision,
        has_core_memory_field=profile.returns_core_memory,
    )


def _identity(value: str) -> str:
    return value
