"""The bottom layer: the records everything else passes around (cases, results, repository models, versions)
and the small rules over them (repo specs, listings, locations, plurals, suggestions, stopping); imports no
other folder of the harness."""
