"""The JS objects `renderSystemTree` walks: plain objects, and every built-in a path of names can reach.

Upstream walks `system/**` labels through a plain object (`node[part]`, creating `{}` where the
value is falsy or a string). From a plain object, names reach Object.prototype's members, and
from those their own properties: `constructor` is `Object` (with `keys`, `prototype`, `length`,
`name`...), a method's `__proto__` is Function.prototype (`call`, `bind`, `arguments`...), a
non-zero `length` is a number whose members are Number.prototype's, and so on. Which of these
exist, their values and whether they can be written are read from bun 1.4.5 itself
(`js_builtins.json`, written by `tests/js_builtins_snapshot.mjs`: 55 objects). The bundle is an ES
module, so its code is strict: assigning to a read-only property or to a property of a number
throws a TypeError, and reading `arguments` or `caller` of a function throws one too.

Each compile gets a fresh copy (a polluted reference process is restarted, see docs/quirks.md).
"""

from __future__ import annotations

import functools
import json
import math
from importlib import resources
from typing import Any

from .errors import UpstreamError

READONLY_ASSIGNMENT = "TypeError: Attempted to assign to readonly property."


class JsObject:
    """An object: own properties in insertion order, read-only names, accessors, a prototype.

    `accessors` maps a name to `proto` (Object.prototype's `__proto__`) or to the message its getter
    throws (Function.prototype's `arguments` and `caller`).
    """

    __slots__ = ("accessors", "label", "own", "proto", "readonly")

    def __init__(self, proto: JsObject | None = None, label: str = "Object") -> None:
        self.own: dict[str, Any] = {}
        self.proto = proto
        self.readonly: set[str] = set()
        self.accessors: dict[str, str] = {}
        self.label = label

    def get(self, key: str) -> Any:
        """A property read without accessors: the value, or None (undefined)."""
        node: JsObject | None = self
        while node is not None:
            if key in node.own:
                return node.own[key]
            node = node.proto
        return None

    def own_keys(self) -> list[str]:
        """`Object.keys` of a plain object: array-index keys ascending, then the rest in insertion order."""
        ints = sorted((k for k in self.own if is_array_index(k)), key=int)
        return ints + [k for k in self.own if not is_array_index(k)]


class JsNumber:
    """A number primitive reached as a node (a function's `length`, `Number.MAX_VALUE`)."""

    __slots__ = ("proto", "value")

    def __init__(self, value: float, proto: JsObject) -> None:
        self.value, self.proto = value, proto


def is_array_index(key: str) -> bool:
    return key.isascii() and key.isdigit() and (key == "0" or not key.startswith("0")) and int(key) < 2**32 - 1


def truthy(value: Any) -> bool:
    """JS ToBoolean for the values a walk meets."""
    if value is None:
        return False
    if isinstance(value, str):
        return value != ""
    if isinstance(value, bool):
        return value
    if isinstance(value, JsNumber):
        value = value.value
    if isinstance(value, float):
        return not (value == 0 or math.isnan(value))
    return True


def js_get(target: JsObject | JsNumber, key: str) -> Any:
    """`target[key]`: the prototype chain, accessors included (`__proto__`, throwing getters)."""
    node: JsObject | None = target.proto if isinstance(target, JsNumber) else target
    while node is not None:
        if key in node.accessors:
            kind = node.accessors[key]
            if kind == "proto":
                return target.proto
            raise UpstreamError(kind)
        if key in node.own:
            return node.own[key]
        node = node.proto
    return None


def js_set(target: JsObject | JsNumber, key: str, value: Any) -> None:
    """`target[key] = value` in strict code (OrdinarySet): a read-only property, own or inherited, or a
    primitive target throws; a `__proto__` write goes to the accessor; anything else makes an own property."""
    if isinstance(target, JsNumber):
        raise UpstreamError(READONLY_ASSIGNMENT)
    node: JsObject | None = target
    while node is not None:
        if key in node.accessors:
            if node.accessors[key] == "proto":
                if target.proto is None:  # only Object.prototype: an immutable prototype exotic object
                    raise UpstreamError("TypeError: Cannot set prototype of immutable prototype object")
                target.proto = value if isinstance(value, JsObject) else target.proto
                return
            raise UpstreamError(node.accessors[key])
        if key in node.own:
            if key in node.readonly:
                raise UpstreamError(READONLY_ASSIGNMENT)
            break
        node = node.proto
    target.own[key] = value


@functools.cache
def _snapshot() -> dict[str, Any]:
    text = resources.files("memfs_prompt").joinpath("js_builtins.json").read_text(encoding="utf-8")
    return json.loads(text)


class Realm:
    """A fresh set of built-ins (one compile's worth): `object_prototype`, `number_prototype`, `new_object()`."""

    def __init__(self) -> None:
        data = _snapshot()
        entries = data["objects"]
        objects = [JsObject(None, entry["label"]) for entry in entries]
        self.object_prototype = objects[data["objectPrototype"]]
        self.number_prototype = objects[data["numberPrototype"]]
        for obj, entry in zip(objects, entries, strict=True):
            obj.proto = self._value(entry["proto"], objects)
            for key, prop in entry["props"].items():
                if prop.get("accessor"):
                    obj.accessors[key] = "proto" if key == "__proto__" else prop.get("throws", "TypeError")
                    continue
                obj.own[key] = self._value(prop["value"], objects)
                if not prop["writable"]:
                    obj.readonly.add(key)

    @staticmethod
    def _value(ref: dict[str, Any], objects: list[JsObject]) -> Any:
        if "object" in ref:
            return objects[ref["object"]]
        if "number" in ref:
            return float(ref["number"])  # "NaN", "Infinity", "-Infinity", "-0" included
        if "string" in ref:
            return ref["string"]
        if "boolean" in ref:
            return ref["boolean"]
        return None

    def new_object(self) -> JsObject:
        return JsObject(self.object_prototype)

    def get(self, target: JsObject | JsNumber, key: str) -> Any:
        """`target[key]`, a number value as a JsNumber (whose members are Number.prototype's)."""
        value = js_get(target, key)
        return JsNumber(value, self.number_prototype) if isinstance(value, float) else value
