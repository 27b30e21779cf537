"""Release order: versions compare by their numeric parts (0.32.8 before 0.32.18), never as strings.

Standard library only, so reports and merges sort references without loading runners.
"""

from __future__ import annotations

import re

_RELEASE = re.compile(r"^(?:(npm|pypi):)?(?:letta-code@)?(\d+(?:\.\d+)+)(@.*)?$")


def release_name(label: str) -> str:
    """A reference label as people read it: `letta-code 0.34.12 (pypi:0.34.12)` for a release, the label else."""
    found = _RELEASE.match(label)
    return f"letta-code {found.group(2)} ({label})" if found else label


def version_key(version: str) -> tuple[int, ...]:
    """Release order: 0.32.8 before 0.32.18 (numeric parts; anything else sorts first)."""
    return tuple(int(part) if part.isdigit() else -1 for part in version.split("."))


def release_key(label: str) -> tuple[int, tuple[int, ...], int, str, str]:
    """Sort key for a reference label (`0.32.18`, `pypi:0.34.12`, `0.32.18@node`, `bundle:...`): releases in
    release order, npm before PyPI for one version, the baseline before its variants; anything else after."""
    found = _RELEASE.match(label)
    if not found:
        return (1, (), 0, "", label)
    registry, version, variant = found.group(1) or "npm", found.group(2), found.group(3) or ""
    return (0, version_key(version), 0 if registry == "npm" else 1, variant, label)
