"""Tests of encbench/servers/."""
