"""Tests of encbench/profiles/."""
