"""Studies: what to measure, in which order, and when to stop."""
