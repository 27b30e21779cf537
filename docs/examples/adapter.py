#!/usr/bin/env python3
"""A minimal protocol adapter in Python: your memory compiler under letta-conformance (docs/porting.md).

    conformance run --impl "cmd:python adapter.py"

It owns the protocol (docs/protocol.md: JSON lines on stdin and stdout, `hello`, `compile`, `unsupported`
for the rest) and every field of the record that is computed from the request rather than from the
memory: `content` (the core memory put into the raw system prompt), `compiledAt`, `rawSystemHash`,
`memfsRevision`. The memory itself, `coreMemory`, comes from `your_core_memory`: the one function you
replace with a call into your own compiler.

Until you do, `your_core_memory` stands in with letta-conformance's own Python port (`memfs_prompt`,
installed with the suite), so this file passes real cases as it is; the suite's tests run it that way
against the real letta-code release. Needs Python 3.9+ and git; nothing else.
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
from datetime import datetime

PROFILE = "letta-code@0.34.7"  # letta-code 0.34.7 to 0.34.12 (docs/porting.md, "Which profile to claim")
NAME = "my-port"  # your implementation's name: an expectations file may name it (`name: my-port`)
FEATURES = ["memfs-v1", "memfs-v2", "metadata-block"]  # the layout features served (no client-skills, ...)
PLACEHOLDER = "{CORE_MEMORY}"
JS_WHITESPACE = "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"  # noqa: E501
CANONICAL_NOW = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z")  # what toISOString prints


class UpstreamThrows(Exception):
    """Raise it where letta-code throws for the same input: answered `thrown` (the message is not compared)."""


class Unsupported(Exception):
    """An input this adapter does not serve: answered `unsupported`, so the case is not applicable."""


def your_core_memory(
    memory_dir: str, *, agent_id: str, conversation_id: str, now: str, previous_message_count: float,
    include_memfs: bool,
) -> str:  # fmt: skip
    """REPLACE THIS with your compiler: the memory sections of upstream's record (`coreMemory`), read from
    the committed HEAD of `memory_dir`. Raise UpstreamThrows where letta-code throws."""
    from memfs_prompt import compile_system_prompt, resolve_profile  # the stand-in: letta-conformance's port
    from memfs_prompt.errors import UpstreamError
    from memfs_prompt.jsvalues import parse_js_date

    try:
        record = compile_system_prompt(
            memory_dir, system="", agent_id=agent_id, conversation_id=conversation_id, now=parse_js_date(now),
            previous_message_count=previous_message_count, include_memfs=include_memfs,
            profile=resolve_profile(PROFILE),
        )  # fmt: skip
    except UpstreamError as error:
        raise UpstreamThrows(str(error)) from error
    return record.core_memory


# --- the computed fields: keep these when you replace the stand-in ---------------------------------------


def compiled_at(now: str) -> str:
    """`new Date(now).toISOString()`. Only toISOString's own form is read here (it prints itself back);
    anything else is not served. A real port reads `now` as `new Date` does: the cases tagged `jsdate`."""
    if CANONICAL_NOW.fullmatch(now):
        try:
            datetime.strptime(now, "%Y-%m-%dT%H:%M:%S.%fZ")
            return now
        except ValueError:
            pass  # February 30th rolls over, month 13 is an Invalid Date: new Date's rules, not served here
    raise Unsupported(f"now {json.dumps(now)} (this adapter reads only toISOString's own form)")


def raw_system_hash(system: str) -> str:
    """`createHash("sha256").update(system).digest("hex")`: the request's `system` as UTF-8, a lone surrogate
    as U+FFFD (EF BF BD), as node:crypto encodes a JavaScript string."""
    return hashlib.sha256(re.sub("[\ud800-\udfff]", "\ufffd", system).encode("utf-8")).hexdigest()


def memfs_revision(memory_dir: str) -> str | None:
    """`git rev-parse --verify HEAD` in the memory directory, trimmed; None (the key left out) when it fails."""
    try:
        done = subprocess.run(["git", "rev-parse", "--verify", "HEAD"], cwd=memory_dir, capture_output=True)
    except OSError:  # no such directory
        return None
    revision = done.stdout.decode("utf-8", "replace").strip()
    return revision if done.returncode == 0 and revision else None


def js_replace_all(subject: str, search: str, replacement: str) -> str:
    """`subject.replaceAll(search, replacement)`: `$$`, `$&`, `` $` `` and `$'` in the replacement expand."""
    pieces = subject.split(search)
    out, position = [pieces[0]], len(pieces[0])
    for piece in pieces[1:]:
        out.append(substitution(replacement, search, subject[:position], subject[position + len(search) :]))
        out.append(piece)
        position += len(search) + len(piece)
    return "".join(out)


def substitution(replacement: str, matched: str, before: str, after: str) -> str:
    """JavaScript's GetSubstitution for a string pattern: `$$` is `$`, `$&` the match, `` $` `` and `$'` the
    text before and after it; anything else after `$` stays as written."""
    table = {"$": "$", "&": matched, "`": before, "'": after}
    return re.sub(r"\$([$&`'])", lambda m: table[m.group(1)], replacement)


def content(system: str, core_memory: str) -> str:
    """Every `{CORE_MEMORY}` replaced; without one, the core memory goes after the trimEnd()-ed prompt."""
    prompt = system if PLACEHOLDER in system else system.rstrip(JS_WHITESPACE) + "\n\n" + PLACEHOLDER
    return js_replace_all(prompt, PLACEHOLDER, core_memory)


# --- the protocol -------------------------------------------------------------------------------------


def compile_answer(request: dict) -> dict:
    if request.get("profile") not in (None, PROFILE):
        raise Unsupported(f"profile {json.dumps(request['profile'])}")
    if "clientSkills" in request:
        raise Unsupported('input "clientSkills"')  # or add systemPromptWithSkills (docs/protocol.md)
    memory_dir, system, now = request["memoryDir"], request["system"], request["now"]
    include_memfs = request.get("includeMemfs") is not False
    try:
        stamp = compiled_at(now)  # upstream throws only after rendering; either way the compile throws
        core_memory = your_core_memory(
            memory_dir, agent_id=request["agentId"], conversation_id=request["conversationId"], now=now,
            previous_message_count=request.get("previousMessageCount") or 0, include_memfs=include_memfs,
        )  # fmt: skip
    except UpstreamThrows as error:
        return {"thrown": str(error)}
    record = {
        "content": content(system, core_memory),
        "coreMemory": core_memory,
        "compiledAt": stamp,
        "rawSystemHash": raw_system_hash(system),
    }
    revision = memfs_revision(memory_dir) if include_memfs else None
    if revision is not None:
        record["memfsRevision"] = revision
    return {"record": record}


def answer(request: object) -> dict:
    if not isinstance(request, dict):
        return {"id": None, "ok": False, "error": "request is not a JSON object"}
    op = request.get("op")
    try:
        if op == "hello":
            ops = ["hello", "compile"]
            capabilities = {"ops": ops, "lifecycle": False, "profiles": [PROFILE], "features": FEATURES}
            info = {"implementation": NAME}
            return {"id": request.get("id"), "ok": True, "protocol": 1, "capabilities": capabilities, "info": info}
        if op == "compile":
            return {"id": request.get("id"), "ok": True, **compile_answer(request)}
        raise Unsupported(f"op {json.dumps(op)}")
    except Unsupported as what:
        return {"id": request.get("id"), "ok": False, "unsupported": str(what)}
    except Exception as error:  # a bug of the adapter or the compiler: an error of this case, never `thrown`
        return {"id": request.get("id"), "ok": False, "error": f"{type(error).__name__}: {error}"}


def main() -> int:
    for line in sys.stdin.buffer:  # lines end at b"\n" only
        if not line.endswith(b"\n"):
            break  # a last line without "\n" is not a request
        text = line.decode("utf-8", "replace")
        if not text.strip():
            continue
        try:
            request = json.loads(text)
        except ValueError as error:
            reply = {"id": None, "ok": False, "error": f"request is not JSON: {error}"}
        else:
            reply = answer(request)
        sys.stdout.write(json.dumps(reply, ensure_ascii=True) + "\n")  # ASCII: a lone surrogate as \udXXX
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
