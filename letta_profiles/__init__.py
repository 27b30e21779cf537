"""Profile names and the letta-code releases each one covers: data both the port and the harness read.

A profile is one distinct behaviour of upstream's memory compiler, named after the first release
that has it (docs/profiles.md says what distinguishes each). Every published letta-code release
that contains `compileLocalSystemPrompt` (npm's `@letta-ai/letta-code` and PyPI's `letta` from
0.32.13 on; a version published on both is one release) is covered by exactly one profile.

This package owns the names, the releases, the default release and the two naming rules
(`profile_name_for_release`, `resolve_profile_name`). What a profile does is memfs_prompt.profiles'
(it gives each name here its behaviours); which profile a reference is judged with is the
harness's. Standard library only, and it imports neither, so the harness reads profiles without
importing the code it tests.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

__all__ = [
    "DEFAULT_PROFILE",
    "DEFAULT_RELEASE",
    "PROFILE_NAMES",
    "PROFILE_RELEASES",
    "PUBLISHED",
    "profile_name_for_release",
    "resolve_profile_name",
]

# Every published version, in release order: npm's seven, then PyPI's from 0.32.13 (no 0.32.17 there).
PUBLISHED: tuple[str, ...] = (
    "0.25.3",
    "0.25.9",
    "0.30.28",
    "0.31.12",
    "0.32.8",
    "0.32.13",
    "0.32.14",
    "0.32.15",
    "0.32.16",
    "0.32.17",
    "0.32.18",
    "0.32.19",
    *(f"0.33.{n}" for n in range(9)),
    *(f"0.34.{n}" for n in range(13)),
)


def _releases(first: str, last: str) -> tuple[str, ...]:
    """The published versions from `first` to `last`, both included."""
    return PUBLISHED[PUBLISHED.index(first) : PUBLISHED.index(last) + 1]


# Profile name -> the releases it reproduces, in release order; `spec-v2` reproduces none (it is checked
# against the spec's golden bytes only).
PROFILE_RELEASES: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "letta-code@0.25.3": ("0.25.3",),
        "letta-code@0.25.9": ("0.25.9",),
        "letta-code@0.30.28": ("0.30.28",),
        "letta-code@0.31.12": ("0.31.12",),
        "letta-code@0.32.8": _releases("0.32.8", "0.32.13"),
        "letta-code@0.32.14": _releases("0.32.14", "0.32.19"),
        "letta-code@0.33.0": _releases("0.33.0", "0.33.2"),
        "letta-code@0.33.3": _releases("0.33.3", "0.33.5"),
        "letta-code@0.33.6": _releases("0.33.6", "0.34.0"),
        "letta-code@0.34.1": _releases("0.34.1", "0.34.6"),
        "letta-code@0.34.7": _releases("0.34.7", "0.34.12"),
        "spec-v2": (),
    }
)
PROFILE_NAMES: tuple[str, ...] = tuple(PROFILE_RELEASES)

DEFAULT_RELEASE = "0.34.12"


def profile_name_for_release(version: str) -> str:
    """The name of the profile that reproduces letta-code release `version` (from npm or PyPI); KeyError if none."""
    for name, releases in PROFILE_RELEASES.items():
        if version in releases:
            return name
    known = ", ".join(r for releases in PROFILE_RELEASES.values() for r in releases)
    raise KeyError(f"no profile for letta-code {version} (known releases: {known})")


def resolve_profile_name(name: str) -> str:
    """The profile `name` means: a profile name, `letta-code@X` for any covered release X, or a bare version."""
    if name in PROFILE_RELEASES:
        return name
    try:
        return profile_name_for_release(name.removeprefix("letta-code@"))
    except KeyError:
        choices = ", ".join(PROFILE_RELEASES)
        raise KeyError(f"unknown profile {name!r}; choose one of {choices} or letta-code@<release>") from None


DEFAULT_PROFILE = profile_name_for_release(DEFAULT_RELEASE)
