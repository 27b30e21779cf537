"""Reference driver: the Letta server's own Python (PyPI `letta` <= 0.16.8) answering JSON-lines requests.

Run by the python of the venv reference/letta_server/install.py creates (`ensure_server_env`):

    $VENV/bin/python reference/letta_server/driver.py

Protocol: reference/driver.mjs's `hello` and `compile` ops (one JSON object per line, split on
"\\n" only; every answer echoes the id):
  {"id":1,"op":"hello"}        -> {"id":1,"ok":true,"info":{"product":"letta-server","version":...}}
  {"id":2,"op":"compile","memoryDir":...,"system":...,"agentId":...,"conversationId":...,
   "now":"ISO","previousMessageCount":0,"includeMemfs":true}
                               -> {"id":2,"ok":true,"record":{...},"polluted":false}
  upstream raised              -> {"id":2,"ok":true,"thrown":"ValidationError: ...","polluted":false}
  an ISO-shaped now that Python's datetime cannot hold (day 32, hour 24, year 0, ...; JavaScript's
  Date accepts some of these)
                               -> {"id":2,"ok":true,"thrown":"UnrepresentableDate: ...","polluted":false}
  bad request                  -> {"id":2,"ok":false,"error":"..."}
Lifecycle ops are answered with ok=false: the server's conversation loop needs its database.

A compile does what the server does for a git-backed agent (tag `git-memory-enabled`):
  1. the git directory of the repository whose root is memoryDir (its .git directory, the directory a
     `.git` file names, or memoryDir itself when it is a git directory: `repository_git_dir`) is put
     into a LocalStorageBackend by upstream's own `GitOperations._upload_repo` (the server keeps
     repositories in object storage, one git directory each, not in a work tree: this is the one
     adaptation), under a storage id derived from agentId; a subdirectory of a work tree or of a git
     directory is no repository's root, and nothing is stored;
  2. `MemfsClient.get_blocks_async` (memfs_client_base) reads HEAD as upstream does: downloads the
     .git files to a temporary directory, `git ls-tree -r --name-only HEAD`, `git show HEAD:<path>`,
     `path_mapping.memory_block_label_from_markdown_path`, `block_markdown.parse_block_markdown`, a
     pydantic `Block` per file;
  3. `Memory(blocks=..., git_enabled=True, agent_type="letta_v1_agent").compile()` with no tool rules,
     no sources and no llm_config (what `_rebuild_memory` passes for such an agent);
  4. `PromptGenerator.get_system_message_from_compiled_memory(system, memory, ...)` with the metadata
     inputs pinned from the request: now (the recompile time), timezone "UTC" (the server's
     DEFAULT_TIMEZONE), previousMessageCount, archival size 0, no archive tags, conversationId or
     "default" (as `LettaAgentV2._rebuild_memory` passes it).

Record fields: `content` (the system message), `coreMemory` (the text that replaces {CORE_MEMORY}:
memory + "\\n\\n" + metadata, as get_system_message_from_compiled_memory builds it), `memory`
(Memory.compile()), `memoryMetadata` (compile_memory_metadata_block), `memfsRevision`
(`GitOperations.get_head_sha`; null when there is no repository), `labels` (the blocks read, in
the order upstream returned them), `availableSkills` (`Memory.compile_available_skills()`: the
agent's `skills/<name>/SKILL.md` blocks) and `requestContent` (the system text sent with each LLM
request: `content` plus that block, as `LettaAgentV2.generate_request_system_prompt` appends it;
the server never stores it). `Memory._render_memory_filesystem` has no caller in 0.16.8 and is
not used. No `compiledAt` or `rawSystemHash`: the server keeps neither
(its "changed?" test is a substring check of the stored message). `includeMemfs` has no server
equivalent and is ignored (recorded in `ignored`).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

# Answers go to the real stdout; everything else (letta's console logging, which binds sys.stdout
# at import, and any child process) writes to stderr.
_PROTOCOL = os.fdopen(os.dup(1), "wb", buffering=0)
os.dup2(2, 1)
sys.stdout = sys.stderr

# letta writes a log file under LETTA_DIR (default ~/.letta) at import: keep it in a temporary directory.
_SCRATCH = Path(tempfile.mkdtemp(prefix="letta-server-driver."))
os.environ["LETTA_DIR"] = str(_SCRATCH / "letta-dir")

ORG_ID = "org-00000000-0000-4000-8000-000000000000"  # letta.constants.DEFAULT_ORG_ID
USER_ID = "user-00000000-0000-4000-8000-000000000000"
TIMEZONE = "UTC"  # letta.constants.DEFAULT_TIMEZONE, an agent's timezone when none is given
STORAGE_NAMESPACE = uuid.UUID("6f1d5a52-3b0e-4c47-9b1c-4c9f0e0b7a11")

_started = time.perf_counter()
try:
    from letta.prompts.prompt_generator import PromptGenerator
    from letta.schemas.memory import Memory
    from letta.schemas.user import User
    from letta.services.memory_repo.memfs_client_base import MemfsClient

    IMPORT_ERROR: str | None = None
except Exception as error:  # reported by every answer; the process stays up to say why
    IMPORT_ERROR = f"{type(error).__name__}: {error}"
IMPORT_MS = round((time.perf_counter() - _started) * 1000, 1)


def letta_version() -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("letta")
    except PackageNotFoundError:
        return None


def parse_now(text: str) -> datetime:
    """An ISO instant as JS `new Date(text)` reads the harness's values (a trailing Z is UTC)."""
    value = datetime.fromisoformat(text.replace("Z", "+00:00") if text.endswith("Z") else text)
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


# the shape of the harness's instants (an ISO date-time, optional fraction and offset): such a text that
# datetime rejects is a date the server cannot be given, not a malformed request
ISO_SHAPED = re.compile(r"[+-]?\d{4,6}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:\d\d)?")


def unrepresentable_date(text: str, error: Exception) -> str:
    """The `thrown` of a compile whose `now` the server cannot represent.

    The server's recompile time is a Python `datetime` (`in_context_memory_last_edit`,
    `compile_memory_metadata_block(memory_edit_timestamp=...)`): a date outside it (day 32, hour 24,
    minute 60, year 0, or a year-1 instant whose UTC is year 0) never reaches the server's renderer,
    as if upstream code had raised on it."""
    return (
        f"UnrepresentableDate: the server cannot represent now={text!r} "
        f"(its recompile time is a Python datetime: {type(error).__name__}: {error})"
    )


def storage_agent_id(agent_id: str) -> str:
    """The id the repository is stored under: the server's ids are `agent-<uuid>`; a request's may be any text."""
    return f"agent-{uuid.uuid5(STORAGE_NAMESPACE, agent_id)}"


def repository_git_dir(memory_dir: Path) -> Path | None:
    """The git directory of the repository whose root is `memory_dir`: what the server's storage holds
    for an agent (`<org>/<agent>/repo.git/...`, the files of one git directory), or None.

    `memory_dir/.git` when it is a directory; the directory a `.git` file names (`gitdir: <path>`, relative
    to memory_dir, as `git init --separate-git-dir` writes it); memory_dir itself when it is a git directory
    (a bare repository, or a work tree's .git: `git rev-parse --absolute-git-dir` run there prints it).
    A subdirectory of a work tree or of a git directory is no repository's root: None."""
    dot_git = memory_dir / ".git"
    if dot_git.is_dir():
        return dot_git
    if dot_git.is_file():
        text = dot_git.read_text(encoding="utf-8", errors="replace")
        if not text.startswith("gitdir: "):
            return None
        target = (memory_dir / text[len("gitdir: ") :].strip()).resolve()
        return target if target.is_dir() else None
    if not memory_dir.is_dir():
        return None
    found = subprocess.run(
        ["git", "rev-parse", "--absolute-git-dir"], cwd=memory_dir, capture_output=True, text=True, check=False
    )
    if found.returncode != 0 or Path(found.stdout.strip()).resolve() != memory_dir.resolve():
        return None
    return memory_dir


async def read_blocks(memory_dir: Path, agent_id: str, storage: Path) -> tuple[list[Any], str | None]:
    """The blocks and HEAD revision the server reads for an agent whose repository is `memory_dir`."""
    client = MemfsClient(local_path=str(storage))
    actor = User(id=USER_ID, organization_id=ORG_ID, name="conformance")
    git_dir = repository_git_dir(memory_dir)
    if git_dir == memory_dir / ".git":  # upstream's own upload: every file under memory_dir/.git into the storage
        await client.git._upload_repo(str(memory_dir), agent_id, ORG_ID)
    elif git_dir is not None:  # the same upload of a git directory found elsewhere, as the .git of a staging directory
        staging = Path(tempfile.mkdtemp(prefix="staging.", dir=_SCRATCH))
        try:
            (staging / ".git").symlink_to(git_dir, target_is_directory=True)
            await client.git._upload_repo(str(staging), agent_id, ORG_ID)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    blocks = await client.get_blocks_async(agent_id, actor)
    try:
        revision: str | None = await client.git.get_head_sha(agent_id, ORG_ID)
    except FileNotFoundError:  # no repository in storage
        revision = None
    return blocks, revision


def compile_request(request: dict[str, Any]) -> dict[str, Any]:
    system = request["system"]
    agent_id = request["agentId"]
    conversation_id = request["conversationId"]
    now = parse_now(request["now"])
    previous = int(request.get("previousMessageCount") or 0)
    storage = Path(tempfile.mkdtemp(prefix="storage.", dir=_SCRATCH))
    try:
        blocks, revision = asyncio.run(read_blocks(Path(request["memoryDir"]), storage_agent_id(agent_id), storage))
    finally:
        shutil.rmtree(storage, ignore_errors=True)
    memory = Memory(blocks=blocks, git_enabled=True, agent_type="letta_v1_agent")
    memory_text = memory.compile(tool_usage_rules=None, sources=[], max_files_open=None, llm_config=None)
    conversation = conversation_id or "default"
    pinned = {
        "agent_id": agent_id,
        "conversation_id": conversation,
        "previous_message_count": previous,
        "archival_memory_size": 0,
        "archive_tags": None,
        "timezone": TIMEZONE,
    }
    content = PromptGenerator.get_system_message_from_compiled_memory(
        system_prompt=system, memory_with_sources=memory_text, in_context_memory_last_edit=now, **pinned
    )
    metadata = PromptGenerator.compile_memory_metadata_block(memory_edit_timestamp=now, **pinned)
    skills = memory.compile_available_skills(client_skills=None)
    record: dict[str, Any] = {
        "content": content,
        "coreMemory": memory_text + "\n\n" + metadata,
        "memory": memory_text,
        "memoryMetadata": metadata,
        "memfsRevision": revision,
        "labels": [block.label for block in blocks],
        "availableSkills": skills,
        "requestContent": request_system_prompt(content, skills),
    }
    if "includeMemfs" in request:
        record["ignored"] = {"includeMemfs": request["includeMemfs"]}
    return record


def request_system_prompt(stored: str, skills_block: str) -> str:
    """`LettaAgentV2.generate_request_system_prompt` without a request override or client skills: the system
    text sent with each LLM request (skills are request-scoped, never stored in the system message)."""
    if not skills_block:
        return stored
    return stored.rstrip("\n") + "\n\n" + skills_block.lstrip("\n")


def thrown_text(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}"


REQUIRED = {"memoryDir": str, "system": str, "agentId": str, "conversationId": str, "now": str}


def answer(line: bytes) -> dict[str, Any]:
    try:
        request = json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as error:
        return {"id": None, "ok": False, "error": f"request is not JSON: {error}"}
    if not isinstance(request, dict):
        return {"id": None, "ok": False, "error": "request is not a JSON object"}
    op = request.get("op")
    handler = HANDLERS.get(op) if isinstance(op, str) else None
    if handler is None:  # docs/protocol.md: an op it does not serve is `unsupported`, not an error
        return {"id": request.get("id"), "ok": False, "unsupported": f"op {json.dumps(op)}"}
    return {"id": request.get("id"), **handler(request)}


def hello(request: dict[str, Any]) -> dict[str, Any]:
    info = {
        "product": "letta-server",
        "version": letta_version(),
        "python": sys.version.split()[0],
        "runtime": f"python {sys.version.split()[0]}",
        "importMs": IMPORT_MS,
        "importError": IMPORT_ERROR,
        "timezone": TIMEZONE,
    }
    capabilities = {"ops": list(HANDLERS), "lifecycle": False, "profiles": None}
    return {"ok": True, "protocol": 1, "capabilities": capabilities, "info": info}


def compile_op(request: dict[str, Any]) -> dict[str, Any]:
    if IMPORT_ERROR is not None:
        return {"ok": False, "error": f"letta could not be imported: {IMPORT_ERROR}"}
    for key, kind in REQUIRED.items():
        if not isinstance(request.get(key), kind):
            return {"ok": False, "error": f"compile needs {key} ({kind.__name__})"}
    try:
        parse_now(request["now"])
    except ValueError as error:
        if ISO_SHAPED.fullmatch(request["now"]):
            return {"ok": True, "thrown": unrepresentable_date(request["now"], error), "polluted": False}
        return {"ok": False, "error": f"bad now: {error}"}
    try:
        record = compile_request(request)
    except Exception as error:  # upstream raised: a result, like driver.mjs's `thrown`
        traceback.print_exc(file=sys.stderr)
        return {"ok": True, "thrown": thrown_text(error), "polluted": False}
    return {"ok": True, "record": record, "polluted": False}


# The ops it answers (hello lists these keys; harness.core.protocol.OPS's required ops must be among them).
HANDLERS: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {"hello": hello, "compile": compile_op}


def main() -> int:
    try:
        for raw in iter(sys.stdin.buffer.readline, b""):
            line = raw[:-1] if raw.endswith(b"\n") else raw
            if not line.strip():
                continue
            reply = answer(line)
            _PROTOCOL.write(json.dumps(reply, ensure_ascii=True).encode("ascii") + b"\n")
    finally:
        shutil.rmtree(_SCRATCH, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
