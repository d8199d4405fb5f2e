"""Tests of encbench/estimate/."""
