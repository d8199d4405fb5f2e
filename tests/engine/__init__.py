"""Tests of encbench/engine/."""
