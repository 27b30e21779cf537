"""Tools built on a run session: fuzzing (fuzz/), reduction, the release matrix, drift, the gate and bisection
(releases/), the upstream history (history/), upstream's own tests (upstream/), mutation testing, the
determinism check and add-case. Each is a library; its command lives in harness.cli."""
