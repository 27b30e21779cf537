// letta-conformance upstream-tests: marks the start of each test in the shim's call log
// ($CONFORMANCE_UPSTREAM_LOG), so that the harness can tell which test made which forwarded call
// (the n-th mark is the n-th test bun ran; docs/upstream-tests.md). Loaded with `bun test --preload` in
// the shim run only, after upstream's own bunfig.toml preloads; the control run has no preload of ours.

import { beforeEach } from "bun:test";
import { appendFileSync } from "node:fs";

const LOG = process.env.CONFORMANCE_UPSTREAM_LOG;
let started = 0;

beforeEach(() => {
  started += 1;
  if (LOG) appendFileSync(LOG, `${JSON.stringify({ test: started })}\n`);
});
