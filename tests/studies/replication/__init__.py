"""Tests of encbench/studies/replication/."""
