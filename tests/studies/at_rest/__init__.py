"""Tests of encbench/studies/at_rest/."""
