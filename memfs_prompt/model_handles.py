"""The model handles of the turn loop: what upstream's local store keeps when a model is asked for.

- `model_for_update` is what `updateAgent({model})` stores (`LocalStore.updateAgent`): a request that
  `shouldUseDefaultLocalModel` names (`""`, `auto`, any `letta/...`) switches to the default model
  (every release, 0.25.3 on); any other handle is kept, normalised first from 0.30.28.
- `normalize_model_handle` is the part of `normalizeLocalModelHandle` (0.30.28+,
  `src/backend/local/local-model-normalization.ts`) that needs no model catalog: the provider aliases of
  `normalizeModelHandleForRegistry` (`src/agent/model-handles.ts`). Upstream first keeps a handle its
  pi-provider catalog resolves (`isResolvablePiModelHandle`: `openai-codex/gpt-5.5` stays,
  `moonshotai/kimi-k2.5` stays before 0.32.14) and completes a bare model name the catalog knows
  (`claude-opus-4-8` becomes `anthropic/claude-opus-4-8` on 0.30.28 only); neither is ported
  (docs/quirks.md), as the catalogs are upstream's data and change with every release.

An agent-free conversation (0.33.6+) normalises its model at creation, with no default switch, and its turn
throws where the stored model is empty (`agentFreeExecutionRecord`, memfs_prompt.conversation).
"""

from __future__ import annotations

from .profiles import Profile

DEFAULT_MODEL = "openai/gpt-5.5"  # upstream's local default model handle (`defaultAgentModel`, 0.25.3 to 0.34.12)

# `normalizeModelHandleForRegistry`: a provider prefix and the provider it names (when the model part is not empty).
PROVIDER_ALIASES = {"chatgpt_oauth": "chatgpt-plus-pro", "lc-anthropic": "anthropic", "moonshotai": "moonshot"}
CODEX_PROVIDER = "openai-codex"  # also `chatgpt-plus-pro`, unless the model ends in `-fast`


def uses_default_model(model: str) -> bool:
    """Upstream `shouldUseDefaultLocalModel` for a string: empty, `auto`, or a `letta/` handle."""
    return model == "" or model == "auto" or model.startswith("letta/")


def normalize_model_handle(model: str, profile: Profile) -> str:
    """The catalog-free part of `normalizeLocalModelHandle` (0.30.28+; `Profile.normalizes_model_handles`)."""
    if not profile.normalizes_model_handles:
        return model
    provider, _, rest = model.partition("/")  # JS: `[provider, ...parts] = handle.split("/")`, parts joined by "/"
    if not rest:
        return model
    if provider in PROVIDER_ALIASES:
        return f"{PROVIDER_ALIASES[provider]}/{rest}"
    if provider == CODEX_PROVIDER and not rest.endswith("-fast"):
        return f"chatgpt-plus-pro/{rest}"
    return model


def model_for_update(model: str, profile: Profile, default: str = DEFAULT_MODEL) -> str:
    """What `updateAgent({model})` stores: the default model for a `shouldUseDefaultLocalModel` handle, else the
    handle normalised (0.30.28+) or as given (0.25.x)."""
    return default if uses_default_model(model) else normalize_model_handle(model, profile)
