"""Tests of encbench/studies/in_transit/."""
