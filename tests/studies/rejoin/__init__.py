"""Tests of encbench/studies/rejoin/."""
