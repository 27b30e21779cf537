"""Running a corpus: the session (implementations started once, each case run and judged), scheduling by
reference, lifecycle replay, capabilities, expectations (read and written) and the pool of port processes."""
