"""Where a value of a scenario file is: from a JSON-style path (["repo", "commits", 0, "files"]) to its
YAML node and line, so every refusal can name the line at fault."""

from __future__ import annotations

from typing import Any

import yaml


def node_at(node: yaml.Node, path: list[Any]) -> yaml.Node:
    """The YAML node at a JSON path (the deepest one that exists)."""
    for key in path:
        if isinstance(node, yaml.MappingNode):
            match = next((v for k, v in node.value if k.value == key), None)
            if match is None:
                return node
            node = match
        elif isinstance(node, yaml.SequenceNode) and isinstance(key, int) and key < len(node.value):
            node = node.value[key]
        else:
            return node
    return node


def key_node_at(node: yaml.Node, path: list[Any]) -> yaml.Node | None:
    """The key node of the last path element (a mapping key's own line)."""
    parent = node_at(node, path[:-1])
    if isinstance(parent, yaml.MappingNode):
        return next((k for k, _ in parent.value if k.value == path[-1]), None)
    return None


def line_at(node: yaml.Node, path: list[Any]) -> int:
    """The line of the value at `path`, or of its key when that is a mapping key."""
    key = key_node_at(node, path) if path and isinstance(path[-1], str) else None
    return (key or node_at(node, path)).start_mark.line + 1
