"""Wrappers around the external load tools; one module per tool."""
