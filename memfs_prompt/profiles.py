"""Profiles: one per distinct upstream compiler behaviour, named after the first release with it.

Every published letta-code release that contains `compileLocalSystemPrompt` (npm's
`@letta-ai/letta-code` and PyPI's `letta` from 0.32.13 on; a version published on both is one
release) maps to exactly one profile. The differences were read from the release bundles and
confirmed by running the whole corpus against each release (docs/profiles.md).
"""

from __future__ import annotations

from dataclasses import dataclass

from .frontmatter import Dialect


@dataclass(frozen=True)
class Profile:
    name: str
    releases: tuple[str, ...]
    frontmatter: Dialect
    honours_include_memfs: bool  # `includeMemfs === false` skips the memory projection (0.25.9+)
    returns_core_memory: bool  # the compile record has `coreMemory` (0.30.28+)
    pragma_latin1_literals: bool  # `// @bun` bundles: bun decodes non-ASCII literals as Latin-1 (0.25.x)
    memfs_v2: bool = False  # a committed root MEMORY.md renders as memfs-v2 (0.33.3+, and the spec)
    # The conversation cache (memfs_prompt.conversation): `recompile` (0.25.x), `update-for-models`
    # (a <memory_update> block only for `update_models`, 0.30.28 to 0.32.13) or `update` (0.32.14+).
    lifecycle: str = "update"
    update_models: tuple[str, ...] = ()
    recompiles_after_compaction: bool = True  # 0.30.28+; 0.25.x keep the cached prompt after compacting
    # The turn's `<available_skills>` block (memfs_prompt.skills_block): `tree` (0.25.3 to 0.30.28,
    # grouped by location root) or `list` (0.31.12+, one "- `name`: description" line per skill).
    skills_block: str = "list"
    # `LocalBackend.createEphemeralConversation` (0.33.6+): agent-free conversations with their own raw prompt.
    agent_free_conversations: bool = False
    # Where a turn first formats the clock (`toISOString`; an Invalid Date throws there): `user-message`
    # (0.30.28+: the user's message is stamped with it, so nothing is stored) or `git-log` (0.25.x: messages
    # are stamped from a counter; the debug log of the turn's git commands formats it after the message is stored).
    turn_clock: str = "user-message"


# Every published version, in release order: npm's seven, then PyPI's from 0.32.13 (no 0.32.17 there).
PUBLISHED = (
    "0.25.3", "0.25.9", "0.30.28", "0.31.12", "0.32.8", "0.32.13", "0.32.14", "0.32.15", "0.32.16", "0.32.17",
    "0.32.18", "0.32.19", *(f"0.33.{n}" for n in range(9)), *(f"0.34.{n}" for n in range(13)),
)  # fmt: skip


def _releases(first: str, last: str) -> tuple[str, ...]:
    """The published versions from `first` to `last`, both included."""
    return PUBLISHED[PUBLISHED.index(first) : PUBLISHED.index(last) + 1]


# `supportsMidConversationSystemMessages(agent)`: `agent.model === "anthropic/claude-opus-4-8"`.
_OPUS: dict = {"lifecycle": "update-for-models", "update_models": ("anthropic/claude-opus-4-8",)}

PROFILES: dict[str, Profile] = {
    p.name: p
    for p in (
        Profile(
            "letta-code@0.25.3",
            ("0.25.3",),
            Dialect.V0_25,
            False,
            False,
            True,
            lifecycle="recompile",
            recompiles_after_compaction=False,
            skills_block="tree",
            turn_clock="git-log",
        ),
        Profile(
            "letta-code@0.25.9",
            ("0.25.9",),
            Dialect.V0_25,
            True,
            False,
            True,
            lifecycle="recompile",
            recompiles_after_compaction=False,
            skills_block="tree",
            turn_clock="git-log",
        ),
        Profile("letta-code@0.30.28", ("0.30.28",), Dialect.V0_30, True, True, False, skills_block="tree", **_OPUS),
        Profile("letta-code@0.31.12", _releases("0.31.12", "0.32.13"), Dialect.V0_31, True, True, False, **_OPUS),
        Profile("letta-code@0.32.14", _releases("0.32.14", "0.33.2"), Dialect.V0_32_17, True, True, False),
        Profile("letta-code@0.33.3", _releases("0.33.3", "0.33.5"), Dialect.V0_32_17, True, True, False, memfs_v2=True),
        Profile(
            "letta-code@0.33.6",
            _releases("0.33.6", "0.34.12"),
            Dialect.V0_32_17,
            True,
            True,
            False,
            memfs_v2=True,
            agent_free_conversations=True,
        ),
        Profile("spec-v2", (), Dialect.V0_32_17, True, True, False, memfs_v2=True),
    )
}

DEFAULT_RELEASE = "0.34.12"


def profile_for_release(version: str) -> Profile:
    """The profile that reproduces letta-code release `version` (from npm or PyPI)."""
    for profile in PROFILES.values():
        if version in profile.releases:
            return profile
    known = ", ".join(r for p in PROFILES.values() for r in p.releases)
    raise KeyError(f"no profile for letta-code {version} (known releases: {known})")


def resolve_profile(name: str) -> Profile:
    """Accept a profile name, `letta-code@X` for any mapped release X, or a bare version."""
    if name in PROFILES:
        return PROFILES[name]
    version = name.removeprefix("letta-code@")
    try:
        return profile_for_release(version)
    except KeyError:
        choices = ", ".join(PROFILES)
        raise KeyError(f"unknown profile {name!r}; choose one of {choices} or letta-code@<release>") from None


DEFAULT = profile_for_release(DEFAULT_RELEASE)
