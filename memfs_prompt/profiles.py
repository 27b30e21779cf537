"""Profiles: what each upstream compiler behaviour does, one Profile per name letta_profiles lists.

A profile is named after the first letta-code release with its behaviour; the names, the releases
each covers and the default release are letta_profiles' (one table, which the harness reads
without importing the port). Here each name gets its behaviours. The differences were read from
the release bundles and confirmed by running the whole corpus against each release (docs/profiles.md).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from letta_profiles import (
    DEFAULT_PROFILE,
    PROFILE_NAMES,
    PROFILE_RELEASES,
    profile_name_for_release,
    resolve_profile_name,
)

from .frontmatter import Dialect


@dataclass(frozen=True)
class Profile:
    name: str  # one of letta_profiles.PROFILE_NAMES
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
    # `executeConversationTurn` refuses a conversation whose last run is not over (0.33.6+), and a run a turn starts
    # ends only with the executor's stream: a turn whose compile throws leaves it running, for good.
    failed_turn_keeps_run: bool = False
    # `normalizeLocalModelHandle` (0.30.28+): a model step's handle (and an agent-free conversation's) is normalised,
    # `lc-anthropic/` to `anthropic/` and so on (memfs_prompt.model_handles); 0.25.x store it as given.
    normalizes_model_handles: bool = True
    # The Memory tool's read-only view of a memory directory (`memory_view`, src/tools/impl/memory.ts, 0.34.7+).
    memory_view: bool = False
    # The memory write tool (memfs_prompt.memory_write): "" none (0.33.3+, the spec), `noop-message` (0.25.x: a
    # write that changes nothing is a message), `noop-error` (0.30.28: an error; git runs with signing off),
    # `format-aware` (0.31.12 to 0.33.2: `create` checks its path before its description).
    memory_write: str = ""
    # The memory write tool under a remote MemFS backend (`syncMode: "remote"`, `capabilities.localMemfs` unset):
    # "" not modelled (0.25.x commit, push and replay on newer remote memory; no tool from 0.33.3), else the hook
    # policy its `prepareMemoryRepoForGitOps` installs before a commit it does not push (the harness syncs after
    # the turn): `legacy-only` (0.30.28, `installPreCommitHook(dir)`), `root-marker` (0.31.12 to 0.33.2,
    # `installPreCommitHook(dir, true)`).
    remote_write_hook_policy: str = ""
    # The post-turn memory reminders' texts (memfs_prompt.memory_reminders, src/reminders/memory-git-sync.ts): ""
    # (0.25.x: no post-turn sync), "0.30.28", "0.33.0" (new conflict headline; "staging only the files you changed")
    # or "0.33.3" (a conflict is left to the background repair: "Leave the repository unchanged").
    memory_reminders: str = "0.33.3"

    # The pre-commit hook upstream installs in a memory repository (memfs_prompt.commit_validation): `legacy`
    # (0.25.3 to 0.30.28: bash, system/ and reference/ files only), `policy-bash` (0.31.12: the layout policy file
    # chooses bash v1 or v2 checks), `policy-node` (0.32.8+: bash passes the file names to
    # validateMemoryFileFrontmatter under node), `node-tree` (0.34.1+: node lists the v2 tree itself with
    # `git ls-files -z`, so names git quotes, non-ASCII ones among them, are checked under their own name).
    commit_hook: str = "policy-node"
    # The layout policy the local backend installs with its hook (prepareLocalOnlyMemoryRepoForGitOps):
    # `legacy-only` (`installPreCommitHook(dir)`, 0.31.12 to 0.33.2; the hook reads none before) or
    # `root-marker-if-root` (`installLocalMemoryPreCommitHook`, 0.33.3+: root-marker when MEMORY.md is in the
    # work tree or HEAD).
    local_hook_policy: str = "legacy-only"

    @property
    def releases(self) -> tuple[str, ...]:
        """The letta-code releases this profile reproduces, in release order (letta_profiles.PROFILE_RELEASES)."""
        return PROFILE_RELEASES[self.name]


# The table, in letta_profiles' order. The first profile states every behaviour; each later one is built from the
# profile before it (`dataclasses.replace`) and states only what changed there, so a row reads as its release's notes.
_0_25_3 = Profile(
    "letta-code@0.25.3",
    Dialect.V0_25,
    honours_include_memfs=False,
    returns_core_memory=False,
    pragma_latin1_literals=True,
    memfs_v2=False,
    lifecycle="recompile",
    update_models=(),
    recompiles_after_compaction=False,
    skills_block="tree",
    agent_free_conversations=False,
    turn_clock="git-log",
    failed_turn_keeps_run=False,
    normalizes_model_handles=False,
    memory_view=False,
    memory_write="noop-message",
    remote_write_hook_policy="",
    memory_reminders="",
    commit_hook="legacy",
    local_hook_policy="legacy-only",
)
# Honours `includeMemfs: false`.
_0_25_9 = replace(_0_25_3, name="letta-code@0.25.9", honours_include_memfs=True)
# The new frontmatter regex, `coreMemory` in the record, no pragma; `<memory_update>` only where
# `supportsMidConversationSystemMessages(agent)`: `agent.model === "anthropic/claude-opus-4-8"` (until 0.32.14).
_0_30_28 = replace(
    _0_25_9,
    name="letta-code@0.30.28",
    frontmatter=Dialect.V0_30,
    returns_core_memory=True,
    pragma_latin1_literals=False,
    lifecycle="update-for-models",
    update_models=("anthropic/claude-opus-4-8",),
    recompiles_after_compaction=True,
    turn_clock="user-message",
    normalizes_model_handles=True,
    memory_write="noop-error",
    remote_write_hook_policy="legacy-only",
    memory_reminders="0.30.28",
)
# Indented frontmatter lines are ignored; the `list` skills block; the hook reads the layout policy file.
_0_31_12 = replace(
    _0_30_28,
    name="letta-code@0.31.12",
    frontmatter=Dialect.V0_31,
    skills_block="list",
    memory_write="format-aware",
    remote_write_hook_policy="root-marker",
    commit_hook="policy-bash",
)
# Compiles as 0.31.12; commits are checked by JavaScript validators (memory-frontmatter.ts) from here.
_0_32_8 = replace(_0_31_12, name="letta-code@0.32.8", commit_hook="policy-node")
# YAML block scalars in frontmatter; `<memory_update>` for every model.
_0_32_14 = replace(
    _0_32_8, name="letta-code@0.32.14", frontmatter=Dialect.V0_32_17, lifecycle="update", update_models=()
)
# Compiles as 0.32.14; the post-turn memory reminders' texts change here (memfs_prompt.memory_reminders).
_0_33_0 = replace(_0_32_14, name="letta-code@0.33.0", memory_reminders="0.33.0")
# memfs-v2 in the local compiler; no memory write tool; the local backend installs the root-marker policy.
_0_33_3 = replace(
    _0_33_0,
    name="letta-code@0.33.3",
    memfs_v2=True,
    memory_write="",
    remote_write_hook_policy="",
    memory_reminders="0.33.3",
    local_hook_policy="root-marker-if-root",
)
# Agent-free conversations; a failed turn's run stays active.
_0_33_6 = replace(_0_33_3, name="letta-code@0.33.6", agent_free_conversations=True, failed_turn_keeps_run=True)
# Compiles as 0.33.6; the pre-commit hook's v2 checks list the tree in node (unquoted names) from here.
_0_34_1 = replace(_0_33_6, name="letta-code@0.34.1", commit_hook="node-tree")
# Compiles as 0.34.1; the Memory tool's read-only view (src/tools/impl/memory.ts) appears here.
_0_34_7 = replace(_0_34_1, name="letta-code@0.34.7", memory_view=True)
# The spec's chapter 8 (no release; its golden bytes only): memfs-v2 as 0.33.3+ compile it, without the releases'
# conversation, tool, reminder and hook additions.
_SPEC_V2 = replace(
    _0_34_7,
    name="spec-v2",
    agent_free_conversations=False,
    failed_turn_keeps_run=False,
    memory_view=False,
    memory_reminders="",
    commit_hook="policy-node",
    local_hook_policy="legacy-only",
)

PROFILES: dict[str, Profile] = {
    p.name: p
    for p in (
        _0_25_3,
        _0_25_9,
        _0_30_28,
        _0_31_12,
        _0_32_8,
        _0_32_14,
        _0_33_0,
        _0_33_3,
        _0_33_6,
        _0_34_1,
        _0_34_7,
        _SPEC_V2,
    )
}

if tuple(PROFILES) != PROFILE_NAMES:  # one table: every name letta_profiles lists has behaviours here, in its order
    raise ImportError(f"memfs_prompt.profiles defines {list(PROFILES)}, letta_profiles names {list(PROFILE_NAMES)}")


def profile_for_release(version: str) -> Profile:
    """The profile that reproduces letta-code release `version` (from npm or PyPI)."""
    return PROFILES[profile_name_for_release(version)]


def resolve_profile(name: str) -> Profile:
    """Accept a profile name, `letta-code@X` for any mapped release X, or a bare version."""
    return PROFILES[resolve_profile_name(name)]


DEFAULT = PROFILES[DEFAULT_PROFILE]
