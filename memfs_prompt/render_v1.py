"""The memfs-v1 projection every released compiler renders (`renderMemfsProjection`).

persona -> `<self>`, `system/**` -> a nested tag tree with `<projection>` paths, every
other non-skill file -> an `<external_projection>` directory tree.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .quirks import js_trim, js_trim_end, locale_compare_key

MEMORY_DIR_PLACEHOLDER = "${MEMORY_DIR}"
_LEAF_VALUE = "__value__"
_LEAF_DESCRIPTION = "__description__"


@dataclass(frozen=True)
class MemoryFile:
    relative_path: str
    label: str
    value: str
    description: str


class UpstreamError(Exception):
    """Upstream would throw here: the compile fails rather than producing text."""


class _JsObject:
    """A plain JS object, as far as `renderSystemTree` can tell: own keys in insertion order.

    Integer-like keys come first in ascending order in `Object.keys`, as in JS.
    """

    def __init__(self, proto: _JsObject | None = None) -> None:
        self.own: dict[str, object] = {}
        self.proto = proto

    def get(self, key: str) -> object:
        node: _JsObject | None = self
        while node is not None:
            if key in node.own:
                return node.own[key]
            node = node.proto
        return None

    def own_keys(self) -> list[str]:
        ints = sorted((k for k in self.own if _is_array_index(k)), key=int)
        return ints + [k for k in self.own if not _is_array_index(k)]


def js_string(value: object) -> str:
    """`String(value ?? "")` for what a tree node can hold: a string, or an object (`[object Object]`)."""
    if value is None:
        return ""
    return value if isinstance(value, str) else "[object Object]"


def _is_array_index(key: str) -> bool:
    return key.isascii() and key.isdigit() and (key == "0" or not key.startswith("0")) and int(key) < 2**32 - 1


# Names every plain object inherits from Object.prototype (all functions but __proto__).
_OBJECT_PROTOTYPE_METHODS = (
    "constructor", "hasOwnProperty", "isPrototypeOf", "propertyIsEnumerable", "toLocaleString",
    "toString", "valueOf", "__defineGetter__", "__defineSetter__", "__lookupGetter__", "__lookupSetter__",
)  # fmt: skip


class _ObjectPrototype(_JsObject):
    """`Object.prototype` of one fresh process: writes to it are seen by every object (pollution)."""

    def __init__(self) -> None:
        super().__init__(None)
        # Function.prototype: the `__proto__` of every method; its own `__proto__` is Object.prototype.
        # (Its own members, call/apply/bind/name/length..., are not modelled.)
        function_prototype = _JsObject(self)
        for name in _OBJECT_PROTOTYPE_METHODS:
            self.own[name] = _JsObject(function_prototype)  # a function: truthy, not a string, may take properties


def _tree_child(node: _JsObject, key: str, proto: _ObjectPrototype) -> _JsObject:
    """`node[part]`, creating `{}` when falsy or a string, with `__proto__` resolving to the prototype."""
    if key == "__proto__":
        existing: object = node.proto  # the accessor returns the prototype (null for Object.prototype)
        if existing is None:
            raise UpstreamError("TypeError: Object.prototype's prototype is immutable")
    else:
        existing = node.get(key)
    if not existing or isinstance(existing, str):
        child = _JsObject(proto)
        node.own[key] = child
        return child
    assert isinstance(existing, _JsObject)
    return existing


def render_system_tree(files: list[MemoryFile]) -> str:
    """Upstream `renderSystemTree`, including what `__proto__` and Object.prototype names do to it."""
    proto = _ObjectPrototype()
    tree = _JsObject(proto)
    for file in files:
        label = file.label[len("system/") :] if file.label.startswith("system/") else file.label
        parts = [part for part in label.split("/") if part]
        if not parts:
            continue
        node = tree
        for part in parts:
            node = _tree_child(node, part, proto)
        node.own[_LEAF_VALUE] = file.value
        node.own[_LEAF_DESCRIPTION] = file.description

    lines: list[str] = []

    def render(node: _JsObject, indent: int, path_parts: list[str]) -> None:
        pad = "  " * indent
        keys = [k for k in node.own_keys() if k not in (_LEAF_VALUE, _LEAF_DESCRIPTION)]
        for key in sorted(keys, key=locale_compare_key):
            child = node.own[key]
            assert isinstance(child, _JsObject)
            child_parts = [*path_parts, key]
            lines.append(f"{pad}<{key}>")
            if _LEAF_VALUE in child.own:  # Object.hasOwn(child, LEAF_VALUE)
                lines.append(f"{pad}  <projection>$MEMORY_DIR/system/{'/'.join(child_parts)}.md</projection>")
                # child[LEAF_DESCRIPTION] is a property read: it goes up the prototype chain, so a node that is
                # a leaf only through a `__value__` directory shows a description a `__proto__` leaf polluted
                description = js_trim(js_string(child.get(_LEAF_DESCRIPTION)))
                if description:
                    lines.append(f"{pad}  <description>{description}</description>")
                value = js_trim_end(js_string(child.get(_LEAF_VALUE)))
                if value:
                    lines.append(f"{pad}  {value}")
            render(child, indent + 1, child_parts)
            lines.append(f"{pad}</{key}>")

    render(tree, 0, [])
    return "\n".join(lines)


def render_external_projection(files: list[MemoryFile], literal: Callable[[str], str]) -> str:
    """Upstream `renderExternalProjection`: a `tree`-style listing, directories first, then localeCompare."""
    root: dict[str, dict | None] = {}
    for file in files:
        parts = [part for part in file.relative_path.split("/") if part]
        if not parts:
            continue
        node = root
        for part in parts[:-1]:
            existing = node.get(part)
            if isinstance(existing, dict):
                node = existing
            else:
                child: dict[str, dict | None] = {}
                node[part] = child
                node = child
        node[parts[-1]] = None

    last, middle, bar = literal("└── "), literal("├── "), literal("│   ")
    lines = ["<external_projection>", f"{MEMORY_DIR_PLACEHOLDER}/"]

    def render(node: dict[str, dict | None], prefix: str) -> None:
        entries = sorted(node.items(), key=lambda item: (item[1] is None, locale_compare_key(item[0])))
        for index, (name, child) in enumerate(entries):
            is_last = index == len(entries) - 1
            connector = last if is_last else middle
            is_dir = child is not None
            lines.append(f"{prefix}{connector}{name}{'/' if is_dir else ''}")
            if child is not None:
                render(child, prefix + ("    " if is_last else bar))

    render(root, "")
    lines.append("</external_projection>")
    return "\n".join(lines)


def render_memfs_v1(files: list[MemoryFile], literal: Callable[[str], str]) -> str:
    """Upstream `renderMemfsProjection` on files already sorted by label."""
    if not files:
        return ""
    lines = ["Reminder: <projection> contains the local path of the memory file projection."]
    persona = next((f for f in files if f.label == "system/persona"), None)
    if persona:
        lines += ["", "<self>", "<projection>$MEMORY_DIR/system/persona.md</projection>",
                  js_trim_end(persona.value), "</self>"]  # fmt: skip
    system_files = [f for f in files if f.label.startswith("system/") and f.label != "system/persona"]
    external = [f for f in files if not f.label.startswith("system/") and not f.label.startswith("skills/")]
    if system_files or external:
        lines += ["", "<memory>"]
        system_tree = render_system_tree(system_files)
        if system_tree:
            lines.append(system_tree)
        if external:
            lines.append(render_external_projection(external, literal))
        lines.append("</memory>")
    return "\n".join(lines)
