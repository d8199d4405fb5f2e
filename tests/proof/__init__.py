"""Tests of encbench/proof/."""
