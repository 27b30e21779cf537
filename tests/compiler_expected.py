# ruff: noqa: E501  (measured records are kept as single literals)
"""Compile records measured with the real upstream compiler, for test_compiler.py.

Each record is what compileLocalSystemPrompt of the named letta-code release returned under bun 1.4.5
(through reference/driver.mjs) for the case of the same name in compiler_cases.py, built with plain git
under an isolated env. Keys are in upstream's order. "<HEAD>" stands for the commit git made (the sha
depends only on the fixed dates and contents, but the tests compare it with `git rev-parse HEAD`).
Regenerate: build each case, send the requests with tests/upstream_oracle.reference_compile.
"""

MEASURED: dict[str, dict[str, str]] = {
    # small: measured on letta-code 0.32.18 under bun 1.4.5
    "small": {
        "content": "You are a test agent.\n\nReminder: <projection> contains the local path of the memory file projection.\n\n<self>\n<projection>$MEMORY_DIR/system/persona.md</projection>\nI am a test agent.\n</self>\n\n<memory>\n<_under>\n  <projection>$MEMORY_DIR/system/_under.md</projection>\n  under\n</_under>\n<human>\n  <projection>$MEMORY_DIR/system/human.md</projection>\n  <description>The user</description>\n  - likes tests\n</human>\n<project>\n  <notes>\n    <projection>$MEMORY_DIR/system/project/notes.md</projection>\n    plain notes, no frontmatter\n  </notes>\n</project>\n<Zeta>\n  <projection>$MEMORY_DIR/system/Zeta.md</projection>\n  zeta\n</Zeta>\n<external_projection>\n${MEMORY_DIR}/\n├── notes/\n│   ├── deep/\n│   │   └── a.md\n│   └── todo.md\n└── reference.md\n</external_projection>\n</memory>\n\n<memory_metadata>\n- AGENT_ID: agent-t\n- CONVERSATION_ID: conv-t\n- System prompt last recompiled: 2026-01-02 03:04:05 AM UTC+0000\n- 0 previous messages between you and the user are stored in recall memory\n</memory_metadata>",
        "coreMemory": "Reminder: <projection> contains the local path of the memory file projection.\n\n<self>\n<projection>$MEMORY_DIR/system/persona.md</projection>\nI am a test agent.\n</self>\n\n<memory>\n<_under>\n  <projection>$MEMORY_DIR/system/_under.md</projection>\n  under\n</_under>\n<human>\n  <projection>$MEMORY_DIR/system/human.md</projection>\n  <description>The user</description>\n  - likes tests\n</human>\n<project>\n  <notes>\n    <projection>$MEMORY_DIR/system/project/notes.md</projection>\n    plain notes, no frontmatter\n  </notes>\n</project>\n<Zeta>\n  <projection>$MEMORY_DIR/system/Zeta.md</projection>\n  zeta\n</Zeta>\n<external_projection>\n${MEMORY_DIR}/\n├── notes/\n│   ├── deep/\n│   │   └── a.md\n│   └── todo.md\n└── reference.md\n</external_projection>\n</memory>\n\n<memory_metadata>\n- AGENT_ID: agent-t\n- CONVERSATION_ID: conv-t\n- System prompt last recompiled: 2026-01-02 03:04:05 AM UTC+0000\n- 0 previous messages between you and the user are stored in recall memory\n</memory_metadata>",
        "compiledAt": "2026-01-02T03:04:05.678Z",
        "rawSystemHash": "b989b382f379c547e811ece5c76e282cc216b106f5c613ab73dc2b92397741e6",
        "memfsRevision": "<HEAD>",
    },
    # small_dirty: measured on letta-code 0.32.18 under bun 1.4.5
    "small_dirty": {
        "content": "You are a test agent.\n\nReminder: <projection> contains the local path of the memory file projection.\n\n<self>\n<projection>$MEMORY_DIR/system/persona.md</projection>\nI am a test agent.\n</self>\n\n<memory>\n<_under>\n  <projection>$MEMORY_DIR/system/_under.md</projection>\n  under\n</_under>\n<human>\n  <projection>$MEMORY_DIR/system/human.md</projection>\n  <description>The user</description>\n  - likes tests\n</human>\n<project>\n  <notes>\n    <projection>$MEMORY_DIR/system/project/notes.md</projection>\n    plain notes, no frontmatter\n  </notes>\n</project>\n<Zeta>\n  <projection>$MEMORY_DIR/system/Zeta.md</projection>\n  zeta\n</Zeta>\n<external_projection>\n${MEMORY_DIR}/\n├── notes/\n│   ├── deep/\n│   │   └── a.md\n│   └── todo.md\n└── reference.md\n</external_projection>\n</memory>\n\n<memory_metadata>\n- AGENT_ID: agent-t\n- CONVERSATION_ID: conv-t\n- System prompt last recompiled: 2026-01-02 03:04:05 AM UTC+0000\n- 0 previous messages between you and the user are stored in recall memory\n</memory_metadata>",
        "coreMemory": "Reminder: <projection> contains the local path of the memory file projection.\n\n<self>\n<projection>$MEMORY_DIR/system/persona.md</projection>\nI am a test agent.\n</self>\n\n<memory>\n<_under>\n  <projection>$MEMORY_DIR/system/_under.md</projection>\n  under\n</_under>\n<human>\n  <projection>$MEMORY_DIR/system/human.md</projection>\n  <description>The user</description>\n  - likes tests\n</human>\n<project>\n  <notes>\n    <projection>$MEMORY_DIR/system/project/notes.md</projection>\n    plain notes, no frontmatter\n  </notes>\n</project>\n<Zeta>\n  <projection>$MEMORY_DIR/system/Zeta.md</projection>\n  zeta\n</Zeta>\n<external_projection>\n${MEMORY_DIR}/\n├── notes/\n│   ├── deep/\n│   │   └── a.md\n│   └── todo.md\n└── reference.md\n</external_projection>\n</memory>\n\n<memory_metadata>\n- AGENT_ID: agent-t\n- CONVERSATION_ID: conv-t\n- System prompt last recompiled: 2026-01-02 03:04:05 AM UTC+0000\n- 0 previous messages between you and the user are stored in recall memory\n</memory_metadata>",
        "compiledAt": "2026-01-02T03:04:05.678Z",
        "rawSystemHash": "b989b382f379c547e811ece5c76e282cc216b106f5c613ab73dc2b92397741e6",
        "memfsRevision": "<HEAD>",
    },
    # small_staged: measured on letta-code 0.32.18 under bun 1.4.5
    "small_staged": {
        "content": "You are a test agent.\n\nReminder: <projection> contains the local path of the memory file projection.\n\n<self>\n<projection>$MEMORY_DIR/system/persona.md</projection>\nI am a test agent.\n</self>\n\n<memory>\n<_under>\n  <projection>$MEMORY_DIR/system/_under.md</projection>\n  under\n</_under>\n<human>\n  <projection>$MEMORY_DIR/system/human.md</projection>\n  <description>The user</description>\n  - likes tests\n</human>\n<project>\n  <notes>\n    <projection>$MEMORY_DIR/system/project/notes.md</projection>\n    plain notes, no frontmatter\n  </notes>\n</project>\n<Zeta>\n  <projection>$MEMORY_DIR/system/Zeta.md</projection>\n  zeta\n</Zeta>\n<external_projection>\n${MEMORY_DIR}/\n├── notes/\n│   ├── deep/\n│   │   └── a.md\n│   └── todo.md\n└── reference.md\n</external_projection>\n</memory>\n\n<memory_metadata>\n- AGENT_ID: agent-t\n- CONVERSATION_ID: conv-t\n- System prompt last recompiled: 2026-01-02 03:04:05 AM UTC+0000\n- 0 previous messages between you and the user are stored in recall memory\n</memory_metadata>",
        "coreMemory": "Reminder: <projection> contains the local path of the memory file projection.\n\n<self>\n<projection>$MEMORY_DIR/system/persona.md</projection>\nI am a test agent.\n</self>\n\n<memory>\n<_under>\n  <projection>$MEMORY_DIR/system/_under.md</projection>\n  under\n</_under>\n<human>\n  <projection>$MEMORY_DIR/system/human.md</projection>\n  <description>The user</description>\n  - likes tests\n</human>\n<project>\n  <notes>\n    <projection>$MEMORY_DIR/system/project/notes.md</projection>\n    plain notes, no frontmatter\n  </notes>\n</project>\n<Zeta>\n  <projection>$MEMORY_DIR/system/Zeta.md</projection>\n  zeta\n</Zeta>\n<external_projection>\n${MEMORY_DIR}/\n├── notes/\n│   ├── deep/\n│   │   └── a.md\n│   └── todo.md\n└── reference.md\n</external_projection>\n</memory>\n\n<memory_metadata>\n- AGENT_ID: agent-t\n- CONVERSATION_ID: conv-t\n- System prompt last recompiled: 2026-01-02 03:04:05 AM UTC+0000\n- 0 previous messages between you and the user are stored in recall memory\n</memory_metadata>",
        "compiledAt": "2026-01-02T03:04:05.678Z",
        "rawSystemHash": "b989b382f379c547e811ece5c76e282cc216b106f5c613ab73dc2b92397741e6",
        "memfsRevision": "<HEAD>",
    },
    # missing: measured on letta-code 0.32.18 under bun 1.4.5
    "missing": {
        "content": "You are a test agent.\n\n<memory_metadata>\n- AGENT_ID: agent-t\n- CONVERSATION_ID: conv-t\n- System prompt last recompiled: 2026-01-02 03:04:05 AM UTC+0000\n- 0 previous messages between you and the user are stored in recall memory\n</memory_metadata>",
        "coreMemory": "<memory_metadata>\n- AGENT_ID: agent-t\n- CONVERSATION_ID: conv-t\n- System prompt last recompiled: 2026-01-02 03:04:05 AM UTC+0000\n- 0 previous messages between you and the user are stored in recall memory\n</memory_metadata>",
        "compiledAt": "2026-01-02T03:04:05.678Z",
        "rawSystemHash": "b989b382f379c547e811ece5c76e282cc216b106f5c613ab73dc2b92397741e6",
    },
    # plain: measured on letta-code 0.32.18 under bun 1.4.5
    "plain": {
        "content": "You are a test agent.\n\n<memory_metadata>\n- AGENT_ID: agent-t\n- CONVERSATION_ID: conv-t\n- System prompt last recompiled: 2026-01-02 03:04:05 AM UTC+0000\n- 0 previous messages between you and the user are stored in recall memory\n</memory_metadata>",
        "coreMemory": "<memory_metadata>\n- AGENT_ID: agent-t\n- CONVERSATION_ID: conv-t\n- System prompt last recompiled: 2026-01-02 03:04:05 AM UTC+0000\n- 0 previous messages between you and the user are stored in recall memory\n</memory_metadata>",
        "compiledAt": "2026-01-02T03:04:05.678Z",
        "rawSystemHash": "b989b382f379c547e811ece5c76e282cc216b106f5c613ab73dc2b92397741e6",
    },
    # unborn: measured on letta-code 0.32.18 under bun 1.4.5
    "unborn": {
        "content": "You are a test agent.\n\n<memory_metadata>\n- AGENT_ID: agent-t\n- CONVERSATION_ID: conv-t\n- System prompt last recompiled: 2026-01-02 03:04:05 AM UTC+0000\n- 0 previous messages between you and the user are stored in recall memory\n</memory_metadata>",
        "coreMemory": "<memory_metadata>\n- AGENT_ID: agent-t\n- CONVERSATION_ID: conv-t\n- System prompt last recompiled: 2026-01-02 03:04:05 AM UTC+0000\n- 0 previous messages between you and the user are stored in recall memory\n</memory_metadata>",
        "compiledAt": "2026-01-02T03:04:05.678Z",
        "rawSystemHash": "b989b382f379c547e811ece5c76e282cc216b106f5c613ab73dc2b92397741e6",
    },
    # small_no_memfs: measured on letta-code 0.32.18 under bun 1.4.5
    "small_no_memfs": {
        "content": "You are a test agent.\n\n<memory_metadata>\n- AGENT_ID: agent-t\n- CONVERSATION_ID: conv-t\n- System prompt last recompiled: 2026-01-02 03:04:05 AM UTC+0000\n- 0 previous messages between you and the user are stored in recall memory\n</memory_metadata>",
        "coreMemory": "<memory_metadata>\n- AGENT_ID: agent-t\n- CONVERSATION_ID: conv-t\n- System prompt last recompiled: 2026-01-02 03:04:05 AM UTC+0000\n- 0 previous messages between you and the user are stored in recall memory\n</memory_metadata>",
        "compiledAt": "2026-01-02T03:04:05.678Z",
        "rawSystemHash": "b989b382f379c547e811ece5c76e282cc216b106f5c613ab73dc2b92397741e6",
    },
    # dollar: measured on letta-code 0.32.18 under bun 1.4.5
    "dollar": {
        "content": "AReminder: <projection> contains the local path of the memory file projection.\n\n<memory>\n<dollar>\n  <projection>$MEMORY_DIR/system/dollar.md</projection>\n  cost: {CORE_MEMORY} $ A B $1 $<x>\n</dollar>\n</memory>\n\n<memory_metadata>\n- AGENT_ID: agent-t\n- CONVERSATION_ID: conv-t\n- System prompt last recompiled: 2026-01-02 03:04:05 AM UTC+0000\n- 0 previous messages between you and the user are stored in recall memory\n</memory_metadata>B",
        "coreMemory": "Reminder: <projection> contains the local path of the memory file projection.\n\n<memory>\n<dollar>\n  <projection>$MEMORY_DIR/system/dollar.md</projection>\n  cost: $& $$ $` $' $1 $<x>\n</dollar>\n</memory>\n\n<memory_metadata>\n- AGENT_ID: agent-t\n- CONVERSATION_ID: conv-t\n- System prompt last recompiled: 2026-01-02 03:04:05 AM UTC+0000\n- 0 previous messages between you and the user are stored in recall memory\n</memory_metadata>",
        "compiledAt": "2026-01-02T03:04:05.678Z",
        "rawSystemHash": "81291411cccaccaad4e79e8a07e901c96ccde826514ebf429633888d721fa7f5",
        "memfsRevision": "<HEAD>",
    },
    # append_after_trim_end: measured on letta-code 0.32.18 under bun 1.4.5
    "append_after_trim_end": {
        "content": "No variable\x85\n\n<memory_metadata>\n- AGENT_ID: agent-t\n- CONVERSATION_ID: conv-t\n- System prompt last recompiled: 2026-01-02 03:04:05 AM UTC+0000\n- 7 previous messages between you and the user are stored in recall memory\n</memory_metadata>",
        "coreMemory": "<memory_metadata>\n- AGENT_ID: agent-t\n- CONVERSATION_ID: conv-t\n- System prompt last recompiled: 2026-01-02 03:04:05 AM UTC+0000\n- 7 previous messages between you and the user are stored in recall memory\n</memory_metadata>",
        "compiledAt": "2026-01-02T03:04:05.678Z",
        "rawSystemHash": "138994e0d21c07709590353391374045d22e7c82cfd0ac837fbcbeaa44e80951",
    },
    # append_dollar: measured on letta-code 0.32.18 under bun 1.4.5
    "append_dollar": {
        "content": "prefix $ text\n\nReminder: <projection> contains the local path of the memory file projection.\n\n<memory>\n<dollar>\n  <projection>$MEMORY_DIR/system/dollar.md</projection>\n  cost: {CORE_MEMORY} $ prefix $ text\n\n  $1 $<x>\n</dollar>\n</memory>\n\n<memory_metadata>\n- AGENT_ID: agent-t\n- CONVERSATION_ID: conv-t\n- System prompt last recompiled: 2026-01-02 03:04:05 AM UTC+0000\n- 0 previous messages between you and the user are stored in recall memory\n</memory_metadata>",
        "coreMemory": "Reminder: <projection> contains the local path of the memory file projection.\n\n<memory>\n<dollar>\n  <projection>$MEMORY_DIR/system/dollar.md</projection>\n  cost: $& $$ $` $' $1 $<x>\n</dollar>\n</memory>\n\n<memory_metadata>\n- AGENT_ID: agent-t\n- CONVERSATION_ID: conv-t\n- System prompt last recompiled: 2026-01-02 03:04:05 AM UTC+0000\n- 0 previous messages between you and the user are stored in recall memory\n</memory_metadata>",
        "compiledAt": "2026-01-02T03:04:05.678Z",
        "rawSystemHash": "be670259cfba6d4d1a2d7643666ea07bcd7f040a64019f9e8d3658bf4cb5ba1b",
        "memfsRevision": "<HEAD>",
    },
    # two_variables: measured on letta-code 0.32.18 under bun 1.4.5
    "two_variables": {
        "content": "<memory_metadata>\n- AGENT_ID: agent-t\n- CONVERSATION_ID: conv-t\n- System prompt last recompiled: 2026-01-02 03:04:05 AM UTC+0000\n- 0 previous messages between you and the user are stored in recall memory\n</memory_metadata>|<memory_metadata>\n- AGENT_ID: agent-t\n- CONVERSATION_ID: conv-t\n- System prompt last recompiled: 2026-01-02 03:04:05 AM UTC+0000\n- 0 previous messages between you and the user are stored in recall memory\n</memory_metadata>",
        "coreMemory": "<memory_metadata>\n- AGENT_ID: agent-t\n- CONVERSATION_ID: conv-t\n- System prompt last recompiled: 2026-01-02 03:04:05 AM UTC+0000\n- 0 previous messages between you and the user are stored in recall memory\n</memory_metadata>",
        "compiledAt": "2026-01-02T03:04:05.678Z",
        "rawSystemHash": "3483c747bf8acb311cc3e28295e559e5733242bfc5704cebed6a68a0d1e7f838",
    },
    # space_name_missing: measured on letta-code 0.32.18 under bun 1.4.5
    "space_name_missing": {
        "content": "You are a test agent.\n\nReminder: <projection> contains the local path of the memory file projection.\n\n<memory>\n<a>\n  <projection>$MEMORY_DIR/system/a.md</projection>\n  a\n</a>\n</memory>\n\n<memory_metadata>\n- AGENT_ID: agent-t\n- CONVERSATION_ID: conv-t\n- System prompt last recompiled: 2026-01-02 03:04:05 AM UTC+0000\n- 0 previous messages between you and the user are stored in recall memory\n</memory_metadata>",
        "coreMemory": "Reminder: <projection> contains the local path of the memory file projection.\n\n<memory>\n<a>\n  <projection>$MEMORY_DIR/system/a.md</projection>\n  a\n</a>\n</memory>\n\n<memory_metadata>\n- AGENT_ID: agent-t\n- CONVERSATION_ID: conv-t\n- System prompt last recompiled: 2026-01-02 03:04:05 AM UTC+0000\n- 0 previous messages between you and the user are stored in recall memory\n</memory_metadata>",
        "compiledAt": "2026-01-02T03:04:05.678Z",
        "rawSystemHash": "b989b382f379c547e811ece5c76e282cc216b106f5c613ab73dc2b92397741e6",
        "memfsRevision": "<HEAD>",
    },
    # small_0.25.3: measured on letta-code 0.25.3 under bun 1.4.5
    "small_0.25.3": {
        "content": "You are a test agent.\n\nReminder: <projection> contains the local path of the memory file projection.\n\n<self>\n<projection>$MEMORY_DIR/system/persona.md</projection>\nI am a test agent.\n</self>\n\n<memory>\n<_under>\n  <projection>$MEMORY_DIR/system/_under.md</projection>\n  under\n</_under>\n<human>\n  <projection>$MEMORY_DIR/system/human.md</projection>\n  <description>The user</description>\n  - likes tests\n</human>\n<project>\n  <notes>\n    <projection>$MEMORY_DIR/system/project/notes.md</projection>\n    plain notes, no frontmatter\n  </notes>\n</project>\n<Zeta>\n  <projection>$MEMORY_DIR/system/Zeta.md</projection>\n  zeta\n</Zeta>\n<external_projection>\n${MEMORY_DIR}/\nâ\x94\x9câ\x94\x80â\x94\x80 notes/\nâ\x94\x82   â\x94\x9câ\x94\x80â\x94\x80 deep/\nâ\x94\x82   â\x94\x82   â\x94\x94â\x94\x80â\x94\x80 a.md\nâ\x94\x82   â\x94\x94â\x94\x80â\x94\x80 todo.md\nâ\x94\x94â\x94\x80â\x94\x80 reference.md\n</external_projection>\n</memory>\n\n<memory_metadata>\n- AGENT_ID: agent-t\n- CONVERSATION_ID: conv-t\n- System prompt last recompiled: 2026-01-02 03:04:05 AM UTC+0000\n- 0 previous messages between you and the user are stored in recall memory\n</memory_metadata>",
        "compiledAt": "2026-01-02T03:04:05.678Z",
        "rawSystemHash": "b989b382f379c547e811ece5c76e282cc216b106f5c613ab73dc2b92397741e6",
        "memfsRevision": "<HEAD>",
    },
    # small_no_memfs_0.25.3: measured on letta-code 0.25.3 under bun 1.4.5
    "small_no_memfs_0.25.3": {
        "content": "You are a test agent.\n\nReminder: <projection> contains the local path of the memory file projection.\n\n<self>\n<projection>$MEMORY_DIR/system/persona.md</projection>\nI am a test agent.\n</self>\n\n<memory>\n<_under>\n  <projection>$MEMORY_DIR/system/_under.md</projection>\n  under\n</_under>\n<human>\n  <projection>$MEMORY_DIR/system/human.md</projection>\n  <description>The user</description>\n  - likes tests\n</human>\n<project>\n  <notes>\n    <projection>$MEMORY_DIR/system/project/notes.md</projection>\n    plain notes, no frontmatter\n  </notes>\n</project>\n<Zeta>\n  <projection>$MEMORY_DIR/system/Zeta.md</projection>\n  zeta\n</Zeta>\n<external_projection>\n${MEMORY_DIR}/\nâ\x94\x9câ\x94\x80â\x94\x80 notes/\nâ\x94\x82   â\x94\x9câ\x94\x80â\x94\x80 deep/\nâ\x94\x82   â\x94\x82   â\x94\x94â\x94\x80â\x94\x80 a.md\nâ\x94\x82   â\x94\x94â\x94\x80â\x94\x80 todo.md\nâ\x94\x94â\x94\x80â\x94\x80 reference.md\n</external_projection>\n</memory>\n\n<memory_metadata>\n- AGENT_ID: agent-t\n- CONVERSATION_ID: conv-t\n- System prompt last recompiled: 2026-01-02 03:04:05 AM UTC+0000\n- 0 previous messages between you and the user are stored in recall memory\n</memory_metadata>",
        "compiledAt": "2026-01-02T03:04:05.678Z",
        "rawSystemHash": "b989b382f379c547e811ece5c76e282cc216b106f5c613ab73dc2b92397741e6",
        "memfsRevision": "<HEAD>",
    },
    # small_0.25.9: measured on letta-code 0.25.9 under bun 1.4.5
    "small_0.25.9": {
        "content": "You are a test agent.\n\nReminder: <projection> contains the local path of the memory file projection.\n\n<self>\n<projection>$MEMORY_DIR/system/persona.md</projection>\nI am a test agent.\n</self>\n\n<memory>\n<_under>\n  <projection>$MEMORY_DIR/system/_under.md</projection>\n  under\n</_under>\n<human>\n  <projection>$MEMORY_DIR/system/human.md</projection>\n  <description>The user</description>\n  - likes tests\n</human>\n<project>\n  <notes>\n    <projection>$MEMORY_DIR/system/project/notes.md</projection>\n    plain notes, no frontmatter\n  </notes>\n</project>\n<Zeta>\n  <projection>$MEMORY_DIR/system/Zeta.md</projection>\n  zeta\n</Zeta>\n<external_projection>\n${MEMORY_DIR}/\nâ\x94\x9câ\x94\x80â\x94\x80 notes/\nâ\x94\x82   â\x94\x9câ\x94\x80â\x94\x80 deep/\nâ\x94\x82   â\x94\x82   â\x94\x94â\x94\x80â\x94\x80 a.md\nâ\x94\x82   â\x94\x94â\x94\x80â\x94\x80 todo.md\nâ\x94\x94â\x94\x80â\x94\x80 reference.md\n</external_projection>\n</memory>\n\n<memory_metadata>\n- AGENT_ID: agent-t\n- CONVERSATION_ID: conv-t\n- System prompt last recompiled: 2026-01-02 03:04:05 AM UTC+0000\n- 0 previous messages between you and the user are stored in recall memory\n</memory_metadata>",
        "compiledAt": "2026-01-02T03:04:05.678Z",
        "rawSystemHash": "b989b382f379c547e811ece5c76e282cc216b106f5c613ab73dc2b92397741e6",
        "memfsRevision": "<HEAD>",
    },
    # small_no_memfs_0.25.9: measured on letta-code 0.25.9 under bun 1.4.5
    "small_no_memfs_0.25.9": {
        "content": "You are a test agent.\n\n<memory_metadata>\n- AGENT_ID: agent-t\n- CONVERSATION_ID: conv-t\n- System prompt last recompiled: 2026-01-02 03:04:05 AM UTC+0000\n- 0 previous messages between you and the user are stored in recall memory\n</memory_metadata>",
        "compiledAt": "2026-01-02T03:04:05.678Z",
        "rawSystemHash": "b989b382f379c547e811ece5c76e282cc216b106f5c613ab73dc2b92397741e6",
    },
}
