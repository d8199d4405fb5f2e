"""Tests of encbench/kinds/."""
