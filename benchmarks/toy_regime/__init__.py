"""Is the toy in the paper's regime: each candidate toy world's three preconditions, measured by the
pipeline's own analyses (issue 59)."""
