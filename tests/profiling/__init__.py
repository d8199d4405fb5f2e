"""Tests of encbench/profiling/."""
