"""Cases: loading YAML scenarios into typed Scenarios (load, checks, tags, yamlnodes) and writing them (write)."""
