"""The reference/ folder's files the acquisition and the runners read: the driver (reference/driver.mjs) and the
folder itself (runtime-deps/ lockfiles), and the checkout's root when the harness runs from one.

What `--reference` names and its label are harness.core.reference's; the registries, their pins and the
manifest's path harness.core.registries'.
"""

from __future__ import annotations

from harness.core.locations import SOURCE_ROOT, reference_dir

REPO_ROOT = SOURCE_ROOT  # the checkout's root when harness runs from one (mutation's copies, tests)
REFERENCE_DIR = reference_dir()  # the checkout's reference/ or the installed one (harness.core.locations)
DRIVER_PATH = REFERENCE_DIR / "driver.mjs"

__all__ = ["DRIVER_PATH", "REFERENCE_DIR", "REPO_ROOT"]
