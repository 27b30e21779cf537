"""Python port of letta-code's local system-prompt compiler (`compileLocalSystemPrompt`).

from memfs_prompt import compile_system_prompt, resolve_profile
record = compile_system_prompt("~/.letta/memory", system="...{CORE_MEMORY}", agent_id="a",
                               conversation_id="c", profile=resolve_profile("letta-code@0.32.18"))
"""

from .compiler import CompiledPrompt, compile_system_prompt
from .profiles import DEFAULT, PROFILES, Profile, profile_for_release, resolve_profile

__all__ = [
    "DEFAULT",
    "PROFILES",
    "CompiledPrompt",
    "Profile",
    "compile_system_prompt",
    "profile_for_release",
    "resolve_profile",
]
