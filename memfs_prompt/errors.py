"""What the port raises where upstream throws (kept apart so every module can import it)."""

from __future__ import annotations


class UpstreamError(Exception):
    """Upstream would throw here: the compile fails rather than producing text."""
