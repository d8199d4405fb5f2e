"""Tests of encbench/workloads/."""
