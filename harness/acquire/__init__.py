"""Getting references: the reference manifest, pinned releases from npm and PyPI with their checks, bun, the
transpiler cache, and upstream revisions built from source; what runners/ starts, before anything runs."""
