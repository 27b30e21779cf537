"""Report files: report.json and reading it back (write), junit.xml (junit), index.html (html, templates/),
merging shard reports (merge), and the commands that reproduce a result (reproduce)."""
