"""The pre-commit hook of the `pre-commit-hook` swap target: what git runs when upstream's test commits
(`python hook_client.py CONFIG`, the command reference/upstream-tests/hook-shim.ts exports as
PRE_COMMIT_HOOK_SCRIPT; docs/upstream-tests.md).

It runs in git's child process while bun waits in execSync, so it cannot use the shim's FIFO bridge: it starts
the implementation under test itself, from the configuration the bridge wrote (`Bridge.hook_config`: the same
argv and environment as the bridge's process, the revision's profile, the timeout), asks `hello` then
`validate {memoryDir, profile}` with memoryDir a copy of the repository (`snapshot`), and
- accepted: prints the messages (to stderr, where git shows a hook's output) and exits 0;
- refused: prints them and exits 1, so the commit fails with the implementation's lines;
- unsupported (the op, the profile or the repository): exits 1 with `conformance: not applicable: ...`;
- an error answer, a crash, a hang or garbage: exits 1 with `conformance: the implementation under test
  failed: ...`.
So a test can never pass on an answer the implementation did not give.

Why a copy: git runs the hook at the repository's top in the middle of the commit (its index locked, the index
being committed named by GIT_INDEX_FILE), and `validate` may change the repository it is given: letta-code
itself, through reference/driver.mjs, writes its own hook into the hooks directory and commits there. On the
test's live repository that would replace the shim's hook (later commits of the test would run upstream's hook,
not the implementation) and commit inside a commit. So the implementation gets a copy of the work tree and git
directory, with the index being committed as its index, no index lock and no pre-commit hook (nothing runs this
client again). The hook's messages name files relative to the repository, so the copy's path shows in none.

Each call is appended to $CONFORMANCE_UPSTREAM_LOG (the shim run's call log, inherited from the test's
environment through git) in the shim's format, so the verdict rule attributes it to the test and classifies
it as it does the compiler shim's calls.

Run as a file, not a module: the hook knows only absolute paths, so this file puts the harness on sys.path in
place of its own directory (whose select.py would shadow the standard library's `select`).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path[0] = str(Path(__file__).resolve().parents[3])

from harness.runners.jsonl_process import JsonLinesProcess, ProtocolError  # noqa: E402
from harness.runners.wire import UnreadableRequest  # noqa: E402

CALL = "PRE_COMMIT_HOOK_SCRIPT"
SITE = "git commit (the pre-commit hook)"
NOT_APPLICABLE = "conformance: not applicable: "
FAILED = "conformance: the implementation under test failed: "


def ask(config: dict[str, Any], memory_dir: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The `validate` request and the implementation's answer (an error answer when it gave none)."""
    request = {"op": "validate", "memoryDir": memory_dir, "profile": config["profile"]}
    label, timeout = config["label"], float(config["timeout"])
    workdir = Path(tempfile.mkdtemp(prefix="conformance-hook-impl-"))  # its own, empty (docs/protocol.md)
    process = JsonLinesProcess(list(config["argv"]), dict(config["env"]), workdir)
    try:
        hello = process.request({"op": "hello"}, timeout)
        if hello.get("ok") is False:
            return request, {"ok": False, "error": f"{label}: hello failed: {hello.get('error', hello)}"}
        profiles = (hello.get("capabilities") or {}).get("profiles")
        if isinstance(profiles, list) and config["profile"] not in profiles:
            return request, {"ok": False, "unsupported": f"profile {config['profile']!r} ({label} does not claim it)"}
        answer = process.request(request, timeout)
    except UnreadableRequest as error:
        return request, {"ok": False, "error": f"the harness cannot send this request: {error}"}
    except ProtocolError as error:
        tail = process.stderr_tail().strip().splitlines()[-5:]
        return request, {"ok": False, "error": f"{label}: {error}" + (f"; stderr: {' | '.join(tail)}" if tail else "")}
    finally:
        process.close()
        shutil.rmtree(workdir, ignore_errors=True)
    answer.pop("id", None)
    return request, answer


def outcome(answer: dict[str, Any]) -> tuple[list[str], int]:
    """The lines the hook prints and its exit code, for one answer (the rule in the module docstring)."""
    if answer.get("ok") is False and isinstance(answer.get("unsupported"), str):
        return [NOT_APPLICABLE + answer["unsupported"]], 1
    validation = answer.get("validation")
    if answer.get("ok") is not True or not isinstance(validation, dict):
        return [FAILED + str(answer.get("error") or f"answer has no validation: {json.dumps(answer)[:500]}")], 1
    messages = validation.get("messages")
    if not isinstance(messages, list) or not all(isinstance(m, str) for m in messages):
        return [FAILED + f"validation.messages is not a list of strings: {json.dumps(messages)[:500]}"], 1
    if not isinstance(validation.get("accepted"), bool):
        return [FAILED + "validation.accepted is not a boolean"], 1
    return messages, 0 if validation["accepted"] else 1


def log(request: dict[str, Any], answer: dict[str, Any]) -> None:
    path = os.environ.get("CONFORMANCE_UPSTREAM_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as calls:
            calls.write(json.dumps({"call": CALL, "site": SITE, "request": request, "answer": answer}) + "\n")


def snapshot(top: Path, into: Path) -> Path:
    """A copy of the repository at `top` as the commit sees it (the module docstring), under `into`; `top` itself
    when its git directory is not a plain `.git` directory (a worktree or submodule: not copied)."""
    if not (top / ".git").is_dir():
        return top
    copy = into / "memory"
    shutil.copytree(top, copy, symlinks=True)
    git_dir = copy / ".git"
    index = os.environ.get("GIT_INDEX_FILE")
    if index:
        staged = Path(index) if os.path.isabs(index) else top / index
        if staged.is_file():
            shutil.copyfile(staged, git_dir / "index")
    (git_dir / "index.lock").unlink(missing_ok=True)
    (git_dir / "hooks" / "pre-commit").unlink(missing_ok=True)
    return copy


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(FAILED + "usage: hook_client.py CONFIG (the hook shim's command)", file=sys.stderr)
        return 1
    try:
        config = json.loads(Path(argv[0]).read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        print(FAILED + f"the hook's configuration {argv[0]} is unreadable: {error}", file=sys.stderr)
        return 1
    scratch = Path(tempfile.mkdtemp(prefix="conformance-hook-repo-"))
    try:
        try:
            memory_dir = snapshot(Path.cwd(), scratch)
        except OSError as error:
            print(FAILED + f"the hook could not copy the repository {Path.cwd()}: {error}", file=sys.stderr)
            return 1
        request, answer = ask(config, str(memory_dir))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    log(request, answer)
    lines, code = outcome(answer)
    if lines:
        sys.stderr.write("\n".join(lines) + "\n")
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
