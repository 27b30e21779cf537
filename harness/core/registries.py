"""The registries letta-code releases are published on, one row each, and the pins each has in
reference/manifest.json.

A row says where the registry's pins sit in the manifest, which digest a pin carries, which module fetches
its releases (named by dotted path: harness.acquire.releases imports it), the cache folder, and how it runs.
A new registry is one row here, one fetcher module and its pins in the manifest. This module only reads the
pins; fetching, verifying and writing pins are harness.acquire's. Standard library only.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from harness.core.locations import reference_dir

MANIFEST_PATH = reference_dir() / "manifest.json"


@dataclass(frozen=True)
class Registry:
    """One package index letta-code is published on."""

    name: str  # the label's prefix (`pypi:0.34.12`) and the result store's identity key
    pins_at: tuple[str, ...]  # the keys leading to its pins in reference/manifest.json
    digest_key: str  # the pin's field holding the registry's published digest
    digest_kind: str  # what that digest is, for messages
    fetcher: str  # module with ensure(version, pin, runtime), own_node(version), pin(version) and latest()
    cache_part: str  # its releases' folder in the cache ($LETTA_CONFORMANCE_CACHE)
    bare_label: bool = False  # labelled without its prefix (`0.32.18`): what bare versions always meant
    own_node: bool = False  # under node, a release runs on the Node its artifact ships
    runtime_deps: bool = False  # pins name lockfiles installed beside the bundle (part of its identity)
    publishes_now: bool = False  # where new releases appear: `conformance pin VERSION` pins here
    pin_extra: Mapping[str, str] = field(default_factory=dict)  # written beside the digest in a new pin


# In order: a version pinned on both is npm's when written bare, and sorts npm first.
REGISTRIES = (
    Registry(
        "npm",
        ("releases",),
        "integrity",
        "sha512 integrity",
        "harness.acquire.npm_release",
        "letta-code",
        bare_label=True,
        runtime_deps=True,
        pin_extra={"node_runtime_deps": "node-ws"},
    ),
    Registry(
        "pypi",
        ("pypi", "releases"),
        "sha256",
        "wheel sha256",
        "harness.acquire.pypi_release",
        "pypi",
        own_node=True,
        publishes_now=True,
    ),
)
REGISTRY_NAMES = tuple(row.name for row in REGISTRIES)
BARE_REGISTRY = next(row for row in REGISTRIES if row.bare_label)
CURRENT_REGISTRY = next(row for row in REGISTRIES if row.publishes_now)


def registry(name: str) -> Registry:
    """The row named `name` (KeyError for a name that is no registry)."""
    for row in REGISTRIES:
        if row.name == name:
            return row
    raise KeyError(name)


def load_manifest() -> dict[str, Any]:
    return dict(json.loads(MANIFEST_PATH.read_text(encoding="utf-8")))


def pin_table(manifest: dict[str, Any], name: str) -> dict[str, Any]:
    """The registry's pins (version -> pin) inside a loaded manifest: the object itself, to read or edit."""
    table: dict[str, Any] = manifest
    for key in registry(name).pins_at:
        table = table[key]
    return table


def pinned_versions(name: str) -> list[str]:
    """The versions pinned for one registry, in manifest order."""
    return list(pin_table(load_manifest(), name))


_ON_DEMAND: dict[str, dict[str, dict[str, Any]]] = {row.name: {} for row in REGISTRIES}


def on_demand_pin(name: str, version: str) -> dict[str, Any] | None:
    """The pin `pin_on_demand` accepted for this process, if any."""
    return _ON_DEMAND[name].get(version)


def pin_on_demand(version: str, digest: str, name: str = BARE_REGISTRY.name) -> None:
    """Accept an unpinned release for this process only (`conformance matrix --latest`): its artifact is verified
    against the digest the registry reported, and nothing is written to the manifest."""
    row = registry(name)
    _ON_DEMAND[name][version] = {row.digest_key: digest, **row.pin_extra}


def pin_of(name: str, version: str) -> dict[str, Any] | None:
    """The pin of one release: the manifest's, else one accepted for this process, else None."""
    pinned: dict[str, Any] | None = pin_table(load_manifest(), name).get(version)
    return pinned or on_demand_pin(name, version)
