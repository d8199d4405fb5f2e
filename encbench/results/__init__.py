"""What was measured: the record of one run (schema) and the results directory (store)."""
