"""What `--reference` names (ReferenceSpec) and its label: spelled and parsed here only.

A release's label is its registry's prefix and its version (`pypi:0.34.12`; npm's is bare: `0.32.18`), then its
runtime/locale variant (`@node/da_DK.UTF-8`); a runner of a release is named `letta-code@LABEL` for the bare
registry. Also the releases pinned in reference/manifest.json as specs, the default reference, release order of
labels (release_key), and the one rule by which a reference written in a file (a case's divergence, an
expectations entry, a lifecycle case's `recorded.for`) matches results (recorded_label). No fetching here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from harness.core.model import GOLDEN
from harness.core.registries import (
    BARE_REGISTRY,
    REGISTRIES,
    REGISTRY_NAMES,
    load_manifest,
    on_demand_pin,
    pinned_versions,
)
from harness.core.suggest import nearest
from harness.core.versions import version_key

SOURCE_KINDS = ("bundle", "git", "checkout")  # references that are no release: a file, a revision, a checkout
RELEASE_PREFIX = "letta-code@"  # a profile's and a runner's spelling of a release: letta-code@0.32.18
REFERENCE_FORMS = (  # what ReferenceSpec.parse reads, for help texts
    "VERSION, "
    + ", ".join(f"{name}:VERSION" for name in REGISTRY_NAMES)
    + ", bundle:PATH, git:PATH[@REV][#PROFILE] or checkout:PATH"
)
RUNTIMES = ("bun", "node")
DEFAULT_RUNTIME = "bun"
_VARIANT = re.compile(r"@(bun|node)(?:/([A-Za-z0-9_.@-]+))?$")
_RELEASE_LABEL = re.compile(rf"^(?:({'|'.join(REGISTRY_NAMES)}):)?(?:{RELEASE_PREFIX})?(\d+(?:\.\d+)+)(@.*)?$")


@dataclass(frozen=True)
class ReferenceSpec:
    """What `--reference` names: `npm:0.32.18`, `pypi:0.34.12`, a bare version, `bundle:PATH`,
    `git:PATH@REV` or `checkout:PATH` (a revision or a work tree, built from source and run under the
    pinned bun only), a release or bundle optionally under another runtime and locale: `npm:0.32.18@node`,
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
        return self.value if self.kind == BARE_REGISTRY.name else f"{self.kind}:{self.value}"

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
    def runner_name(self) -> str:
        """The name its runner reports (and the result store keeps outcomes under): `letta-code@0.32.18@node`
        for a bare-labelled release, the label otherwise; label_of_runner reads it back."""
        return RELEASE_PREFIX + self.label if self.kind == BARE_REGISTRY.name else self.label

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
        """A published release (on one of harness.core.registries), as opposed to a bundle file or a checkout."""
        return self.kind in REGISTRY_NAMES

    @classmethod
    def from_label(cls, label: str) -> ReferenceSpec:
        """The spec behind a report's reference label (`0.32.18@node`, `pypi:0.34.12`)."""
        return cls.parse(cli_of_label(label))

    @classmethod
    def parse(cls, text: str) -> ReferenceSpec:
        kind, sep, value = text.partition(":")
        if not sep:
            kind, value = "", text
        _refuse_server(kind, text)
        if kind not in ("", *REGISTRY_NAMES, *SOURCE_KINDS) or not value:
            raise ValueError(
                f"--reference {text!r}: use {REFERENCE_FORMS}, optionally followed by @bun or @node "
                "and /LOCALE (npm:0.32.18@node/da_DK.UTF-8)"
            )
        if kind in ("", *REGISTRY_NAMES):
            value = value.removeprefix(RELEASE_PREFIX)
        runtime, locale = DEFAULT_RUNTIME, None
        variant = _VARIANT.search(value)
        if variant:
            value, runtime, locale = value[: variant.start()], variant.group(1), variant.group(2)
            if not value:
                raise ValueError(f"--reference {text!r}: nothing before @{runtime}")
            if kind in ("git", "checkout") and (runtime, locale) != (DEFAULT_RUNTIME, None):
                what = "a git: revision" if kind == "git" else "a checkout: work tree (built from source)"
                raise ValueError(f"--reference {text!r}: {what} runs under the pinned bun only")
        return cls(kind or registry_of_bare_version(value), value, runtime, locale)


def _refuse_server(kind: str, text: str) -> None:
    if kind == "letta-server" or text.startswith("letta-server@"):  # its runner's name: letta-server@0.16.8
        server = "letta-server:" + text.removeprefix("letta-server").lstrip(":@")
        raise ValueError(
            f"--reference {text!r}: the Letta server is an implementation under test, compared with "
            f"letta-code references: --impl {server}"
        )


def cli_of_label(label: str) -> str:
    """The `--reference` text for a report's reference label: a bare release label gets its registry's prefix."""
    return label if ":" in label.split("@")[0] else f"{BARE_REGISTRY.name}:{label}"


def label_of_runner(name: str) -> str:
    """A reference's label from its runner's name (`letta-code@0.32.18@node` -> `0.32.18@node`); a stand-in
    runner's own name as it is."""
    return name.removeprefix(RELEASE_PREFIX)


def release_parts(label: str) -> tuple[str, str, str] | None:
    """(registry, version, variant) of a release label (`pypi:0.34.12`, `0.32.18@node`, `letta-code@0.32.18`),
    None for anything else (`bundle:...`, `golden`)."""
    found = _RELEASE_LABEL.match(label)
    if not found:
        return None
    return found.group(1) or BARE_REGISTRY.name, found.group(2), found.group(3) or ""


def release_name(label: str) -> str:
    """A reference label as people read it: `letta-code 0.34.12 (pypi:0.34.12)` for a release, the label else."""
    parts = release_parts(label)
    return f"letta-code {parts[1]} ({label})" if parts else label


def release_key(label: str) -> tuple[int, tuple[int, ...], int, str, str]:
    """Sort key for a reference label (`0.32.18`, `pypi:0.34.12`, `0.32.18@node`, `bundle:...`): releases in
    release order, registries in table order for one version, the baseline before its variants; anything else
    after."""
    parts = release_parts(label)
    if parts is None:
        return (1, (), 0, "", label)
    name, version, variant = parts
    return (0, version_key(version), REGISTRY_NAMES.index(name), variant, label)


def default_reference() -> str:
    """The reference a command uses when none is given: the manifest's pinned default release."""
    return str(load_manifest()["default"])


def pinned_references() -> list[ReferenceSpec]:
    """Every pinned artifact, in release order: by version, registries in table order for a version on several."""
    specs = [ReferenceSpec(row.name, v) for row in REGISTRIES for v in pinned_versions(row.name)]
    return sorted(specs, key=lambda s: (version_key(s.value), REGISTRY_NAMES.index(s.kind)))


def registry_of_bare_version(version: str) -> str:
    """A bare `--reference 0.34.12`: the first registry (in table order) that has it pinned or accepted for this
    run, else the bare-labelled one (whose error then names the pinned versions)."""
    for name in REGISTRY_NAMES:
        if version in pinned_versions(name) or on_demand_pin(name, version):
            return name
    return BARE_REGISTRY.name


def unpinned(spec: ReferenceSpec, text: str) -> str | None:
    """Why the release `text` names (parsed as `spec`) cannot be used: not pinned for its registry nor
    accepted for this run; the message offers the nearest pinned release (nearest_pinned), names the pinned
    ones and how to pin this one. None for a pinned release, and for what is not a release (a bundle, a
    checkout, a git revision)."""
    if not spec.is_release or spec.value in pinned_versions(spec.kind) or on_demand_pin(spec.kind, spec.value):
        return None
    pinned = ", ".join(s.cli for s in pinned_references())
    if ":" in text:
        how = f"`conformance pin {spec.kind}:{spec.value}`"
    else:
        how = " or ".join(f"`conformance pin {name}:{spec.value}`" for name in REGISTRY_NAMES)
    near = nearest_pinned(spec, explicit=":" in text.split("@")[0])
    mean = f"; did you mean {near}?" if near else ""
    return f"not a pinned release{mean} (pinned: {pinned}); to use this release, pin it with {how}"


def nearest_pinned(spec: ReferenceSpec, explicit: bool) -> str | None:
    """The pinned release a mistyped one most likely meant, spelt as it was (`pypi:0.34.12` when the registry
    was `explicit`, else a bare version), with its variant: the same version on another registry, else the
    nearest pinned version of the registry named (of any, for a bare version; harness.core.suggest, newest
    first)."""
    registries = [spec.kind] if explicit else list(REGISTRY_NAMES)
    other = [name for name in REGISTRY_NAMES if name != spec.kind and spec.value in pinned_versions(name)]
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
        why = "what it does differently goes in its expectations file, not in a reference list (docs/expectations.md)"
        raise ValueError(f"{error}; {why}") from None
    problem = unpinned(spec, text)
    if problem:
        raise ValueError(f"{text!r} is {problem}, or name a pinned one")
    return spec.label
