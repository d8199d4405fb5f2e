"""Tests of encbench/commands/."""
