// Reference driver: loads a letta-code release bundle (letta.js) without starting its
// CLI and answers JSON-lines requests on stdin with upstream's own functions.
//
//   bun driver.mjs /path/to/letta.js
//   bun driver.mjs /path/to/compiler.mjs [/path/to/lifecycle.mjs]
//
// The second form loads modules built from an upstream revision's source (harness/acquire/revision_build.py):
// an ESM module holding the compiler's module (exports replaced by the driver's, as for a bundle)
// and, optionally, one holding LocalBackend and DeterministicPongExecutor, imported at the first
// lifecycle request (it needs the packages installed beside it; compile requests never load it).
//
// Protocol version 1 (docs/protocol.md, reference/protocol.schema.json; one JSON object per line, split on
// "\n" only; every answer echoes the id):
//   {"id":1,"op":"hello"}                      -> {"id":1,"ok":true,"protocol":1,"capabilities":{"ops":[...],
//                                                  "lifecycle":bool,"profiles":null},"info":{bun, bundle, symbols, importMs}}
//   (profiles null: the driver serves the one release it loaded, whatever profile a request names)
//   {"id":2,"op":"compile","memoryDir":...,"system":...,"agentId":...,"conversationId":...,
//    "now":"ISO","previousMessageCount":0,"includeMemfs":true,"profile":"letta-code@0.33.6" (ignored)}
//                                              -> {"id":2,"ok":true,"record":{...},"polluted":false}
//   upstream threw                             -> {"id":2,"ok":true,"thrown":"TypeError: ...","polluted":false}
//   (a lifecycle_open upstream threw from opens no session: the probe stops there)
//   a compile request with "clientSkills":[...] also answers "systemPromptWithSkills": upstream's own
//   appendAvailableSkillsBlock(record.content, clientSkills), as a turn sends it (a non-array is [], as
//   LocalBackend does with body.client_skills)
//   {"id":6,"op":"skills_block","systemPrompt":"...","clientSkills":[...]}
//                                              -> {"id":6,"ok":true,"block":"...","appended":"..."}
//   {"id":3,"op":"lifecycle_open","session":"s1","memoryDir":...,"storageDir":...,"system":...,
//    "model":null|"handle","now":"ISO","agentId":null|"id","delivery":"mid-conversation","profile":...}
//                                              -> {"id":3,"ok":true,"opened":{agentId, conversationId, model},"compiled":{...}}
//   upstream's store chooses the agent id (`agent-local-<randomUUID()>`, counted from 1 here) and the API has no
//   way to pass one in, so a requested agentId is accepted and ignored: `opened` reports the id used. Upstream
//   delivers a memory update mid-conversation only: any other delivery is answered unsupported.
//   {"id":4,"op":"lifecycle_step","session":"s1","step":{"kind":"turn","text":...,"now":"ISO"}}
//                                              -> {"id":4,"ok":true,"observed":{systemPrompt, midConversationSystemPrompt,
//                                                  uiMessages, historyCount, stored, ...}}
//   {"id":5,"op":"lifecycle_close","session":"s1"}
//   a turn runs the release's client-loop reminders around the backend's turn, as headless mode does (0.30.28+, not
//   in an agent-free conversation): observed.reminders [{id, text}], the memory directory written <memoryDir>
//   step kinds: turn (optional "clientSkills": the turn body's client_skills), system, model,
//   new_conversation, agent_free_conversation ("system", "model"; 0.33.6+), compact, recompile,
//   conversation ("index": back to the index-th conversation the session created, 1-based)
// Lifecycle ops run upstream's real LocalBackend turn loop with a recording executor (no network,
// no model); the clock is pinned to `now` and crypto.randomUUID counts from 1 inside a session.
//   {"id":7,"op":"memory_view","memoryDir":".../memory","path":"projects"}
//                                              -> {"id":7,"ok":true,"view":"<memory_content ..."} or {"ok":true,"thrown":"Error: ..."}
//   upstream's Memory tool (0.34.7+, memoryViewTool); a release without it answers unsupported with the reason
//   bad request / missing symbol               -> {"id":2,"ok":false,"error":"..."}
//   unknown op, a delivery upstream lacks      -> {"id":2,"ok":false,"unsupported":"op \"frobnicate\""}
// After an answer with "polluted": true upstream code had changed a shared prototype, so later answers
// from this process could depend on this case: the driver puts every watched built-in back as it was at
// start and answers "restored": true, or, where that cannot be done, leaves "restored" out and exits.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { chmodSync, readFileSync, writeFileSync, existsSync, renameSync, statSync, mkdtempSync, mkdirSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";

const bundlePath = process.argv[2];
const lifecyclePath = process.argv[3] ?? null;
if (!bundlePath) {
  process.stderr.write("usage: bun driver.mjs /path/to/letta.js | /path/to/compiler.mjs [/path/to/lifecycle.mjs]\n");
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
  LocalBackend: {
    modules: ["src/backend/local/local-backend.ts", "src/backend/local/LocalBackend.ts"],
    pattern: /^var (LocalBackend\d*);/m,
  },
  initLocalBackend: {
    modules: ["src/backend/local/local-backend.ts", "src/backend/local/LocalBackend.ts"],
    pattern: /^var (init_\w+) = __esm\(/m,
  },
  // The turn's `<available_skills>` block (0.25.3 and later): upstream appends it to the compiled
  // prompt on every turn (`appendAvailableSkillsBlock(persisted.content, body.client_skills)`).
  compileAvailableSkillsBlock: {
    modules: ["src/backend/local/system-prompt-compilation.ts", "src/backend/local/systemPromptCompilation.ts"],
    pattern: /^function (compileAvailableSkillsBlock\d*)\(/m,
  },
  appendAvailableSkillsBlock: {
    modules: ["src/backend/local/system-prompt-compilation.ts", "src/backend/local/systemPromptCompilation.ts"],
    pattern: /^function (appendAvailableSkillsBlock\d*)\(/m,
  },
  // The pre-commit hook upstream installs into a memory repository (`installPreCommitHook`): a bash script,
  // in 0.25.x a constant of memoryGit.ts, later one that memory-git-hooks.ts's init assigns (0.32.8+: it embeds
  // validateMemoryFileFrontmatter and runs it under node; 0.33.3+: under process.execPath).
  PRE_COMMIT_HOOK_SCRIPT: {
    modules: ["src/agent/memory-git-hooks.ts", "src/agent/memoryGit.ts"],
    pattern: /^var [^\n]*?\b(PRE_COMMIT_HOOK_SCRIPT\d*)\b/m,
  },
  initMemoryGitHooks: {
    modules: ["src/agent/memory-git-hooks.ts", "src/agent/memoryGit.ts"],
    pattern: /^var (init_\w+) = __esm\(/m,
  },
  // The tree-constraints validator the hook runs with node from the hooks directory (0.31.12+).
  MEMORY_CONSTRAINTS_VALIDATOR_SCRIPT: {
    modules: ["src/agent/memory-constraints.ts"],
    pattern: /^var [^\n]*?\b(MEMORY_CONSTRAINTS_VALIDATOR_SCRIPT\d*)\b/m,
  },
  MEMORY_CONSTRAINTS_VALIDATOR_NAME: {
    modules: ["src/agent/memory-constraints.ts"],
    pattern: /^var [^\n]*?\b(MEMORY_CONSTRAINTS_VALIDATOR_NAME\d*)\b/m,
  },
  // The Memory tool's view of a deferred directory (0.34.7 and later; src/tools/impl/memory.ts up to 0.33.2 is
  // a different, memory-editing tool): `memory(args)` and its module's initialiser, found only where the
  // module renders directories (renderDirectory).
  memoryViewTool: {
    modules: ["src/tools/impl/memory.ts"],
    pattern: /^async function (memory\d*)\(args\) \{\n  validateRequiredParams\(args, \["path"\], "Memory"\);$/m,
  },
  memoryViewRender: {
    modules: ["src/tools/impl/memory.ts"],
    pattern: /^function (renderDirectory\d*)\(/m,
  },
  initMemoryViewTool: {
    modules: ["src/tools/impl/memory.ts"],
    pattern: /^var (init_\w+) = __esm\(/m,
  },
  // How the tool finds its memory directory: the current agent (a runtime context) and the backend's
  // capabilities (upstream's own test hook swaps the backend).
  runWithRuntimeContext: {
    modules: ["src/runtime-context.ts"],
    pattern: /^function (runWithRuntimeContext\d*)\(/m,
  },
  testSetBackend: {
    modules: ["src/backend/backend.ts"],
    pattern: /^function (__testSetBackend\d*)\(/m,
  },
  DeterministicPongExecutor: {
    modules: ["src/backend/dev/headless-turn-executor.ts", "src/backend/dev/HeadlessTurnExecutor.ts"],
    pattern: /^class (DeterministicPongExecutor\d*) /m,
  },
  // The memory write tool (create, str_replace, insert, delete, rename, update_description): Memory.ts in
  // 0.25.x, memory.ts in 0.30.28 .. 0.33.2. From 0.34.7 memory.ts is a read-only view tool with no
  // applyMemoryCommand, which is how the driver tells the two apart.
  memoryWriteTool: {
    modules: ["src/tools/impl/memory.ts", "src/tools/impl/Memory.ts"],
    pattern: /^async function (memory\d*)\(args\) \{\n  validateRequiredParams\(args, \["command", "reason"\]/m,
  },
  applyMemoryCommand: {
    modules: ["src/tools/impl/memory.ts", "src/tools/impl/Memory.ts"],
    pattern: /^async function (applyMemoryCommand\d*)\(/m,
  },
  initMemoryWriteTool: {
    modules: ["src/tools/impl/memory.ts", "src/tools/impl/Memory.ts"],
    pattern: /^var (init_\w+) = __esm\(/m,
  },
  // The write tool asks the active backend whether memory is local (commit only) and for the agent's name; the
  // view tool's backend is swapped with testSetBackend and put back as getBackend found it.
  getBackend: {
    modules: ["src/backend/backend.ts"],
    pattern: /^function (getBackend\d*)\(\)/m,
  },
  // Under a remote MemFS backend (memory_write's syncMode "remote") the write tool asks the API client for a
  // token (getAuthToken); upstream's own test hook answers it with a client that has none, as its tests do.
  testOverrideGetClient: {
    modules: ["src/backend/api/client.ts"],
    pattern: /^function (__testOverrideGetClient\d*)\(/m,
  },
  initBackend: {
    modules: ["src/backend/backend.ts"],
    pattern: /^var (init_\w+) = __esm\(/m,
  },
  // The post-turn memory sync and its reminders (0.30.28 and later; memory_reminder).
  runPostTurnMemorySync: {
    modules: ["src/reminders/memory-git-sync.ts"],
    pattern: /^async function (runPostTurnMemorySync\d*)\(/m,
  },
  initMemoryGitSync: {
    modules: ["src/reminders/memory-git-sync.ts"],
    pattern: /^var (init_\w+) = __esm\(/m,
  },
  syncPendingMemoryCommitsAfterTurn: {
    modules: ["src/agent/memory-git.ts"],
    pattern: /^async function (syncPendingMemoryCommitsAfterTurn\d*)\(/m,
  },
  // The shared reminder engine a client loop runs before each turn (0.25.3 and later): the reminders it builds
  // for the turn, and how it puts them before the user's content; a conversation's reminder state and the queue
  // the post-turn sync fills (enqueueMemoryGitSyncReminder, 0.30.28+).
  buildSharedReminderParts: {
    modules: ["src/reminders/engine.ts"],
    pattern: /^async function (buildSharedReminderParts\d*)\(/m,
  },
  prependReminderPartsToContent: {
    modules: ["src/reminders/engine.ts"],
    pattern: /^function (prependReminderPartsToContent\d*)\(/m,
  },
  initReminderEngine: {
    modules: ["src/reminders/engine.ts"],
    pattern: /^var (init_\w+) = __esm\(/m,
  },
  createSharedReminderState: {
    modules: ["src/reminders/state.ts"],
    pattern: /^function (createSharedReminderState\d*)\(/m,
  },
  // The process's permission mode (an object its module's init makes): what the permission-mode reminder reports.
  permissionMode: {
    modules: ["src/permissions/mode.ts"],
    pattern: /^var (?:[^\n]*?, )?(permissionMode\d*)(?:;$| = new )/m,
  },
  enqueueMemoryGitSyncReminder: {
    modules: ["src/reminders/state.ts"],
    pattern: /^function (enqueueMemoryGitSyncReminder\d*)\(/m,
  },
};

// Store ids come from node:crypto's randomUUID, imported by name; an import binding cannot be
// replaced at run time, so the prepared module routes each such import through a hook that a
// lifecycle session sets (ids then count from 1 and reports are byte-stable).
function withRandomUUIDHook(text) {
  return text.replace(/^import \{([^}]*)\} from "node:crypto";$/gm, (statement, specifiers) => {
    const parts = specifiers.split(",").map((part) => part.trim()).filter(Boolean);
    const hooked = [];
    const kept = parts.map((part) => {
      const [imported, local = imported] = part.split(/\s+as\s+/);
      if (imported !== "randomUUID") return part;
      hooked.push(local);
      return `randomUUID as __conformanceReal_${local}`;
    });
    if (hooked.length === 0) return statement;
    const wrappers = hooked.map(
      (local) =>
        `function ${local}(...args) { return (globalThis.__conformanceRandomUUID ?? __conformanceReal_${local})(...args); }`,
    );
    return `import { ${kept.join(", ")} } from "node:crypto";\n${wrappers.join("\n")}`;
  });
}

// A module's text: every part of the bundle under its comment (an ES module built from one entry may split a
// module in two, its imports' inits first, then its body after the modules it imports), joined in order.
function moduleSection(text, modulePath) {
  const marker = `\n// ${modulePath}\n`;
  const parts = [];
  for (let start = text.indexOf(marker); start >= 0; start = text.indexOf(marker, start + marker.length)) {
    const next = text.indexOf("\n// src/", start + marker.length);
    parts.push(text.slice(start + 1, next < 0 ? text.length : next));
  }
  return parts.length > 0 ? parts.join("\n") : null;
}

function findSymbols(text, names = Object.keys(SYMBOLS)) {
  const found = {};
  const missing = [];
  for (const name of names) {
    const spec = SYMBOLS[name];
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

// A module built from one source entry ends with its own `export { ... };` block instead.
const TRAILING_EXPORTS = /\nexport \{[^}]*\};\s*$/;

function withoutCliEntry(text) {
  // 0.30+ end with a standalone entry module; 0.25.x end with a bare `main();`.
  const entry = text.indexOf("\n// src/standalone-entry.ts\n");
  if (entry >= 0) return text.slice(0, entry + 1);
  const call = text.lastIndexOf("\nmain();\n");
  if (call >= 0 && text.length - call < 400) return text.slice(0, call + 1);
  const exported = text.match(TRAILING_EXPORTS);
  if (exported) return text.slice(0, exported.index + 1);
  throw new Error(
    "cannot find the CLI entry at the end of the bundle (no `// src/standalone-entry.ts`, no final `main();`, no final `export { ... };`)",
  );
}

function prepareModule(path = bundlePath, names = undefined) {
  const text = readFileSync(path, "utf8");
  const { found, missing } = findSymbols(text, names);
  const digest = createHash("sha256").update(text).update(readFileSync(new URL(import.meta.url))).digest("hex").slice(0, 16);
  // Next to the bundle, so the bundle's own require()s (sharp, ...) resolve as in a real install.
  const modulePath = join(dirname(path), `.conformance-driver-${digest}.mjs`);
  const exports = Object.entries(found).map(([name, local]) => `${local} as ${name}`).join(", ");
  // The `// @bun` pragma of 0.25.x bundles is kept: the reference is the bundle as bun runs it.
  const body = `${withRandomUUIDHook(withoutCliEntry(text))}\nexport { ${exports} };\n`;
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
// With a lifecycle module, the compiler module answers compile requests only.
const LIFECYCLE_SYMBOLS = ["LocalBackend", "initLocalBackend", "DeterministicPongExecutor"];
const COMPILE_SYMBOLS = Object.keys(SYMBOLS).filter((name) => !LIFECYCLE_SYMBOLS.includes(name));
// A revision's lifecycle module also re-exports the client loop around the turn where the revision has it
// (harness/acquire/revision_source.py TURN_REMINDER_EXPORTS): its exports replace the compiler module's, so the
// backend the sync asks is the one its own module sees.
const LIFECYCLE_MODULE_SYMBOLS = [
  ...LIFECYCLE_SYMBOLS,
  "buildSharedReminderParts",
  "prependReminderPartsToContent",
  "initReminderEngine",
  "createSharedReminderState",
  "enqueueMemoryGitSyncReminder",
  "runPostTurnMemorySync",
  "initMemoryGitSync",
  "permissionMode",
  "getBackend",
  "initBackend",
  "testSetBackend",
];
let lifecycleModule = null;
async function loadLifecycleModule() {
  if (!lifecyclePath || lifecycleModule) return;
  const lifecyclePrepared = prepareModule(lifecyclePath, LIFECYCLE_MODULE_SYMBOLS);
  let loaded;
  try {
    loaded = await import(lifecyclePrepared.modulePath);
  } catch (error) {
    throw new Error(`cannot load lifecycle module ${lifecyclePath}: ${error?.stack ?? error}`);
  }
  lifecycleModule = loaded;
  upstream = { ...upstream, ...loaded };
  prepared.found = { ...prepared.found, ...lifecyclePrepared.found };
  prepared.missing = [...prepared.missing, ...lifecyclePrepared.missing];
}
try {
  prepared = prepareModule(bundlePath, lifecyclePath ? COMPILE_SYMBOLS : undefined);
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

// What upstream code could pollute: every built-in object a `system/**` walk through a plain object can
// reach (Object.prototype and Number.prototype, and from them Object, Number, Function.prototype,
// Function and every method hanging off them: memfs_prompt/js_builtins.json), plus Array.prototype and
// String.prototype, which the compiler itself calls. The snapshot takes every object reachable from
// these through own properties and prototypes, and lists its prototype, whether it is extensible and
// each own property's attributes and value (an object by identity): a property added, removed,
// replaced or reconfigured anywhere there changes it. About a millisecond per answer.
const WATCHED = [Object.prototype, Number.prototype, Function.prototype, Array.prototype, String.prototype];
// The Reflect functions are taken now, before upstream code runs.
const { ownKeys, getOwnPropertyDescriptor, defineProperty, deleteProperty } = Reflect;
const { getPrototypeOf, setPrototypeOf, isExtensible } = Reflect;
const isObject = (value) => (typeof value === "object" && value !== null) || typeof value === "function";

// The watched objects in the order of a walk from WATCHED (through prototypes and property values), each
// with its prototype, extensibility and own property descriptors (values by identity).
function watchedState() {
  const seen = new Set(WATCHED);
  const queue = [...WATCHED];
  const state = [];
  const visit = (value) => {
    if (isObject(value) && !seen.has(value)) {
      seen.add(value);
      queue.push(value);
    }
  };
  for (let i = 0; i < queue.length; i++) {
    const target = queue[i];
    const properties = ownKeys(target).map((key) => [key, getOwnPropertyDescriptor(target, key)]);
    state.push({ target, prototype: getPrototypeOf(target), extensible: isExtensible(target), properties });
    visit(getPrototypeOf(target));
    for (const [, d] of properties) ("value" in d ? [d.value] : [d.get, d.set]).forEach(visit);
  }
  return state;
}

// That state as text, objects numbered in walk order: a property added, removed, replaced or reconfigured
// anywhere there changes it.
function prototypeSnapshot() {
  const state = watchedState();
  const ids = new Map(state.map(({ target }, i) => [target, i]));
  const ref = (value) => {
    if (isObject(value)) return `#${ids.get(value)}`;
    if (typeof value === "string") return JSON.stringify(value);
    return Object.is(value, -0) ? "-0" : String(value);
  };
  const parts = [];
  for (const { target, prototype, extensible, properties } of state) {
    parts.push(`${ref(target)}:${ref(prototype)}${extensible ? "" : "!"}`);
    for (const [key, d] of properties) {
      const flags = `${d.enumerable ? "e" : ""}${d.configurable ? "c" : ""}${d.writable ? "w" : ""}`;
      parts.push(`${String(key)}/${flags}=${"value" in d ? ref(d.value) : `${ref(d.get)}/${ref(d.set)}`}`);
    }
  }
  return parts.join(",");
}
const cleanState = watchedState();
const cleanSnapshot = prototypeSnapshot();

// Restoring a polluted runtime in place, so that a polluting case costs no restart: every watched
// object's prototype and own properties as they were at start (descriptors hold the same values, so
// identities are kept). A change that cannot be undone (an object made non-extensible, a property made
// non-configurable) fails the restore, and the driver exits as before; the snapshot taken again decides,
// never the restore's own account of itself.
function restoreWatched() {
  for (const { target, prototype, properties } of cleanState) {
    const kept = new Set(properties.map(([key]) => key));
    for (const key of ownKeys(target)) if (!kept.has(key)) deleteProperty(target, key);
    for (const [key, descriptor] of properties) defineProperty(target, key, descriptor);
    if (getPrototypeOf(target) !== prototype) setPrototypeOf(target, prototype);
  }
  return prototypeSnapshot() === cleanSnapshot;
}

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

function clientSkillsOf(request) {
  return Array.isArray(request.clientSkills) ? request.clientSkills : [];
}

// What upstream threw, as the answer's `thrown` (its message is not part of the contract).
function thrownText(error) {
  return `${error?.name ?? "Error"}: ${error?.message ?? String(error)}`;
}

// --- lifecycle: upstream's LocalBackend turn loop with a recording executor -------------------

const RealDate = Date;
const sessions = new Map();
const initialisedModules = new Set();

function initOnce(name) {
  if (initialisedModules.has(name)) return;
  need(name)();
  initialisedModules.add(name);
}

function pinnedDateClass(clock) {
  return class PinnedDate extends RealDate {
    constructor(...args) {
      if (args.length === 0) super(clock.now);
      else super(...args);
    }
    static now() {
      return clock.now;
    }
  };
}

// The clock and the id counter are swapped in only while a session's op runs.
async function inSession(session, work) {
  const savedUUID = globalThis.__conformanceRandomUUID;
  globalThis.Date = session.Date;
  globalThis.__conformanceRandomUUID = session.uuid;
  try {
    return await work();
  } finally {
    globalThis.Date = RealDate;
    if (savedUUID === undefined) delete globalThis.__conformanceRandomUUID;
    else globalThis.__conformanceRandomUUID = savedUUID;
  }
}

function messageText(content) {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map((part) => (typeof part === "string" ? part : part?.text ?? "")).join("");
  return content === undefined || content === null ? "" : JSON.stringify(content);
}

function uiMessageView(message) {
  // 0.30+ keep `content`; 0.25.x keep AI SDK `parts`.
  const content = message?.content ?? message?.parts;
  return { role: message?.role ?? message?.message_type ?? "unknown", text: messageText(content) };
}

// The summariser's model call, answered without a network (an AssistantMessage as pi-ai returns it).
const SUMMARY = "conversation summary";
async function completeSummary() {
  const usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0 };
  return {
    role: "assistant",
    content: [{ type: "text", text: SUMMARY }],
    stopReason: "stop",
    usage: { ...usage, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
  };
}

function sessionAgentId(session) {
  // An agent-free conversation runs under an execution agent id that the store derives from it.
  return session.agentFree ? session.backend.store.agentIdForConversation(session.conversationId) : session.agentId;
}

function compiledRecordOf(session) {
  const record = session.backend.store.getCompiledSystemPrompt(session.conversationId, sessionAgentId(session));
  return record ? { ...record } : null;
}

function storedMessages(session) {
  return session.backend.store.listLocalMessages(session.conversationId, sessionAgentId(session)).map(uiMessageView);
}

// A request for something the driver does not serve: answered `unsupported`, not `error`.
class Unsupported extends Error {}
const DELIVERY = "mid-conversation"; // the only delivery upstream has

async function lifecycleOpen(request) {
  if (sessions.has(request.session)) throw new Error(`session ${request.session} is already open`);
  // `agentId` is ignored: upstream's store chooses it (the answer's `opened.agentId`).
  if (request.delivery != null && request.delivery !== DELIVERY) {
    throw new Unsupported(`delivery ${JSON.stringify(request.delivery)} (upstream delivers ${DELIVERY} only)`);
  }
  const clock = { now: RealDate.parse(request.now) };
  if (Number.isNaN(clock.now)) throw new Error(`bad now: ${request.now}`);
  let seq = 0;
  const session = {
    clock,
    Date: pinnedDateClass(clock),
    uuid: () => `00000000-0000-4000-8000-${String(++seq).padStart(12, "0")}`,
    executed: [],
  };
  await loadLifecycleModule();
  return inSession(session, async () => {
    initOnce("initLocalBackend");
    const LocalBackend = need("LocalBackend");
    const pong = new (need("DeterministicPongExecutor"))();
    const executor = {
      async execute(input) {
        session.executed.push({
          systemPrompt: input.systemPrompt,
          midConversationSystemPrompt: input.midConversationSystemPrompt ?? null,
          uiMessages: (input.uiMessages ?? []).map(uiMessageView),
          historyCount: (input.history ?? []).length,
          model: input.agent?.model ?? null,
        });
        return pong.execute(input);
      },
    };
    session.backend = new LocalBackend({
      storageDir: request.storageDir,
      memoryDir: request.memoryDir,
      executor,
      memfsEnabled: true,
      complete: completeSummary,
    });
    const body = { name: "conformance", system: request.system };
    if (request.model) body.model = request.model;
    let agent, conversation;
    try {
      agent = await session.backend.createAgent(body);
      conversation = await session.backend.createConversation({ agent_id: agent.id });
    } catch (error) {
      // upstream could not open (a memory directory whose `.git` is a file: no hooks directory); no session
      return { thrown: thrownText(error) };
    }
    session.agentId = agent.id;
    session.conversationId = conversation.id;
    session.memoryDir = request.memoryDir;
    // What a headless session knows of its agent: retrieved once, at its start (src/headless.ts `agent`); its
    // last_run_completion is left out (turnReminders says why).
    session.agentInfo = { id: agent.id, name: agent.name ?? null, description: agent.description ?? null, lastRunAt: null };
    session.conversations = [newConversationEntry(conversation.id, false)];
    session.current = session.conversations[0];
    sessions.set(request.session, session);
    return {
      opened: { agentId: agent.id, conversationId: conversation.id, model: agent.model ?? null },
      compiled: compiledRecordOf(session),
    };
  });
}

// A conversation the session created; an agent's own conversation carries the client loop's reminder state
// (createSharedReminderState, made at its first turn), as one headless session per conversation keeps it.
function newConversationEntry(id, agentFree) {
  return { id, agentFree, reminderState: null };
}

const STEPS = {
  async turn(session, step) {
    const before = session.executed.length;
    const reminders = await turnReminders(session);
    const content = reminders ? need("prependReminderPartsToContent")(step.text, reminders.parts) : step.text;
    const body = { messages: [{ type: "message", role: "user", content }] };
    // An agent-free conversation is addressed by its id alone, as a workflow client does.
    if (!session.agentFree) body.agent_id = session.agentId;
    // `clientSkills` (optional): the turn's body.client_skills, appended as <available_skills>.
    if (step.clientSkills !== undefined) body.client_skills = step.clientSkills;
    try {
      const stream = await session.backend.createConversationMessageStream(session.conversationId, body);
      for await (const _chunk of stream) {
        // drained so upstream persists the assistant message, as a client would
      }
    } finally {
      // headless.ts runs the post-turn sync in the turn's `finally`, whether or not the turn threw
      if (reminders) await postTurnSync(session, session.current.reminderState);
    }
    if (session.executed.length !== before + 1) {
      throw new Error(`the executor ran ${session.executed.length - before} times for one turn`);
    }
    const observed = { executed: session.executed.at(-1) };
    if (reminders) observed.reminders = reminders.applied;
    return observed;
  },
  async system(session, step) {
    await session.backend.updateAgent(session.agentId, { system: step.system });
    return {};
  },
  async model(session, step) {
    const agent = await session.backend.updateAgent(session.agentId, { model: step.model });
    return { model: agent?.model ?? null };
  },
  async new_conversation(session) {
    const conversation = await session.backend.createConversation({ agent_id: session.agentId });
    session.conversationId = conversation.id;
    session.agentFree = false;
    session.current = newConversationEntry(conversation.id, false);
    session.conversations.push(session.current);
    return {};
  },
  // Back to the index-th conversation this session created (1: the one opened with the agent): later
  // turns are addressed to it, as a client that kept its id does. No backend call.
  async conversation(session, step) {
    const chosen = session.conversations[step.index - 1];
    session.conversationId = chosen.id;
    session.agentFree = chosen.agentFree;
    session.current = chosen;
    return {};
  },
  // An agent-free ("ephemeral") conversation (0.33.6+: LocalBackend.createEphemeralConversation):
  // its own model and raw system prompt, no agent; later steps use it.
  async agent_free_conversation(session, step) {
    if (typeof session.backend.createEphemeralConversation !== "function") {
      throw new Error("this release has no createEphemeralConversation (agent-free conversations)");
    }
    const body = { system: step.system ?? "", model: step.model ?? "openai/gpt-5.5" };
    const conversation = await session.backend.createEphemeralConversation(body);
    session.conversationId = conversation.id;
    session.agentFree = true;
    session.current = newConversationEntry(conversation.id, true);
    session.conversations.push(session.current);
    return { agentFree: { conversationId: conversation.id, agentId: conversation.agent_id ?? null } };
  },
  async compact(session) {
    // Mode "all": every message is summarised (0.25.3 ignores `complete` and needs a provider key).
    const result = await session.backend.compactConversationMessages(session.conversationId, {
      agent_id: session.agentId,
      compaction_settings: { mode: "all" },
    });
    return { compacted: { before: result.num_messages_before, after: result.num_messages_after } };
  },
  async recompile(session) {
    await session.backend.recompileConversation(session.conversationId, { agent_id: session.agentId });
    return {};
  },
};

async function lifecycleStep(request) {
  const session = sessions.get(request.session);
  if (!session) throw new Error(`no open session ${request.session}`);
  const step = request.step ?? {};
  const run = STEPS[step.kind];
  if (!run) throw new Error(`unknown lifecycle step kind ${JSON.stringify(step.kind)}`);
  if (step.kind === "conversation" && !(Number.isInteger(step.index) && session.conversations[step.index - 1])) {
    throw new Error(`no conversation ${JSON.stringify(step.index)}: this session created ${session.conversations.length}`);
  }
  if (step.now) session.clock.now = RealDate.parse(step.now);
  return inSession(session, async () => {
    let observed;
    try {
      observed = await run(session, step);
    } catch (error) {
      return { thrown: thrownText(error) };
    }
    return {
      observed: {
        ...observed,
        conversationId: session.conversationId,
        compiled: compiledRecordOf(session),
        stored: storedMessages(session),
      },
    };
  });
}

function lifecycleClose(request) {
  sessions.delete(request.session);
  return { closed: true };
}

// --- validate: upstream's pre-commit hook on the staged change ---------------------------------

// The string a module's init assigns (a `var` the prepared module exports as a live binding).
function upstreamString(name) {
  if ("initMemoryGitHooks" in prepared.found) initOnce("initMemoryGitHooks");
  const value = upstream[name];
  return typeof value === "string" ? value : null;
}

function gitText(cwd, args) {
  const done = spawnSync("git", args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  if (done.status !== 0) throw new Error(`git ${args.join(" ")} failed in ${cwd}: ${done.stderr.trim()}`);
  return done.stdout.trim();
}

// Upstream's hook (its own constant, and the constraints validator it runs from the hooks directory) written
// where git finds it, then a commit of the index as upstream's commit path makes one: git runs the hook with
// its hook environment (the work tree as cwd, GIT_INDEX_FILE, GIT_EDITOR, the hook's stdout sent to stderr),
// so stderr holds everything the hook printed, in order. The layout policy file is the case's: not written.
function validateStaged(request) {
  const hook = upstreamString("PRE_COMMIT_HOOK_SCRIPT");
  if (hook === null) {
    throw new Unsupported(
      `letta-code ${packageVersion() ?? "(unknown version)"} has no PRE_COMMIT_HOOK_SCRIPT (src/agent/memoryGit.ts or src/agent/memory-git-hooks.ts)`,
    );
  }
  const hooksDir = join(resolve(request.memoryDir, gitText(request.memoryDir, ["rev-parse", "--git-common-dir"])), "hooks");
  mkdirSync(hooksDir, { recursive: true });
  writeFileSync(join(hooksDir, "pre-commit"), hook, "utf-8");
  chmodSync(join(hooksDir, "pre-commit"), 0o755);
  const validator = upstreamString("MEMORY_CONSTRAINTS_VALIDATOR_SCRIPT");
  const validatorName = upstreamString("MEMORY_CONSTRAINTS_VALIDATOR_NAME");
  if (validator !== null && validatorName !== null) writeFileSync(join(hooksDir, validatorName), validator, "utf8");
  const done = spawnSync(
    "git",
    ["-c", "commit.gpgsign=false", "-c", "user.name=conformance", "-c", "user.email=conformance@letta.com",
      "commit", "--allow-empty", "-m", "conformance: validate"],
    { cwd: request.memoryDir, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] },
  );
  if (done.error) throw done.error;
  const messages = done.stderr.split("\n");
  if (messages.at(-1) === "") messages.pop();
  return { validation: { accepted: done.status === 0, messages } };
}

// --- memory_view: the Memory tool's rendering of a path (0.34.7 and later) --------------------

const MEMORY_VIEW_SYMBOLS = ["memoryViewTool", "memoryViewRender", "initMemoryViewTool"];

let memoryViewAbsent = null; // the reason, read from the bundle once
function memoryViewUnsupported() {
  if (memoryViewAbsent) return new Unsupported(memoryViewAbsent);
  const version = packageVersion() ?? `the module ${bundlePath}`;
  const module = moduleSection(readFileSync(bundlePath, "utf8"), "src/tools/impl/memory.ts");
  const what = module
    ? "its src/tools/impl/memory.ts is the memory-editing tool, with no renderDirectory"
    : "no src/tools/impl/memory.ts";
  memoryViewAbsent = `letta-code ${version} has no Memory view tool (${what}; it appears in 0.34.7)`;
  return new Unsupported(memoryViewAbsent);
}

// Set an environment variable for the call, or remove it; returns the old value (undefined: unset).
function swapEnv(name, value) {
  const old = process.env[name];
  if (value === undefined) delete process.env[name];
  else process.env[name] = value;
  return old;
}

// Upstream finds the memory directory from the current agent: with the local backend (its env var, a backend
// whose capabilities say localMemfs) it is `<LETTA_LOCAL_BACKEND_DIR>/memfs/<agentId>/memory`, and it needs a
// MEMORY.md there. The harness builds every repository at `<case dir>/memory`, so the storage dir is two
// levels up and the agent id `../<case dir's name>`: path.join then gives back `memoryDir` exactly, and the
// refusals, notices and `Memory directory:` line are upstream's own.
async function memoryView(request) {
  if (MEMORY_VIEW_SYMBOLS.some((name) => !(name in prepared.found))) throw memoryViewUnsupported();
  const memoryDir = request.memoryDir;
  if (typeof memoryDir !== "string" || !memoryDir.startsWith("/")) throw new Error("memoryDir must be an absolute path");
  if (typeof request.path !== "string") throw new Error("path must be a string");
  const parent = dirname(memoryDir);
  if (memoryDir.split("/").pop() !== "memory" || parent === "/" || join(memoryDir) !== memoryDir) {
    throw new Error(`memory_view needs a normalised memoryDir named memory below a directory (upstream finds it as <storage>/memfs/<agentId>/memory): ${memoryDir}`);
  }
  const agentId = `../${parent.split("/").pop()}`;
  initOnce("initMemoryViewTool");
  const savedBackend = need("getBackend")();
  const savedEnv = [
    ["LETTA_LOCAL_BACKEND_EXPERIMENTAL", swapEnv("LETTA_LOCAL_BACKEND_EXPERIMENTAL", "1")],
    ["LETTA_LOCAL_BACKEND_DIR", swapEnv("LETTA_LOCAL_BACKEND_DIR", dirname(parent))],
  ];
  need("testSetBackend")({ capabilities: { localMemfs: true } });
  try {
    const result = await need("runWithRuntimeContext")({ agentId }, () => need("memoryViewTool")({ path: request.path }));
    return { view: result.content };
  } catch (error) {
    return { thrown: thrownText(error) };
  } finally {
    need("testSetBackend")(savedBackend);
    for (const [name, value] of savedEnv) swapEnv(name, value);
  }
}

// --- the memory write tool: upstream's own `memory` tool function on the request's memory directory ------

// The agent the tool writes as when the request names none (the lifecycle's first store id).
const WRITE_AGENT_ID = "agent-local-00000000-0000-4000-8000-000000000001";
// Where the tool finds its memory directory and agent (resolveScopedMemoryDir, getAgentIdentity): set for
// the call from the request, the rest unset, and every one put back after.
const WRITE_ENV = ["MEMORY_DIR", "LETTA_MEMORY_DIR", "AGENT_ID", "LETTA_AGENT_ID", "AGENT_NAME"];

function memoryWriteMissing() {
  const version = packageVersion() ?? "unknown version";
  const text = readFileSync(bundlePath, "utf8");
  if (text.includes("\n// src/tools/impl/memory.ts\n")) {
    return `letta-code ${version} has no memory write tool: its src/tools/impl/memory.ts has no applyMemoryCommand (the read-only memory view tool)`;
  }
  return `letta-code ${version} has no memory write tool (no src/tools/impl/memory.ts or src/tools/impl/Memory.ts module)`;
}

// Own properties of the backend the call overrides, to be put back exactly (absent stays absent).
function overrideOwn(target, values) {
  const saved = Object.keys(values).map((key) => [key, Object.getOwnPropertyDescriptor(target, key)]);
  // defined, not assigned: 0.31+ declare `capabilities` as a getter on the class, which assignment cannot shadow
  for (const [key, value] of Object.entries(values)) {
    Object.defineProperty(target, key, { value, configurable: true, enumerable: true, writable: true });
  }
  return () => {
    for (const [key, descriptor] of saved) {
      if (descriptor) Object.defineProperty(target, key, descriptor);
      else delete target[key];
    }
  };
}

async function memoryWrite(request) {
  if (!("applyMemoryCommand" in prepared.found) || !("memoryWriteTool" in prepared.found)) {
    throw new Unsupported(memoryWriteMissing());
  }
  if (typeof request.memoryDir !== "string") throw new Error("memoryDir must be a string");
  if (typeof request.command !== "string") throw new Error("command must be a string");
  const args = request.args ?? {};
  if (args === null || typeof args !== "object" || Array.isArray(args)) throw new Error("args must be an object");
  const agentId = request.agentId ?? WRITE_AGENT_ID;
  const agentName = request.agentName ?? null;
  const syncMode = request.syncMode ?? "local";
  if (syncMode !== "local" && syncMode !== "remote") throw new Error('syncMode must be "local", "remote" or null');
  const pushesTo = syncMode === "remote" ? remoteWriteServed(request.memoryDir) : null;
  initOnce("initMemoryWriteTool");
  initOnce("initBackend");
  // The backend's capabilities say which sync the tool runs: local (localMemfs: commit, never push) or remote
  // (a remote MemFS: 0.30.28 to 0.33.2 commit and leave the push to the harness, configuring the remote with the
  // API client's token, which upstream's test hook answers with none: nothing reaches the network). The agent's
  // name is what the backend's retrieveAgent answers, and with no name (an unknown agent) the author is the id.
  const backend = need("getBackend")();
  const retrieveAgent = async (id) => {
    if (agentName === null) throw new Error(`agent ${id} not found`);
    return { id, name: agentName };
  };
  const restoreBackend = overrideOwn(backend, {
    capabilities: { ...backend.capabilities, localMemfs: syncMode === "local" },
    retrieveAgent,
  });
  if (syncMode === "remote") {
    need("testOverrideGetClient")(async () => ({ _options: { apiKey: "" }, agents: { retrieve: retrieveAgent } }));
  }
  const savedEnv = [...WRITE_ENV, "GIT_ALLOW_PROTOCOL"].map((name) => [name, process.env[name]]);
  for (const name of WRITE_ENV) delete process.env[name];
  process.env.MEMORY_DIR = request.memoryDir;
  process.env.AGENT_ID = agentId;
  // a tool that pushes does so only to the local remote remoteWriteServed found; git refuses any other transport
  if (pushesTo !== null) process.env.GIT_ALLOW_PROTOCOL = "file";
  try {
    const result = await need("memoryWriteTool")({ command: request.command, ...args });
    return { written: result?.message ?? null };
  } catch (error) {
    return { thrown: thrownText(error) };
  } finally {
    for (const [name, value] of savedEnv) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    restoreBackend();
    if (syncMode === "remote") need("testOverrideGetClient")(null);
  }
}

// A remote MemFS write: where the release's tool commits without pushing (its message says the harness syncs
// after the turn: 0.30.28 to 0.33.2) it is served as it is (null: no push). 0.25.x's tool pushes pending commits
// and its own commit to `origin` (and replays on newer remote memory); it is served only when every URL origin
// fetches from and pushes to is a local path (a bare repository, as upstream's own tests set up), under
// GIT_ALLOW_PROTOCOL=file (the URLs, returned). With no origin the tool would add the MemFS server's, and another
// URL is a network remote: unsupported.
function remoteWriteServed(memoryDir) {
  const text = readFileSync(bundlePath, "utf8");
  const section =
    moduleSection(text, "src/tools/impl/memory.ts") ?? moduleSection(text, "src/tools/impl/Memory.ts") ?? "";
  if (section.includes("harness will sync after the turn")) return null;
  const urls = [];
  for (const push of [[], ["--push"]]) {
    const done = spawnSync("git", ["remote", "get-url", "--all", ...push, "origin"], { cwd: memoryDir, encoding: "utf8" });
    if (done.status !== 0) urls.push("(none: the tool adds the MemFS server's)");
    else urls.push(...done.stdout.split("\n").map((url) => url.trim()).filter(Boolean));
  }
  const network = urls.filter((url) => !/^(\/|file:\/\/\/)/.test(url));
  if (network.length > 0) {
    const version = packageVersion() ?? "unknown version";
    throw new Unsupported(
      `letta-code ${version}'s memory tool pushes under a remote MemFS backend (commitAndSyncMemoryWrite) to ` +
        `origin ${network[0]}: the driver serves it only with a local origin (a path), never over the network`,
    );
  }
  return urls;
}

// --- memory_reminder: upstream's post-turn memory sync of a local memory repository ----------------
// runPostTurnMemorySync (src/reminders/memory-git-sync.ts, 0.30.28+) takes an agent id and finds its memory
// directory as a local-backend agent's: getScopedMemoryFilesystemRoot = <LETTA_LOCAL_BACKEND_DIR>/memfs/<id>/memory
// with LETTA_LOCAL_BACKEND_EXPERIMENTAL=1. The driver keeps one storage directory per process, links the request's
// memoryDir there under a fixed agent id, sets those two variables for the call and restores them after. The backend
// is set with upstream's own test hook to what its test of a local agent sets (`__testSetBackend({capabilities:
// {localMemfs: true, remoteMemfs: false}})`: `localOnly`, nothing pushed, no network) and restored after, so no
// other op's backend (memory_view's) decides it.
// Upstream's texts name the directory it resolved (the link); the answer names the request's memoryDir there.
const REMINDER_AGENT = "agent-conformance";
const REMINDER_SYMBOLS = [
  "runPostTurnMemorySync",
  "initMemoryGitSync",
  "syncPendingMemoryCommitsAfterTurn",
  "getBackend",
  "testSetBackend",
];
const LOCAL_AGENT_BACKEND = { capabilities: { localMemfs: true, remoteMemfs: false } };
let reminderStorage = null;

function reminderStorageDir() {
  if (!reminderStorage) {
    reminderStorage = mkdtempSync(join(tmpdir(), "conformance-reminder-"));
    process.once("exit", () => rmSync(reminderStorage, { recursive: true, force: true }));
  }
  return reminderStorage;
}

// Upstream's own dependency hooks (runPostTurnMemorySync's second argument; 0.30.28 takes none): the background
// repair worker (0.33.0 `repairConflict`, 0.33.3+ `repairMemory`) is a spawned subagent, so it is reported as not
// started and the reminder is formatMemoryPostTurnSyncReminder's. Everything else is upstream's: the operation lock
// (0.32.18+, a file in the git directory) and the attached shared-memory sync (0.31.12+; none without remote MemFS).
const REMINDER_HOOKS = { repairConflict: async () => false, repairMemory: async () => false };

async function withLocalAgentMemory(memoryDir, work, agentId = REMINDER_AGENT) {
  const storage = reminderStorageDir();
  const resolved = join(storage, "memfs", agentId, "memory");
  mkdirSync(dirname(resolved), { recursive: true });
  rmSync(resolved, { force: true });
  symlinkSync(memoryDir, resolved);
  // taken before the variables are set: a first getBackend() then makes the API backend, which constructs nothing
  // of the local backend's (a LocalBackend made here would need its module initialised)
  const savedBackend = need("getBackend")();
  const names = ["LETTA_LOCAL_BACKEND_EXPERIMENTAL", "LETTA_LOCAL_BACKEND_DIR", "LETTA_MEMORY_WORKER_SESSION"];
  const saved = Object.fromEntries(names.map((name) => [name, process.env[name]]));
  process.env.LETTA_LOCAL_BACKEND_EXPERIMENTAL = "1";
  process.env.LETTA_LOCAL_BACKEND_DIR = storage;
  delete process.env.LETTA_MEMORY_WORKER_SESSION;
  need("testSetBackend")(LOCAL_AGENT_BACKEND);
  try {
    return await work(resolved);
  } finally {
    need("testSetBackend")(savedBackend);
    for (const name of names) {
      if (saved[name] === undefined) delete process.env[name];
      else process.env[name] = saved[name];
    }
    rmSync(resolved, { force: true });
  }
}

async function memoryReminder(request) {
  const missing = REMINDER_SYMBOLS.filter((name) => typeof upstream[name] !== "function");
  if (missing.length > 0) {
    const version = packageVersion() ?? "(unknown version)";
    throw new Unsupported(`letta-code ${version} has no post-turn memory sync (src/reminders/memory-git-sync.ts: ${missing.join(", ")})`);
  }
  if (typeof request.memoryDir !== "string" || request.memoryDir === "") throw new Error("memory_reminder needs memoryDir");
  await need("initMemoryGitSync")(); // async from 0.34.6
  return withLocalAgentMemory(request.memoryDir, async (resolved) => {
    const marked = (text) => (typeof text === "string" ? text.replaceAll(resolved, request.memoryDir) : text);
    let result;
    try {
      result = await need("syncPendingMemoryCommitsAfterTurn")(REMINDER_AGENT);
    } catch (error) {
      return { thrown: marked(thrownText(error)) };
    }
    const reminders = [];
    const params = { agentId: REMINDER_AGENT, enqueueReminder: (text) => reminders.push(text) };
    await need("runPostTurnMemorySync")(params, REMINDER_HOOKS);
    if (reminders.length > 1) throw new Error(`the post-turn sync queued ${reminders.length} reminders`);
    return { syncStatus: result.status, syncSummary: marked(result.summary), reminder: marked(reminders[0] ?? null) };
  });
}

// --- a lifecycle turn's reminders: the client loop's reminder engine around LocalBackend's turn ----------------
// headless.ts (headless-bidirectional mode) builds the turn's reminders with buildSharedReminderParts, puts them
// before the user's content with prependReminderPartsToContent, sends the turn, and in its `finally` runs
// runPostTurnMemorySync, whose reminder enqueueMemoryGitSyncReminder queues into the same state for the next turn.
// The driver's glue, each an input the engine takes:
// - the agent is the one the open created (headless retrieves its agent once, at its start): id, name and
//   description; conversationId the current conversation's id; lastRunAt null ("Last message: No previous
//   messages"): LocalBackend reports the default conversation's time as last_run_completion, and buildAgentInfo
//   renders it with toLocaleString, in the runtime's locale and time zone (the matrix's locale variants change it);
//   null is what the engine takes for an agent with no run;
// - systemInfoReminderEnabled true (headless's default, no --no-system-info-reminder), skillSources [] and
//   workingDirectory the memory directory;
// - the state is the release's createSharedReminderState() with the session-level reminders marked sent
//   (SESSION_REMINDERS_SENT): session-context (the machine's device, git and cwd), secrets-info (the user's secret
//   store), mcp-servers-info (the user's MCP settings) and permission-mode (the CLI's permission flags) describe the
//   process and the machine, not the conversation; each still applies when what it reports changes mid-session;
// - runPostTurnMemorySync gets no `isEnabled` (headless asks the settings whether the agent's MemFS is enabled;
//   a LocalBackend opened with memfsEnabled always has it) and no emitWarning (a debug log);
// - the memory directory is found as for memory_reminder (withLocalAgentMemory: <storage>/memfs/<agentId>/memory,
//   a link to the session's memoryDir): the texts sent name memoryDir where upstream names the link, and the
//   observed texts write either `<memoryDir>`.
// An agent-free conversation (no agent to describe) gets no reminders, and neither does a release without the
// post-turn sync (0.25.x: their engine also reads the CLI's settings outside a try, and throws `Settings not
// initialized` without them).
// (A module's init exists where the bundler wraps it, as in every release bundle; a revision's lifecycle module, an
// ES module built from one entry, may have none: its modules run at load.)
const TURN_REMINDER_SYMBOLS = ["buildSharedReminderParts", "prependReminderPartsToContent", "createSharedReminderState"];
const POST_TURN_SYMBOLS = ["runPostTurnMemorySync", "enqueueMemoryGitSyncReminder", "getBackend", "testSetBackend"];

async function initIfWrapped(name) {
  if (typeof upstream[name] === "function" && !initialisedModules.has(name)) {
    await upstream[name]();
    initialisedModules.add(name);
  }
}

function hasSymbols(names) {
  return names.every((name) => typeof upstream[name] === "function");
}

function sessionLevelRemindersSent(state) {
  state.hasSentSessionContext = true;
  state.hasSentSecretsInfo = true;
  state.lastSentSecretNamesKey = "";
  state.hasSentMcpServersInfo = true;
  state.lastSentMcpServerNamesKey = "";
  state.lastNotifiedPermissionMode = upstream.permissionMode?.getMode?.() ?? null;
  return state;
}

function markMemoryDir(text, session, resolved) {
  return text.replaceAll(resolved, "<memoryDir>").replaceAll(session.memoryDir, "<memoryDir>");
}

async function turnReminders(session) {
  if (session.agentFree || !hasSymbols(TURN_REMINDER_SYMBOLS) || !hasSymbols(POST_TURN_SYMBOLS)) return null;
  await initIfWrapped("initReminderEngine");
  const entry = session.current;
  entry.reminderState ??= sessionLevelRemindersSent(need("createSharedReminderState")());
  return withLocalAgentMemory(
    session.memoryDir,
    async (resolved) => {
      const { parts, appliedReminderIds } = await need("buildSharedReminderParts")({
        mode: "headless-bidirectional",
        agent: { ...session.agentInfo, conversationId: session.conversationId },
        state: entry.reminderState,
        systemInfoReminderEnabled: true,
        workingDirectory: session.memoryDir,
        skillSources: [],
      });
      // The link is the driver's: what the model is sent names the session's memoryDir, as upstream names the memory
      // directory it resolved; what is observed writes it <memoryDir>.
      const sent = parts.map((part) => ({ ...part, text: part.text.replaceAll(resolved, session.memoryDir) }));
      const applied = appliedReminderIds.map((id, i) => ({ id, text: markMemoryDir(sent[i]?.text ?? "", session, resolved) }));
      return { parts: sent, applied };
    },
    session.agentId,
  );
}

async function postTurnSync(session, state) {
  if (!hasSymbols(POST_TURN_SYMBOLS)) return;
  await initIfWrapped("initMemoryGitSync"); // async from 0.34.6
  await withLocalAgentMemory(
    session.memoryDir,
    () =>
      need("runPostTurnMemorySync")(
        {
          conversationId: session.conversationId, // 0.34.x's headless passes it; earlier releases ignore it
          agentId: session.agentId,
          debugLabel: "Post-turn headless memory sync",
          enqueueReminder: (text) => need("enqueueMemoryGitSyncReminder")(state, { text }),
        },
        REMINDER_HOOKS,
      ),
    session.agentId,
  );
}

const PROTOCOL_VERSION = 1;
const HANDLERS = {
  hello: () => ({
    protocol: PROTOCOL_VERSION,
    capabilities: {
      ops: Object.keys(HANDLERS),
      // bundles hold the turn loop; a revision's compiler module alone does not (its lifecycle module does)
      lifecycle: lifecyclePath !== null || LIFECYCLE_SYMBOLS.every((name) => name in prepared.found),
      profiles: null,
    },
    info: {
      bun: typeof Bun !== "undefined" ? Bun.version : null,
      runtime: typeof Bun !== "undefined" ? "bun" : `node ${process.version}`,
      bundle: bundlePath,
      lifecycleModule: lifecyclePath,
      version: packageVersion(),
      symbols: prepared.found,
      missing: prepared.missing,
      importMs,
      collator: new Intl.Collator().resolvedOptions().locale,
      icu: process.versions.icu ?? null, // localeCompare's ICU (bun 1.4.5: 78.3, Unicode 17.0)
      unicode: process.versions.unicode ?? null,
    },
  }),
  skills_block: (request) => {
    const clientSkills = clientSkillsOf(request);
    if (!initialised) {
      need("initSystemPromptCompilation")();
      initialised = true;
    }
    return {
      block: need("compileAvailableSkillsBlock")(clientSkills),
      appended: need("appendAvailableSkillsBlock")(request.systemPrompt ?? "", clientSkills),
    };
  },
  compile: (request) => {
    try {
      const record = compile(request);
      if (request.clientSkills === undefined) return { record };
      return { record, systemPromptWithSkills: need("appendAvailableSkillsBlock")(record.content, clientSkillsOf(request)) };
    } catch (error) {
      if (String(error?.message ?? "").includes(" has no ")) throw error;
      return { thrown: thrownText(error) };
    }
  },
  lifecycle_open: (request) => lifecycleOpen(request),
  lifecycle_step: (request) => lifecycleStep(request),
  lifecycle_close: (request) => lifecycleClose(request),
  validate: (request) => validateStaged(request),
  memory_view: (request) => memoryView(request),
  memory_write: (request) => memoryWrite(request),
  memory_reminder: (request) => memoryReminder(request),
};

async function answer(line) {
  let request;
  try {
    request = JSON.parse(line);
  } catch (error) {
    return { id: null, ok: false, error: `request is not JSON: ${error.message}` };
  }
  if (request === null || typeof request !== "object" || Array.isArray(request)) {
    return { id: null, ok: false, error: "request is not a JSON object" };
  }
  const id = request.id ?? null;
  if (typeof request.op !== "string") return { id, ok: false, error: "request has no op (a string)" };
  const handler = Object.hasOwn(HANDLERS, request.op) ? HANDLERS[request.op] : null;
  if (!handler) return { id, ok: false, unsupported: `op ${JSON.stringify(request.op)}` };
  try {
    const result = await handler(request);
    const polluted = prototypeSnapshot() !== cleanSnapshot;
    if (!polluted) return { id, ok: true, ...result, polluted };
    let restored = false;
    try {
      restored = restoreWatched();
    } catch {
      // a getter or proxy left by upstream threw: not restored, so the driver exits below
    }
    return restored ? { id, ok: true, ...result, polluted, restored } : { id, ok: true, ...result, polluted };
  } catch (error) {
    if (error instanceof Unsupported) return { id, ok: false, unsupported: error.message };
    return { id, ok: false, error: String(error?.message ?? error) };
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
    const reply = await answer(line);
    process.stdout.write(`${JSON.stringify(reply)}\n`);
    if (reply.polluted && !reply.restored) process.exit(0);
  }
}
