"""letta_profiles: the one table of profile names and releases, and the naming rules the port and the harness
share (memfs_prompt.profiles resolves through them; the harness reads them without importing the port)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from letta_profiles import (
    DEFAULT_PROFILE,
    DEFAULT_RELEASE,
    PROFILE_NAMES,
    PROFILE_RELEASES,
    PUBLISHED,
    profile_name_for_release,
    resolve_profile_name,
)


def test_every_published_release_is_covered_by_exactly_one_profile_in_release_order() -> None:
    covered = [release for releases in PROFILE_RELEASES.values() for release in releases]
    assert covered == list(PUBLISHED)


def test_a_release_profile_is_named_after_its_first_release() -> None:
    for name, releases in PROFILE_RELEASES.items():
        assert name == (f"letta-code@{releases[0]}" if releases else "spec-v2")


def test_the_default_profile_is_the_one_covering_the_default_release() -> None:
    assert (DEFAULT_RELEASE, DEFAULT_PROFILE) == ("0.34.12", "letta-code@0.34.7")
    assert DEFAULT_RELEASE in PROFILE_RELEASES[DEFAULT_PROFILE]


@pytest.mark.parametrize(
    ("name", "profile"),
    [
        ("letta-code@0.32.14", "letta-code@0.32.14"),
        ("letta-code@0.32.18", "letta-code@0.32.14"),
        ("0.32.18", "letta-code@0.32.14"),
        ("0.25.3", "letta-code@0.25.3"),
        ("spec-v2", "spec-v2"),
        ("letta-code@0.34.12", "letta-code@0.34.7"),
        ("letta-code@0.34.6", "letta-code@0.34.1"),
        ("0.34.0", "letta-code@0.33.6"),
    ],
)
def test_a_profile_name_a_covered_release_or_a_bare_version_resolves(name: str, profile: str) -> None:
    assert resolve_profile_name(name) == profile


def test_an_unknown_name_or_release_is_refused_with_the_choices() -> None:
    with pytest.raises(KeyError, match=r"unknown profile 'letta-code@0\.24\.13'; choose one of letta-code@0\.25\.3, "):
        resolve_profile_name("letta-code@0.24.13")
    with pytest.raises(KeyError, match=r"no profile for letta-code 0\.99\.0 \(known releases: 0\.25\.3, 0\.25\.9, "):
        profile_name_for_release("0.99.0")
    with pytest.raises(KeyError):
        profile_name_for_release("spec-v2")  # a profile, not a release


def test_the_port_gives_behaviours_to_exactly_the_names_of_the_table() -> None:
    from memfs_prompt.profiles import DEFAULT, PROFILES, resolve_profile

    assert tuple(PROFILES) == PROFILE_NAMES and DEFAULT.name == DEFAULT_PROFILE
    assert all(PROFILES[name].releases == releases for name, releases in PROFILE_RELEASES.items())
    assert resolve_profile("letta-code@0.32.18") is PROFILES["letta-code@0.32.14"]


def test_the_table_loads_without_the_port_or_the_harness() -> None:
    code = (
        "import sys, letta_profiles; print(sorted(m for m in sys.modules if m.startswith(('memfs_prompt', 'harness'))))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_every_profile_behaves_differently_from_the_one_before_it() -> None:
    """One profile per distinct behaviour: a row built from its predecessor (dataclasses.replace) changes something."""
    from dataclasses import asdict
    from itertools import pairwise

    from memfs_prompt.profiles import PROFILES

    rows = [{k: v for k, v in asdict(profile).items() if k != "name"} for profile in PROFILES.values()]
    assert all(before != after for before, after in pairwise(rows))
