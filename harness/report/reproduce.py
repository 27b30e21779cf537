"""The exact commands that reproduce one result: the case alone against its implementation under test, the
Python port's own compile (when the port is the implementation), the repo diff."""

from __future__ import annotations

import re
import shlex

from harness.core.model import DEFAULT_IMPLEMENTATION, CaseResult, is_golden
from harness.core.port_command import cli_args
from harness.core.reference import cli_of_label

_NEEDS_ANSI_C = re.compile(r"[\x00-\x1f\x7f]")


def reproduce_commands(result: CaseResult) -> list[str]:
    """Shell commands, most general first: rerun the case; compile its repository with the port; diff both sides."""
    golden = is_golden(result.reference)
    reference = "" if golden else f" --reference {shell_quote(_reference_arg(result))}"
    profile = "" if golden or not result.profile else f" --profile {shell_quote(result.profile)}"
    impl = "" if result.implementation == DEFAULT_IMPLEMENTATION else f" --impl {shell_quote(result.implementation)}"
    case = f"-k {shell_quote(result.case_id)}"
    cmds = [f"conformance run {shell_quote(result.path)}{reference}{impl}{profile} {case}"]
    req = result.request
    if req and "conversationId" in req:  # a compile's request; an op case's has no port command line or repo diff
        inputs = [
            "--agent-id",
            req["agentId"],
            "--conversation-id",
            req["conversationId"],
            "--system",
            req["system"],
            "--now",
            req["now"],
            "--previous-message-count",
            str(req["previousMessageCount"]),
        ]
        no_memfs = "" if req.get("includeMemfs", True) else " --no-memfs"
        if result.implementation in ("python", "python-cli"):  # the port's own command line
            cmds.append(f"python -m memfs_prompt {_join(cli_args(req, result.profile))}")
        if not golden:
            cmds.append(
                f"conformance diff-repo {_join([req['memoryDir'], *inputs, '--profile', result.profile])}"
                f"{no_memfs}{reference}{impl}"
            )
    return cmds


def shell_quote(text: str) -> str:
    """shlex.quote, but text holding control characters (a newline in a system prompt, a CR) becomes bash's
    $'...' with escapes, so each command stays on one line and shows its invisible bytes."""
    if not _NEEDS_ANSI_C.search(text):
        return shlex.quote(text)
    escaped = text.replace("\\", "\\\\").replace("'", "\\'")
    escaped = _NEEDS_ANSI_C.sub(
        lambda m: {"\n": "\\n", "\r": "\\r", "\t": "\\t"}.get(m[0], f"\\x{ord(m[0]):02x}"), escaped
    )
    return f"$'{escaped}'"


def _join(parts: list[str]) -> str:
    return " ".join(shell_quote(part) for part in parts)


def _reference_arg(result: CaseResult) -> str:
    return cli_of_label(result.reference)
