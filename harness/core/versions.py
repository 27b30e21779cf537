"""Release order: versions compare by their numeric parts (0.32.8 before 0.32.18), never as strings.

Standard library only, so every layer sorts versions without loading anything else; the order of reference
labels (release_key) is harness.core.reference's, which reads labels.
"""

from __future__ import annotations


def version_key(version: str) -> tuple[int, ...]:
    """Release order: 0.32.8 before 0.32.18 (numeric parts; anything else sorts first)."""
    return tuple(int(part) if part.isdigit() else -1 for part in version.split("."))
