"""The port's command line for a compile request: what `python -m memfs_prompt compile` is given.

The one place that decides it: reproduce commands in reports print it, harness.runners.python_cli
runs it (and through it the mutation tool, so a mutant of memfs_prompt/cli.py can be killed).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def cli_args(wire: dict[str, Any], profile: str, system_file: Path | None = None) -> list[str]:
    """A compile request in wire form as the port's command line: the arguments after `python -m memfs_prompt`.

    The one place that decides it: reproduce commands print it, harness.runners.python_cli runs it.
    Every value goes as `--option=VALUE`, so a system prompt, an id or a date starting with `-` stays a value.
    With `system_file` (a file holding the system prompt's UTF-8 bytes) the prompt goes as `--system-file`.
    """
    system = f"--system-file={system_file}" if system_file is not None else f"--system={wire['system']}"
    args = [
        "compile",
        wire["memoryDir"],
        "--json",
        f"--profile={profile}",
        f"--agent-id={wire['agentId']}",
        f"--conversation-id={wire['conversationId']}",
        system,
        f"--now={wire['now']}",
        f"--previous-message-count={json.dumps(wire['previousMessageCount'])}",
    ]
    if not wire.get("includeMemfs", True):
        args.append("--no-memfs")
    return args
