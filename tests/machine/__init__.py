"""Tests of encbench/machine/."""
