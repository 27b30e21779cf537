"""Pinning a new upstream release (`conformance pin npm:X` / `pypi:X`): what maintainers run when upstream ships.

The registry is asked for the release and the digest it publishes (npm: `dist.integrity`; PyPI: the
wheel's sha256 from pip's report), the artifact is downloaded and checked against that digest, and
only then is the pin written to reference/manifest.json. Nothing is written on any mismatch.
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.acquire import pypi_release
from harness.acquire.manifest import MANIFEST_PATH, ReferenceSpec, load_manifest, version_key
from harness.acquire.releases import ReferenceUnavailable, npm_pack, run_npm, sri_sha512
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


def _npm_pin(version: str) -> dict[str, Any]:
    package = load_manifest()["package"]
    done = run_npm(["view", f"{package}@{version}", "dist.integrity", "--json"], 120, "pinning asks the npm registry")
    integrity = json.loads(done.stdout or "null")
    if not isinstance(integrity, str):
        raise ReferenceUnavailable(f"the npm registry has no {package}@{version}")
    with tempfile.TemporaryDirectory(prefix="pin-npm-") as tmp:
        actual = sri_sha512(npm_pack(f"{package}@{version}", Path(tmp)))
    if actual != integrity:
        raise ReferenceUnavailable(f"{package}@{version}: the registry publishes {integrity}, the download is {actual}")
    return {"integrity": integrity, "node_runtime_deps": "node-ws"}


def _pypi_pin(version: str) -> dict[str, Any]:
    try:
        entry = pypi_release.index_entry(version)
        with tempfile.TemporaryDirectory(prefix="pin-pypi-") as tmp:
            wheel = pypi_release.fetch_verified_wheel(version, entry, Path(tmp))
            size = wheel.stat().st_size
    except pypi_release.WheelUnavailable as error:
        raise ReferenceUnavailable(str(error)) from None
    return {"wheel": entry["wheel"], "sha256": entry["sha256"], "size": size}


def pin_release(text: str, manifest_path: Path = MANIFEST_PATH) -> Pinned:
    """Look the release up, verify its download, and write its pin into the manifest (release order kept).

    An existing pin that differs from what the registry now publishes is refused, never overwritten."""
    spec = ReferenceSpec.parse(text if ":" in text else f"pypi:{text}")
    if not spec.is_release or spec.is_variant:
        raise ValueError(f"conformance pin {text!r}: name a release as npm:VERSION or pypi:VERSION")
    pin = _npm_pin(spec.value) if spec.kind == "npm" else _pypi_pin(spec.value)
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    table: dict[str, Any] = manifest["releases"] if spec.kind == "npm" else manifest["pypi"]["releases"]
    digest_key = "integrity" if spec.kind == "npm" else "sha256"
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
