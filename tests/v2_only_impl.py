"""A protocol implementation that renders only the memfs-v2 layout: `python tests/v2_only_impl.py [--features]`.

A naive third-party port as a porter first writes one: it implements upstream's newest format, memfs-v2
(a committed root `MEMORY.md`), and nothing else. For a repository without a root `MEMORY.md` it renders
no memory at all (the memfs-v1 `<memory_blocks>` and the `<memory_metadata>` block are missing, so
`{CORE_MEMORY}` becomes the empty string), as such a port would. Everything else is the real
`python -m memfs_prompt serve` loop (memfs_prompt.serve), so the only differences from a reference are
the ones a v2-only port has.

It claims one profile, letta-code@0.34.7 (the profile of the default release, 0.34.12; letta_profiles).
With `--features` (or `V2_ONLY_FEATURES=1` in its environment, where the harness passes it) its hello declares
`capabilities.features`: the layout features it implements (FEATURES), so that a case needing memfs-v1 or
the metadata block is not applicable to it instead of failing. The suite's tests use it to check that a
port failing most cases is explained by rule: the first rule named is memfs-v1.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from memfs_prompt import compiler, serve
from memfs_prompt.profiles import resolve_profile
from memfs_prompt.protocol import Server

PROFILE = "letta-code@0.34.7"  # letta_profiles: the profile of 0.34.12, the default release
FEATURES = ("memfs-v2", "skills-block", "client-skills", "memory-update")  # not memfs-v1, not metadata-block
MISSING = "renders only memfs-v2: a repository without a root MEMORY.md renders no memory (no memfs-v1, no metadata)"


def _no_v1(*_args: Any, **_kwargs: Any) -> str:
    return ""


def plant() -> None:
    """The port's memfs-v1 renderer and metadata block replaced by nothing (the compiler bound both by name)."""
    compiler.render_memfs_v1 = _no_v1  # type: ignore[assignment]
    compiler.compile_memory_metadata = _no_v1  # type: ignore[assignment]


class V2OnlyServer(Server):
    """The port's protocol server, answering hello with one profile and, when asked, the features above."""

    def __init__(self, declare: bool) -> None:
        super().__init__(
            resolve_profile(PROFILE),
            info={"implementation": "v2-only port (tests/v2_only_impl.py)", "limitation": MISSING},
        )
        self.declare = declare

    def handle(self, request: Any) -> dict[str, Any]:
        if isinstance(request, dict) and request.get("profile") not in (None, PROFILE):
            return {"id": request.get("id"), "ok": False, "unsupported": f"profile {request.get('profile')!r}"}
        answer = super().handle(request)
        if isinstance(request, dict) and request.get("op") == "hello" and answer.get("ok"):
            capabilities = {**answer["capabilities"], "profiles": [PROFILE]}
            if self.declare:
                capabilities["features"] = list(FEATURES)
            answer = {**answer, "capabilities": capabilities}
        return answer


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python tests/v2_only_impl.py", description=__doc__.split("\n")[0])
    parser.add_argument("--features", action="store_true", help="declare capabilities.features in hello")
    args = parser.parse_args(argv)
    plant()
    declare = args.features or os.environ.get("V2_ONLY_FEATURES", "") not in ("", "0")
    answers = sys.stdout.buffer
    with contextlib.redirect_stdout(sys.stderr):
        try:
            serve.serve(V2OnlyServer(declare), sys.stdin.buffer, answers)
        except (BrokenPipeError, KeyboardInterrupt):
            return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
