"""Tests of encbench/servers/postgresql/."""
