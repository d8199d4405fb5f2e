"""Tests of encbench/report/."""
