"""A real letta-code build run by node (the npm `letta` bin's shebang) through reference/driver.mjs.

Same driver and protocol as the bun runner; the release is installed in its own directory with
its pinned runtime dependencies (harness.releases.node_install). Under node, `localeCompare`
follows LANG/LC_ALL (full ICU), and `// @bun` pragmas mean nothing, so output can differ from
bun's: the harness reports that as runtime drift, never as a port failure (harness.run).
"""

from __future__ import annotations

from pathlib import Path

from harness.runners.bun_reference import BunReferenceRunner
from harness.runners.releases import ensure_node


class NodeReferenceRunner(BunReferenceRunner):
    def interpreter(self) -> Path:
        return ensure_node()
