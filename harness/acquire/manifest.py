"""The reference/ folder's files the acquisition and the runners read: the pinned manifest's path, the driver
(reference/driver.mjs) and the folder itself (runtime-deps/ lockfiles).

What `--reference` names and its label are harness.core.reference's, the registries and their pins
harness.core.registries'; their names are re-exported here for the importers not yet moved to core.
"""

from __future__ import annotations

from harness.core.locations import SOURCE_ROOT, reference_dir
from harness.core.reference import (
    DEFAULT_RUNTIME,
    REFERENCE_FORMS,
    RUNTIMES,
    ReferenceSpec,
    default_reference,
    nearest_pinned,
    pinned_references,
    recorded_label,
    registry_of_bare_version,
    unpinned,
)
from harness.core.registries import (
    MANIFEST_PATH,
    REGISTRY_NAMES,
    load_manifest,
    on_demand_pin,
    pin_on_demand,
    pinned_versions,
)
from harness.core.versions import version_key

REPO_ROOT = SOURCE_ROOT  # the checkout's root when harness runs from one (mutation's copies, tests)
REFERENCE_DIR = reference_dir()  # the checkout's reference/ or the installed one (harness.core.locations)
DRIVER_PATH = REFERENCE_DIR / "driver.mjs"
REGISTRIES = REGISTRY_NAMES  # the registries' names, in table order

__all__ = [
    "DEFAULT_RUNTIME",
    "DRIVER_PATH",
    "MANIFEST_PATH",
    "REFERENCE_DIR",
    "REFERENCE_FORMS",
    "REGISTRIES",
    "REPO_ROOT",
    "RUNTIMES",
    "ReferenceSpec",
    "default_reference",
    "load_manifest",
    "nearest_pinned",
    "on_demand_pin",
    "pin_on_demand",
    "pinned_references",
    "pinned_versions",
    "recorded_label",
    "registry_of_bare_version",
    "unpinned",
    "version_key",
]
