"""References under test: which runner serves a reference spec, which Python profile it is compared with
and on which fields (its comparison view), and the bun baseline every runtime/locale variant runs beside.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from harness.model import Scenario
from harness.runners.base import Runner
from harness.runners.bun_reference import BunReferenceRunner
from harness.runners.git_reference import GitReference, GitReferenceRunner, profile_of
from harness.runners.letta_server import COMPARED_WITH, LettaServerRunner
from harness.runners.manifest import SERVER, ReferenceSpec
from harness.runners.node_reference import NodeReferenceRunner
from harness.runners.releases import bundle_version
from harness.verdict.view import LETTA_CODE, PRODUCT, ComparisonView
from memfs_prompt.profiles import DEFAULT, Profile, profile_for_release, resolve_profile


@dataclass
class ReferenceUnderTest:
    """A reference and the Python profile it is compared with."""

    runner: Runner
    profile: Profile
    spec: ReferenceSpec | None = None

    @property
    def label(self) -> str:
        """From the runner's name (`letta-code@0.32.18@node` -> `0.32.18@node`), so a stand-in runner keeps its own."""
        return (
            self.runner.name.removeprefix("letta-code@")
            if self.runner.name.startswith("letta-code@")
            else self.runner.name
        )

    @property
    def view(self) -> ComparisonView:
        """What is compared with this reference: every field, or the product view for the Letta server."""
        return view_for(self.spec)


def view_for(spec: ReferenceSpec | None) -> ComparisonView:
    """The comparison view of a reference spec (a stand-in runner without a spec: letta-code's)."""
    return PRODUCT if spec is not None and spec.product == SERVER else LETTA_CODE


def default_runner(spec: ReferenceSpec, home: Path, ceiling: Path | None, timeout: float) -> Runner:
    if spec.kind == "git":
        return GitReferenceRunner(GitReference.parse(f"git:{spec.value}"), home, ceiling, timeout)
    if spec.product == SERVER:
        return LettaServerRunner(spec, home, ceiling, timeout)
    runner = NodeReferenceRunner if spec.runtime == "node" else BunReferenceRunner
    return runner(spec, home, ceiling, timeout)


def with_baselines(specs: list[ReferenceSpec]) -> list[ReferenceSpec]:
    """The specs in order, each variant preceded by its bun baseline when that is not given."""
    ordered: list[ReferenceSpec] = []
    for spec in specs:
        if spec.is_variant and spec.baseline not in ordered:
            ordered.append(spec.baseline)  # before its variant, even when it is named later
        if spec not in ordered:
            ordered.append(spec)
    return ordered


def profile_for_reference(spec: ReferenceSpec, override: str | None) -> Profile:
    """The profile a reference is judged with: `--profile`, else its release version's profile.

    A version that maps to no profile is an error naming the fix, never a silent default (a git
    revision: harness.runners.git_reference.profile_of); a bundle without a package.json version
    is compared with the default profile."""
    if spec.kind == "git":
        return profile_of(GitReference.parse(f"git:{spec.value}"), override)[0]
    if override:
        return resolve_profile(override)
    if spec.product == SERVER:
        return resolve_profile(COMPARED_WITH)
    version = spec.value.removeprefix("letta-code@") if spec.is_release else None
    if spec.kind == "bundle":
        version = bundle_version(Path(spec.value).expanduser())
    if version is None:
        return DEFAULT
    try:
        return profile_for_release(version)
    except KeyError:
        raise ValueError(
            f"--reference {spec.cli}: letta-code {version} maps to no profile in memfs_prompt/profiles.py; "
            "pass --profile letta-code@<release> to compare it with that release's behaviour"
        ) from None


def applies(scenario: Scenario, ref: ReferenceUnderTest) -> bool:
    """A case limited by `profiles` runs against references whose profile, label or base label it names.
    Lifecycle probes need letta-code's turn loop: the Letta server's driver has none."""
    if scenario.kind == "lifecycle" and ref.spec is not None and ref.spec.product == SERVER:
        return False
    base = ref.spec.base_label if ref.spec is not None else ref.label
    return not scenario.profiles or bool({ref.profile.name, ref.label, base} & set(scenario.profiles))
