"""A real letta-code build run by node (the npm `letta` bin's shebang) through reference/driver.mjs.

Same driver and protocol as the bun runner. An npm release is installed in its own directory with
its pinned runtime dependencies (harness.acquire.npm_release.node_install); a PyPI release runs as its
users run it, on the wheel's own Node with the wheel's node_modules (harness.acquire.pypi_release).
Under node, `localeCompare` follows LANG/LC_ALL (full ICU), and `// @bun` pragmas mean nothing, so
output can differ from bun's: the harness reports that as runtime drift, never as a
port failure (harness.verdict.judge).
"""

from __future__ import annotations

from pathlib import Path

from harness.acquire.releases import node_for
from harness.runners.bun_reference import BunReferenceRunner


class NodeReferenceRunner(BunReferenceRunner):
    def interpreter(self) -> Path:
        """A release whose artifact ships a Node (PyPI's wheel) runs on it, as `letta` does; anything else on
        PATH's node (harness.acquire.releases.node_for)."""
        return node_for(self.spec)
