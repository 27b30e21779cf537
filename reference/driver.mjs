// Reference driver: loads a letta-code release bundle (letta.js) without starting its
// CLI and answers JSON-lines requests on stdin with upstream's own functions.
//
//   bun driver.mjs /path/to/letta.js
//
// Protocol (one JSON object per line, split on "\n" only; every answer echoes the id):
//   {"id":1,"op":"hello"}                      -> {"id":1,"ok":true,"info":{bun, bundle, symbols, importMs}}
//   {"id":2,"op":"compile","memoryDir":...,"system":...,"agentId":...,"conversationId":...,
//    "now":"ISO","previousMessageCount":0,"includeMemfs":true}
//                                              -> {"id":2,"ok":true,"record":{...},"polluted":false}
//   upstream threw                             -> {"id":2,"ok":true,"thrown":"TypeError: ...","polluted":false}
//   bad request / missing symbol               -> {"id":2,"ok":false,"error":"..."}
// After an answer with "polluted": true the driver exits: upstream code changed a shared
// prototype, so later answers from this process could depend on this case.
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync, existsSync, renameSync, statSync } from "node:fs";
import { dirname, join } from "node:path";

const bundlePath = process.argv[2];
if (!bundlePath) {
  process.stderr.write("usage: bun driver.mjs /path/to/letta.js\n");
  process.exit(2);
}

// Symbols are found by the module comment that precedes them, since the bundler
// renames colliding names (parseFrontmatter2, ...).
const SYMBOLS = {
  compileLocalSystemPrompt: {
    modules: ["src/backend/local/system-prompt-compilation.ts", "src/backend/local/systemPromptCompilation.ts"],
    pattern: /^function (compileLocalSystemPrompt\d*)\(/m,
  },
  initSystemPromptCompilation: {
    modules: ["src/backend/local/system-prompt-compilation.ts", "src/backend/local/systemPromptCompilation.ts"],
    pattern: /^var (init_\w+) = __esm\(/m,
  },
};

function moduleSection(text, modulePath) {
  const marker = `\n// ${modulePath}\n`;
  const start = text.indexOf(marker);
  if (start < 0) return null;
  const next = text.indexOf("\n// src/", start + marker.length);
  return text.slice(start + 1, next < 0 ? text.length : next);
}

function findSymbols(text) {
  const found = {};
  const missing = [];
  for (const [name, spec] of Object.entries(SYMBOLS)) {
    let local = null;
    for (const modulePath of spec.modules) {
      const section = moduleSection(text, modulePath);
      const match = section && section.match(spec.pattern);
      if (match) {
        local = match[1];
        break;
      }
    }
    if (local) found[name] = local;
    else missing.push(`${name} (looked in ${spec.modules.join(" or ")})`);
  }
  return { found, missing };
}

function withoutCliEntry(text) {
  // 0.30+ end with a standalone entry module; 0.25.x end with a bare `main();`.
  const entry = text.indexOf("\n// src/standalone-entry.ts\n");
  if (entry >= 0) return text.slice(0, entry + 1);
  const call = text.lastIndexOf("\nmain();\n");
  if (call >= 0 && text.length - call < 400) return text.slice(0, call + 1);
  throw new Error("cannot find the CLI entry at the end of the bundle (no `// src/standalone-entry.ts`, no final `main();`)");
}

function prepareModule() {
  const text = readFileSync(bundlePath, "utf8");
  const { found, missing } = findSymbols(text);
  const digest = createHash("sha256").update(text).update(readFileSync(new URL(import.meta.url))).digest("hex").slice(0, 16);
  // Next to the bundle, so the bundle's own require()s (sharp, ...) resolve as in a real install.
  const modulePath = join(dirname(bundlePath), `.conformance-driver-${digest}.mjs`);
  const exports = Object.entries(found).map(([name, local]) => `${local} as ${name}`).join(", ");
  // The `// @bun` pragma of 0.25.x bundles is kept: the reference is the bundle as bun runs it.
  const body = `${withoutCliEntry(text)}\nexport { ${exports} };\n`;
  // Written once per bundle and driver; rewritten when a previous copy was cut short or altered.
  if (!existsSync(modulePath) || statSync(modulePath).size !== Buffer.byteLength(body)) {
    const tmp = `${modulePath}.${process.pid}.tmp`;
    writeFileSync(tmp, body);
    renameSync(tmp, modulePath);
  }
  return { modulePath, found, missing };
}

function packageVersion() {
  try {
    return JSON.parse(readFileSync(join(dirname(bundlePath), "package.json"), "utf8")).version ?? null;
  } catch {
    return null;
  }
}

const started = performance.now();
let upstream;
let prepared;
try {
  prepared = prepareModule();
  upstream = await import(prepared.modulePath);
} catch (error) {
  process.stderr.write(`cannot load bundle ${bundlePath}: ${error?.stack ?? error}\n`);
  process.exit(3);
}
const importMs = performance.now() - started;
let initialised = false;

function need(name) {
  const value = upstream[name];
  if (typeof value !== "function") {
    const version = packageVersion() ?? "unknown version";
    throw new Error(`letta-code ${version} (${bundlePath}) has no ${name}: ${prepared.missing.join("; ")}`);
  }
  return value;
}

// What upstream code could pollute: shared prototypes and constructors, and the functions hanging off them.
const WATCHED = [Object.prototype, Object, Function.prototype, Array.prototype, String.prototype];
function prototypeSnapshot() {
  const parts = [];
  for (const target of WATCHED) {
    for (const key of Reflect.ownKeys(target)) {
      parts.push(String(key));
      const descriptor = Object.getOwnPropertyDescriptor(target, key);
      const value = descriptor && "value" in descriptor ? descriptor.value : undefined;
      if (value && (typeof value === "object" || typeof value === "function")) {
        parts.push(`${String(key)}{${Reflect.ownKeys(value).map(String).join(",")}}`);
      }
    }
    parts.push("|");
  }
  return parts.join(",");
}
const cleanSnapshot = prototypeSnapshot();

function compile(request) {
  const compileLocalSystemPrompt = need("compileLocalSystemPrompt");
  if (!initialised) {
    need("initSystemPromptCompilation")();
    initialised = true;
  }
  const options = {
    agent: { id: request.agentId, system: request.system },
    conversationId: request.conversationId,
    memoryDir: request.memoryDir,
    now: new Date(request.now),
    previousMessageCount: request.previousMessageCount ?? 0,
  };
  if (request.includeMemfs !== undefined) options.includeMemfs = request.includeMemfs;
  return compileLocalSystemPrompt(options);
}

const HANDLERS = {
  hello: () => ({
    info: {
      bun: typeof Bun !== "undefined" ? Bun.version : null,
      runtime: typeof Bun !== "undefined" ? "bun" : `node ${process.version}`,
      bundle: bundlePath,
      version: packageVersion(),
      symbols: prepared.found,
      missing: prepared.missing,
      importMs,
      collator: new Intl.Collator().resolvedOptions().locale,
    },
  }),
  compile: (request) => {
    try {
      return { record: compile(request) };
    } catch (error) {
      if (String(error?.message ?? "").includes(" has no ")) throw error;
      return { thrown: `${error?.name ?? "Error"}: ${error?.message ?? String(error)}` };
    }
  },
};

function answer(line) {
  let request;
  try {
    request = JSON.parse(line);
  } catch (error) {
    return { id: null, ok: false, error: `request is not JSON: ${error.message}` };
  }
  const handler = HANDLERS[request.op];
  if (!handler) return { id: request.id ?? null, ok: false, error: `unknown op ${JSON.stringify(request.op)}` };
  try {
    const result = handler(request);
    const polluted = prototypeSnapshot() !== cleanSnapshot;
    return { id: request.id ?? null, ok: true, ...result, polluted };
  } catch (error) {
    return { id: request.id ?? null, ok: false, error: String(error?.message ?? error) };
  }
}

const decoder = new TextDecoder("utf-8");
let buffered = "";
for await (const chunk of process.stdin) {
  buffered += decoder.decode(chunk, { stream: true });
  let newline;
  while ((newline = buffered.indexOf("\n")) >= 0) {
    const line = buffered.slice(0, newline);
    buffered = buffered.slice(newline + 1);
    if (!line.trim()) continue;
    const reply = answer(line);
    process.stdout.write(`${JSON.stringify(reply)}\n`);
    if (reply.polluted) process.exit(0);
  }
}
