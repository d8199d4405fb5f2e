"""Tests of encbench/benchmarks/."""
