"""Pinning a new upstream release (`conformance pin npm:X` / `pypi:X`): what maintainers run when upstream ships.

The registry's fetcher (harness.core.registries names it) is asked for the release and the digest it publishes
(npm: `dist.integrity`; PyPI: the wheel's sha256 from pip's report), the artifact is downloaded and checked against
that digest, and only then is the pin written where the registry's pins sit in reference/manifest.json. Nothing is
written on any mismatch.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.acquire.releases import ReferenceUnavailable, fetcher
from harness.core.reference import ReferenceSpec
from harness.core.registries import CURRENT_REGISTRY, MANIFEST_PATH, REGISTRY_NAMES, pin_table, registry
from harness.core.versions import version_key
from letta_profiles import profile_name_for_release


@dataclass(frozen=True)
class Pinned:
    spec: ReferenceSpec
    pin: dict[str, Any]
    already: bool  # the manifest had this exact pin

    def advice(self) -> list[str]:
        """What to do next: a release without a profile must be checked before it gets one."""
        try:
            profile = profile_name_for_release(self.spec.value)
        except KeyError:
            return [
                f"letta-code {self.spec.value} has no Python profile yet. Run the corpus against it with the newest "
                f"profile (`conformance run cases --reference {self.spec.cli} --profile letta-code@<newest>`); "
                "when every case passes, add the version to that profile in letta_profiles/__init__.py "
                "(PUBLISHED and its range in PROFILE_RELEASES); otherwise the failures show what changed and need "
                "a new profile."
            ]
        return [f"letta-code {self.spec.value} is compared with {profile}."]


def pin_release(text: str, manifest_path: Path = MANIFEST_PATH) -> Pinned:
    """Look the release up, verify its download, and write its pin into the manifest (release order kept).

    An existing pin that differs from what the registry now publishes is refused, never overwritten."""
    spec = ReferenceSpec.parse(text if ":" in text else f"{CURRENT_REGISTRY.name}:{text}")
    if not spec.is_release or spec.is_variant:
        forms = " or ".join(f"{name}:VERSION" for name in REGISTRY_NAMES)
        raise ValueError(f"conformance pin {text!r}: name a release as {forms}")
    pin = fetcher(spec.kind).pin(spec.value)
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    table = pin_table(manifest, spec.kind)
    digest_key = registry(spec.kind).digest_key
    existing = table.get(spec.value)
    if existing is not None:
        if existing[digest_key] != pin[digest_key]:
            raise ReferenceUnavailable(
                f"{spec.cli} is pinned to {existing[digest_key]} but the registry now publishes {pin[digest_key]}; "
                "the manifest is left as it is: find out why the published bytes changed"
            )
        return Pinned(spec, existing, True)
    table[spec.value] = pin
    ordered = dict(sorted(table.items(), key=lambda item: version_key(item[0])))
    table.clear()
    table.update(ordered)
    manifest_path.write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return Pinned(spec, pin, False)
