"""Cases: loading YAML scenarios into typed Scenarios (load, strict, checks, tags, yamlnodes, rules, inputs,
select) and writing them (write); imports only core."""
