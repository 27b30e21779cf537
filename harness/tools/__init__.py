"""Tools built on the engine: fuzzing, reduction, the release matrix, drift, the gate, bisection, mutation
testing, the determinism check, sharding and add-case. Each is a library; its command lives in harness.cli."""
