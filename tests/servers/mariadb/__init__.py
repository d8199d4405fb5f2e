"""Tests of encbench/servers/mariadb/."""
