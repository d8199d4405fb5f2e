"""Tests of encbench/studies/state_transfer/."""
