"""References: which runner serves a reference spec, which profile it is compared under, what is compared
between it and an implementation under test (the comparison view), and the bun baseline every
runtime/locale variant runs beside. Profiles are names (letta_profiles); nothing here imports the
code under test.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from harness.acquire.releases import bundle_version
from harness.core.fields import LETTA_CODE, PRODUCT, ComparisonView
from harness.core.model import GOLDEN, Scenario
from harness.core.reference import ReferenceSpec, label_of_runner
from harness.runners.base import Runner
from harness.runners.bun_reference import BunReferenceRunner
from harness.runners.git_reference import GitReference, GitReferenceRunner, profile_of
from harness.runners.implementations import SERVER, ImplSpec
from harness.runners.node_reference import NodeReferenceRunner
from letta_profiles import DEFAULT_PROFILE, profile_name_for_release, resolve_profile_name


@dataclass
class ReferenceUnderTest:
    """A reference and the profile (a name) the implementations under test are compared under."""

    runner: Runner
    profile: str
    spec: ReferenceSpec | None = None

    @property
    def label(self) -> str:
        """From the runner's name (`letta-code@0.32.18@node` -> `0.32.18@node`), so a stand-in runner keeps its own."""
        return label_of_runner(self.runner.name)

    @property
    def is_variant(self) -> bool:
        return self.spec is not None and self.spec.is_variant


def view_for(impl: ImplSpec) -> ComparisonView:
    """What is compared between a letta-code reference and `impl`: every field, or the product view
    for the Letta server (docs/products.md)."""
    return PRODUCT if impl.product == SERVER else LETTA_CODE


def default_runner(spec: ReferenceSpec, home: Path, ceiling: Path | None, timeout: float) -> Runner:
    if spec.kind in ("git", "checkout"):  # built from source by the one builder (harness.acquire.revision_build)
        return GitReferenceRunner(GitReference.of_spec(spec), home, ceiling, timeout)
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


def profile_for_reference(spec: ReferenceSpec, override: str | None) -> str:
    """The profile name a reference is judged under: `--profile`, else its release version's profile.

    A version that maps to no profile is an error naming the fix, never a silent default (a git
    revision or a checkout's work tree: harness.runners.git_reference.profile_of); a bundle without a
    package.json version is compared under the default profile."""
    if spec.kind in ("git", "checkout"):
        return profile_of(GitReference.of_spec(spec), override)[0]
    if override:
        return resolve_profile_name(override)
    version = spec.value.removeprefix("letta-code@") if spec.is_release else None
    if spec.kind == "bundle":
        version = bundle_version(Path(spec.value).expanduser())
    if version is None:
        return DEFAULT_PROFILE
    try:
        return profile_name_for_release(version)
    except KeyError:
        raise ValueError(
            f"--reference {spec.cli}: letta-code {version} maps to no profile in letta_profiles/__init__.py; "
            "pass --profile letta-code@<release> to compare it with that release's behaviour"
        ) from None


def applies(scenario: Scenario, ref: ReferenceUnderTest) -> bool:
    """A case limited by `profiles` runs against references whose profile, label or base label it names."""
    base = ref.spec.base_label if ref.spec is not None else ref.label
    return not scenario.profiles or bool({ref.profile, ref.label, base} & set(scenario.profiles))


def judged_against(scenario: Scenario, refs: list[ReferenceUnderTest]) -> list[str]:
    """The reference labels a case's results name in a run of `refs`: GOLDEN for a golden case, else each
    reference it applies to (a lifecycle probe or an op case: the baselines only), or, applying to none, each
    baseline."""
    if scenario.expect or scenario.golden:
        return [GOLDEN]
    applicable = [
        ref.label for ref in refs if applies(scenario, ref) and not (scenario.kind != "compile" and ref.is_variant)
    ]
    return applicable or [ref.label for ref in refs if not ref.is_variant]
