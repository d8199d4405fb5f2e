"""Tests of encbench/studies/operations/."""
