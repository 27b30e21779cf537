"""The pinned manifest (reference/manifest.json) and what `--reference` names.

Which releases are pinned on which registry (npm's `@letta-ai/letta-code`, PyPI's `letta`), their
release order, the default reference, releases accepted for one run only (`--latest`),
ReferenceSpec: the parsed `--reference` text with its runtime/locale variant, and the one rule by which
a reference written in a file (a case's divergence, an expectations entry, a lifecycle case's `recorded.for`)
matches results (`recorded_label`). No fetching here (harness.acquire.releases does that).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from harness.core.locations import SOURCE_ROOT, reference_dir
from harness.core.model import GOLDEN
from harness.core.suggest import nearest
from harness.core.versions import version_key

REPO_ROOT = SOURCE_ROOT  # the checkout's root when harness runs from one (mutation's copies, tests)
REFERENCE_DIR = reference_dir()  # the checkout's reference/ or the installed one (harness.core.locations)
MANIFEST_PATH, DRIVER_PATH = REFERENCE_DIR / "manifest.json", REFERENCE_DIR / "driver.mjs"


def load_manifest() -> dict[str, Any]:
    return json.loads(MANIFEST_PATH.read_text(encoding="utf-8"))


# what ReferenceSpec.parse reads, for help texts
REFERENCE_FORMS = "VERSION, npm:VERSION, pypi:VERSION, bundle:PATH, git:PATH[@REV][#PROFILE] or checkout:PATH"
REGISTRIES = ("npm", "pypi")  # where letta-code releases are published; npm first for a version on both


def default_reference() -> str:
    """The reference a command uses when none is given: the manifest's pinned default release."""
    return str(load_manifest()["default"])


def pinned_versions(registry: str) -> list[str]:
    """The versions pinned for one registry, in manifest order."""
    manifest = load_manifest()
    return list(manifest["releases"] if registry == "npm" else manifest["pypi"]["releases"])


def pinned_references() -> list[ReferenceSpec]:
    """Every pinned artifact, in release order: by version, npm before PyPI for a version on both."""
    specs = [ReferenceSpec(registry, v) for registry in REGISTRIES for v in pinned_versions(registry)]
    return sorted(specs, key=lambda s: (version_key(s.value), REGISTRIES.index(s.kind)))


def registry_of_bare_version(version: str) -> str:
    """A bare `--reference 0.34.12`: npm when npm has it pinned (what bare versions always meant),
    else PyPI when PyPI has it pinned, else npm (whose error then names the pinned versions)."""
    if version in pinned_versions("npm") or version in _ON_DEMAND:
        return "npm"
    if version in pinned_versions("pypi") or version in _ON_DEMAND_PYPI:
        return "pypi"
    return "npm"


RUNTIMES = ("bun", "node")
DEFAULT_RUNTIME = "bun"
_VARIANT = re.compile(r"@(bun|node)(?:/([A-Za-z0-9_.@-]+))?$")


@dataclass(frozen=True)
class ReferenceSpec:
    """What `--reference` names: `npm:0.32.18`, `pypi:0.34.12`, a bare version, `bundle:PATH` or
    `checkout:PATH`, optionally run under another runtime and locale: `npm:0.32.18@node`,
    `pypi:0.34.12@node/da_DK.UTF-8`. A PyPI release under node runs on the wheel's own Node, with
    the wheel's node_modules beside letta.js: how its PyPI users run it.

    bun with the pinned locale is the baseline (what letta-code's own development runs);
    any other runtime or locale is a *variant* of that baseline.
    """

    kind: str
    value: str
    runtime: str = DEFAULT_RUNTIME
    locale: str | None = None  # LANG/LC_ALL for the reference process; None: the pinned C.UTF-8

    @property
    def base_label(self) -> str:
        return self.value if self.kind == "npm" else f"{self.kind}:{self.value}"

    @property
    def variant(self) -> str:
        """`""` for the baseline, else `@node`, `@node/da_DK.UTF-8`, `@bun/da_DK.UTF-8`."""
        if self.runtime == DEFAULT_RUNTIME and self.locale is None:
            return ""
        return f"@{self.runtime}" + (f"/{self.locale}" if self.locale else "")

    @property
    def label(self) -> str:
        return self.base_label + self.variant

    @property
    def is_variant(self) -> bool:
        return bool(self.variant)

    @property
    def baseline(self) -> ReferenceSpec:
        return ReferenceSpec(self.kind, self.value)

    def with_runtime(self, runtime: str, locale: str | None = None) -> ReferenceSpec:
        if runtime not in RUNTIMES:
            raise ValueError(f"--runtime {runtime!r}: use one of {', '.join(RUNTIMES)}")
        return ReferenceSpec(self.kind, self.value, runtime, locale)

    @property
    def cli(self) -> str:
        """The `--reference` text that names this spec again."""
        return f"{self.kind}:{self.value}{self.variant}"

    @property
    def is_release(self) -> bool:
        """A published release (npm or PyPI), as opposed to a bundle file or a checkout."""
        return self.kind in REGISTRIES

    @classmethod
    def from_label(cls, label: str) -> ReferenceSpec:
        """The spec behind a report's reference label (`0.32.18@node`, `pypi:0.34.12`)."""
        return cls.parse(label if ":" in label.split("@")[0] else f"npm:{label}")

    @classmethod
    def parse(cls, text: str) -> ReferenceSpec:
        kind, sep, value = text.partition(":")
        if not sep:
            kind, value = "", text
        if kind == "letta-server" or text.startswith("letta-server@"):  # its runner's name: letta-server@0.16.8
            server = "letta-server:" + text.removeprefix("letta-server").lstrip(":@")
            raise ValueError(
                f"--reference {text!r}: the Letta server is an implementation under test, compared with "
                f"letta-code references: --impl {server}"
            )
        if kind not in ("", "npm", "pypi", "bundle", "git", "checkout") or not value:
            raise ValueError(
                f"--reference {text!r}: use {REFERENCE_FORMS}, optionally followed by @bun or @node "
                "and /LOCALE (npm:0.32.18@node/da_DK.UTF-8)"
            )
        if kind in ("", *REGISTRIES):
            value = value.removeprefix("letta-code@")  # a profile's spelling of a release: letta-code@0.32.18
        runtime, locale = DEFAULT_RUNTIME, None
        variant = _VARIANT.search(value)
        if variant:
            value, runtime, locale = value[: variant.start()], variant.group(1), variant.group(2)
            if not value:
                raise ValueError(f"--reference {text!r}: nothing before @{runtime}")
            if kind == "git" and (runtime, locale) != (DEFAULT_RUNTIME, None):
                raise ValueError(f"--reference {text!r}: a git: revision runs under the pinned bun only")
        return cls(kind or registry_of_bare_version(value), value, runtime, locale)


_ON_DEMAND: dict[str, dict[str, Any]] = {}
_ON_DEMAND_PYPI: dict[str, dict[str, Any]] = {}


def unpinned(spec: ReferenceSpec, text: str) -> str | None:
    """Why the release `text` names (parsed as `spec`) cannot be used: not pinned for its registry nor
    accepted for this run; the message offers the nearest pinned release (nearest_pinned), names the pinned
    ones and how to pin this one. None for a pinned release, and for what is not a release (a bundle, a
    checkout, a git revision)."""
    if not spec.is_release or spec.value in pinned_versions(spec.kind) or on_demand_pin(spec.kind, spec.value):
        return None
    pinned = ", ".join(s.cli for s in pinned_references())
    how = f"`conformance pin {spec.kind}:{spec.value}`" if ":" in text else (
        f"`conformance pin npm:{spec.value}` or `conformance pin pypi:{spec.value}`")  # fmt: skip
    near = nearest_pinned(spec, explicit=":" in text.split("@")[0])
    mean = f"; did you mean {near}?" if near else ""
    return f"not a pinned release{mean} (pinned: {pinned}); to use this release, pin it with {how}"


def nearest_pinned(spec: ReferenceSpec, explicit: bool) -> str | None:
    """The pinned release a mistyped one most likely meant, spelt as it was (`pypi:0.34.12` when the registry
    was `explicit`, else a bare version), with its variant: the same version on the other registry, else the
    nearest pinned version of the registry named (of any, for a bare version; harness.core.suggest, newest first)."""
    registries = [spec.kind] if explicit else list(REGISTRIES)
    other = [r for r in REGISTRIES if r != spec.kind and spec.value in pinned_versions(r)]
    if explicit and other:
        return f"{other[0]}:{spec.value}{spec.variant}"
    versions = [s.value for s in reversed(pinned_references()) if s.kind in registries]
    near = nearest(spec.value, versions)
    if near is None:
        return None
    return (f"{spec.kind}:{near}" if explicit else near) + spec.variant


def recorded_label(text: str) -> str:
    """The result label a reference written in a file matches (a case's divergence, an expectations entry,
    a lifecycle case's `recorded.for`): what `--reference TEXT` is labelled (`0.34.12`, `pypi:0.34.12`,
    `letta-code@0.34.12` are all `pypi:0.34.12`; `npm:0.32.18@node` is `0.32.18@node`), read by
    ReferenceSpec.parse; `*` (every reference) and `golden` (the spec's bytes) as they are. A text
    `--reference` refuses, or a release that is not pinned (it would never match a result), raises
    ValueError naming the fix."""
    if text in ("*", GOLDEN):
        return text
    try:
        spec = ReferenceSpec.parse(text)
    except ValueError as error:
        if not text.startswith("letta-server"):
            raise
        raise ValueError(f"{error}; what it does differently goes in its expectations file, not in a "
                         "reference list (docs/expectations.md)") from None  # fmt: skip
    problem = unpinned(spec, text)
    if problem:
        raise ValueError(f"{text!r} is {problem}, or name a pinned one")
    return spec.label


def on_demand_pin(registry: str, version: str) -> dict[str, Any] | None:
    """The pin `pin_on_demand` accepted for this process, if any."""
    return (_ON_DEMAND_PYPI if registry == "pypi" else _ON_DEMAND).get(version)


def pin_on_demand(version: str, integrity: str, registry: str = "npm") -> None:
    """Accept an unpinned release for this process only (`conformance matrix --latest`): its tarball
    or wheel is verified against the digest the registry reported (npm: sha512 integrity; PyPI:
    sha256), and nothing is written to the manifest."""
    if registry == "pypi":
        _ON_DEMAND_PYPI[version] = {"sha256": integrity}
    else:
        _ON_DEMAND[version] = {"integrity": integrity, "node_runtime_deps": "node-ws"}
