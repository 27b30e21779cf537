// letta-conformance upstream-tests: the bridge client every shim that forwards calls through the bridge's
// FIFOs shares (reference/upstream-tests/bridge-client.ts; docs/upstream-tests.md). Not a module of its own:
// upstream_select puts it before a shim's own text (shim.ts, memory-tool-shim.ts) when it writes the shim.
//
// The calls are synchronous, as upstream's are: one JSON line is written to the bridge's request FIFO
// ($CONFORMANCE_UPSTREAM_REQUESTS) and one answer line read from its answer FIFO
// ($CONFORMANCE_UPSTREAM_ANSWERS), with blocking reads. The bridge (harness/tools/upstream/bridge.py) holds
// the implementation's process for the whole run; each request names the revision's profile
// ($CONFORMANCE_UPSTREAM_PROFILE). Every call, with its request, answer and call site, is appended to
// $CONFORMANCE_UPSTREAM_LOG, which reference/upstream-tests/preload.ts marks at the start of each test.
//
// An answer `thrown` is thrown again (as the named error class when there is one); `unsupported` throws
// `conformance: not applicable: ...`; an error answer throws `conformance: the implementation under test
// failed: ...`.

import { appendFileSync as conformanceAppend, openSync, readSync, writeSync } from "node:fs";
import { relative as conformanceRelative } from "node:path";

type Answer = Record<string, any>;

const REQUESTS = process.env.CONFORMANCE_UPSTREAM_REQUESTS;
const ANSWERS = process.env.CONFORMANCE_UPSTREAM_ANSWERS;
const LOG = process.env.CONFORMANCE_UPSTREAM_LOG;
const PROFILE = process.env.CONFORMANCE_UPSTREAM_PROFILE; // the revision's profile, sent with every request

let channel: { write: number; read: number } | undefined;
let pending = Buffer.alloc(0);

function exchange(request: Record<string, unknown>): Answer {
  if (!REQUESTS || !ANSWERS) {
    throw new Error("conformance shim: no bridge (CONFORMANCE_UPSTREAM_REQUESTS / _ANSWERS are not set)");
  }
  if (!channel) channel = { write: openSync(REQUESTS, "w"), read: openSync(ANSWERS, "r") };
  const line = Buffer.from(`${JSON.stringify(request)}\n`, "utf8");
  for (let written = 0; written < line.length; ) {
    written += writeSync(channel.write, line, written, line.length - written);
  }
  const chunk = Buffer.alloc(1 << 16);
  for (;;) {
    const end = pending.indexOf(10);
    if (end >= 0) {
      const answer = pending.subarray(0, end).toString("utf8");
      pending = pending.subarray(end + 1);
      return JSON.parse(answer);
    }
    const read = readSync(channel.read, chunk, 0, chunk.length, null);
    if (read === 0) throw new Error("conformance shim: the bridge closed its answers");
    pending = Buffer.concat([pending, chunk.subarray(0, read)]);
  }
}

function callSite(): string | undefined {
  const frames = (new Error().stack ?? "").split("\n").slice(1);
  const frame = frames.find((f) => /\.(test|spec)\.[cm]?[jt]sx?:\d+/.test(f) || /_(test|spec)\.[cm]?[jt]sx?:\d+/.test(f));
  const found = frame?.match(/\(?([^\s()]+:\d+:\d+)\)?\s*$/);
  return found ? conformanceRelative(process.cwd(), found[1]) : undefined;
}

function log(entry: Record<string, unknown>): void {
  if (LOG) conformanceAppend(LOG, `${JSON.stringify(entry)}\n`);
}

function notApplicable(call: string, what: string, request?: Record<string, unknown>): never {
  log({ call, site: callSite(), request, notApplicable: what });
  throw new Error(`conformance: not applicable: ${what}`);
}

function ask(call: string, request: Record<string, unknown>): Answer {
  if (PROFILE) request.profile = PROFILE;
  const site = callSite();
  let answer: Answer;
  try {
    answer = exchange(request);
  } catch (error) {
    log({ call, site, request, bridgeError: String(error) });
    throw error;
  }
  log({ call, site, request, answer });
  if (answer.ok === false && typeof answer.unsupported === "string") {
    throw new Error(`conformance: not applicable: ${answer.unsupported}`);
  }
  if (answer.ok !== true) {
    throw new Error(`conformance: the implementation under test failed: ${answer.error ?? JSON.stringify(answer)}`);
  }
  if (typeof answer.thrown === "string") {
    const [name, ...rest] = answer.thrown.split(": ");
    const kind = (globalThis as Record<string, unknown>)[name ?? ""];
    const message = rest.length ? rest.join(": ") : answer.thrown;
    throw typeof kind === "function" && /Error$/.test(name ?? "")
      ? new (kind as ErrorConstructor)(message)
      : new Error(answer.thrown);
  }
  return answer;
}

