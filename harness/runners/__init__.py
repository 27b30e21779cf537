"""Implementations behind one interface (base.Runner): the in-process Python port, a bun or node reference
process, any command speaking the JSON-lines protocol; which runner and profile serve a reference
(references); and where letta-code releases and bun come from (releases)."""
