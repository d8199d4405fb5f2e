"""Tests of encbench/results/."""
