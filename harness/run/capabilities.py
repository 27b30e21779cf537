"""What an implementation says it implements, and what a case needs of it (docs/protocol.md, `hello`).

Owns the decision that a case is not applicable to an implementation because the case needs a layout
feature (a feature rule of cases/rules.yaml: harness.cases.rules.needed_features) that the implementation's
`hello` does not declare in `capabilities.features` (Runner.features; absent: every feature), and the reason
it gives. The decision is made before the implementation is asked (harness.run.session).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from harness.cases.rules import Rule, needed_features
from harness.core.model import Scenario


def undeclared(
    scenario: Scenario, profile: str, rules: Mapping[str, Rule], declared: Callable[[], frozenset[str] | None]
) -> str | None:
    """Why the case is not asked of an implementation under `profile`: the features it needs that `declared()`
    (the implementation's hello, asked only when the case needs some feature) leaves out; None if none."""
    needed = needed_features(scenario, profile, rules)
    if not needed:
        return None
    features = declared()
    missing = sorted(needed - features) if features is not None else []
    if not missing:
        return None
    named = ", ".join(sorted(features or ())) or "none"
    return (
        f"it does not declare feature{'s' if len(missing) > 1 else ''} {', '.join(missing)} in hello "
        f"(capabilities.features: {named})"
    )
