"""TEMPORARY stand-in until the profdata branch lands (delegates to memfs_prompt)."""

from __future__ import annotations


def profile_name_for_release(version: str) -> str:
    from memfs_prompt.profiles import profile_for_release

    return profile_for_release(version).name


def resolve_profile_name(name: str) -> str:
    from memfs_prompt.profiles import resolve_profile

    return resolve_profile(name).name


DEFAULT_RELEASE = "0.34.12"
