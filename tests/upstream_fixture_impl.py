"""The implementation under test of tests/test_upstream_tests.py's fixture repository: the fixture's tiny compiler
(tests/test_upstream_tests.py, COMPILER) over the JSON-lines protocol, `python tests/upstream_fixture_impl.py
[--bug content|no-skills|error|hook-accepts|no-validate]`.

- no bug: answers exactly what the fixture's compiler returns, so every fixture test passes with the shim;
- `content`: a planted bug, the compiled content ends with `!` (upstream's `toBe` then fails);
- `no-skills`: answers `skills_block` unsupported (its tests are not applicable);
- `error`: answers every compile and validate `ok: false` (the implementation failed);
- `hook-accepts`: `validate` accepts every commit (the fixture hook refuses a staged file holding `BAD`);
- `no-validate`: answers `validate` unsupported;
- `no-remote`: answers a `memory_write` with `syncMode: remote` unsupported.

`memory_write` is the fixture memory tool's (tests/test_upstream_tests.py, MEMORY_TOOL): a call without `reason`
throws `Error: memory: missing required parameter reason`, else the message is `Memory COMMAND committed locally
(MEMORYDIR)`, or with `syncMode: remote` `Memory COMMAND applied and pushed (MEMORYDIR)`.

`validate` is the fixture hook's rule (tests/test_upstream_tests.py, HOOK_MODULE): a staged file whose content
holds `BAD` is refused with `  FILE: refused (BAD)`.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
from typing import Any

PROFILE = "letta-code@0.30.28"


def compile_record(request: dict[str, Any], bug: str | None) -> dict[str, Any]:
    if request.get("now") == "Invalid Date":
        return {"ok": True, "thrown": "RangeError: Invalid time value"}
    system = request["system"]
    core = f"MEMORY {request['agentId']} {request['conversationId']} {request['memoryDir']}"
    content = system.replace("{CORE_MEMORY}", core, 1) + ("!" if bug == "content" else "")
    record = {
        "content": content,
        "compiledAt": request["now"],
        "rawSystemHash": hashlib.sha256(system.encode("utf-8", "surrogatepass")).hexdigest(),
    }
    return {"ok": True, "record": record}


def skills_block(request: dict[str, Any]) -> dict[str, Any]:
    skills = request.get("clientSkills")
    names = [s["name"] for s in skills if isinstance(s, dict)] if isinstance(skills, list) else []
    block = "<available_skills>\n" + "\n".join(names) + "\n</available_skills>" if names else ""
    prompt = request.get("systemPrompt") or ""
    return {"ok": True, "block": block, "appended": f"{prompt}\n\n{block}" if block else prompt}


def validate(request: dict[str, Any], bug: str | None) -> dict[str, Any]:
    def git(*args: str) -> str:
        done = subprocess.run(["git", *args], cwd=request["memoryDir"], capture_output=True, check=True)
        return done.stdout.decode("utf-8", "replace")

    messages = [
        f"  {name}: refused (BAD)"
        for name in git("diff", "--cached", "--name-only").split()
        if "BAD" in git("show", f":{name}")
    ]
    accepted = bug == "hook-accepts" or not messages
    return {"ok": True, "validation": {"accepted": accepted, "messages": [] if accepted else messages}}


def answer(request: dict[str, Any], bug: str | None) -> dict[str, Any]:
    op = request.get("op")
    if op == "hello":
        ops = ["hello", "compile"] + ([] if bug == "no-skills" else ["skills_block"])
        ops += ["memory_write"] + ([] if bug == "no-validate" else ["validate"])
        return {
            "ok": True,
            "protocol": 1,
            "capabilities": {"ops": ops, "lifecycle": False, "profiles": [PROFILE]},
            "info": {"implementation": "upstream-tests fixture", "bug": bug},
        }
    if request.get("profile") not in (None, PROFILE):
        return {"ok": False, "unsupported": f"profile {request.get('profile')!r}"}
    if op == "compile":
        return {"ok": False, "error": "planted failure"} if bug == "error" else compile_record(request, bug)
    if op == "skills_block" and bug != "no-skills":
        return skills_block(request)
    if op == "memory_write":
        if "reason" not in request["args"]:
            return {"ok": True, "thrown": "Error: memory: missing required parameter reason"}
        if request.get("syncMode") == "remote":
            if bug == "no-remote":
                return {"ok": False, "unsupported": "the fixture's remote sync"}
            return {"ok": True, "written": f"Memory {request['command']} applied and pushed ({request['memoryDir']})"}
        return {"ok": True, "written": f"Memory {request['command']} committed locally ({request['memoryDir']})"}
    if op == "validate" and bug != "no-validate":
        return {"ok": False, "error": "planted failure"} if bug == "error" else validate(request, bug)
    return {"ok": False, "unsupported": f"op {op!r}"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python tests/upstream_fixture_impl.py")
    parser.add_argument("--bug", choices=["content", "no-skills", "error", "hook-accepts", "no-validate", "no-remote"])
    args = parser.parse_args(argv)
    for line in sys.stdin.buffer:
        if not line.strip():
            continue
        try:
            request = json.loads(line)
        except ValueError as error:
            reply: dict[str, Any] = {"id": None, "ok": False, "error": str(error)}
        else:
            reply = {"id": request.get("id"), **answer(request, args.bug)}
        sys.stdout.write(json.dumps(reply, ensure_ascii=True) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
