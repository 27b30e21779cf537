// Everything a `system/**` label can reach from a plain object by string property reads, as bun sees it:
// the objects (functions, prototypes) and their own string-keyed properties with their attributes.
// Run: bun tests/js_builtins_snapshot.mjs > memfs_prompt/js_builtins.json   (checked by tests/test_prototype_walk.py)
const ids = new Map();
const objects = [];
const queue = [];
const ref = (value) => {
  if (value === null) return { null: true };
  if (value === undefined) return { undefined: true };
  if (typeof value === "number") {
    queue.push(Object.getPrototypeOf(value));
    return { number: Object.is(value, -0) ? "-0" : String(value) };
  }
  if (typeof value === "string") return { string: value };
  if (typeof value === "boolean") return { boolean: value };
  if (typeof value === "symbol") return { symbol: String(value) };
  if (!ids.has(value)) {
    ids.set(value, objects.length);
    objects.push(null);
    queue.push(value);
  }
  return { object: ids.get(value) };
};
const root = ref(Object.prototype);
ref(Number.prototype);
while (queue.length) {
  const value = queue.shift();
  const id = ids.get(value);
  if (id === undefined) { ref(value); continue; }
  if (objects[id] !== null) continue;
  const entry = { kind: typeof value, label: "", proto: null, extensible: Object.isExtensible(value), props: Object.create(null) };
  objects[id] = entry;
  try { entry.label = typeof value === "function" ? `function ${value.name}` : Object.prototype.toString.call(value); } catch {}
  entry.proto = ref(Object.getPrototypeOf(value));
  for (const key of Object.getOwnPropertyNames(value)) {
    const d = Object.getOwnPropertyDescriptor(value, key);
    if ("value" in d) {
      entry.props[key] = { value: ref(d.value), writable: d.writable, enumerable: d.enumerable };
    } else {
      let got;
      try { got = { value: ref(d.get.call(value)) }; } catch (error) { got = { throws: `${error.name}: ${error.message}` }; }
      entry.props[key] = { accessor: true, get: d.get ? (d.get.name || "get") : null, set: d.set ? (d.set.name || "set") : null, enumerable: d.enumerable, ...got };
    }
  }
}
process.stdout.write(JSON.stringify({ runtime: `bun ${Bun.version}`, objectPrototype: root.object, numberPrototype: ids.get(Number.prototype), objects }, null, 1) + "\n");
