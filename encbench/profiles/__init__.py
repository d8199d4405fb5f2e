"""Profiles: what a study measures, read from TOML (profile.py), the settings every section shares
(options.py), the command line's settings in sysbench's words (overrides.py), the built-in
profiles (builtin/) and their measured times (measured_runs.toml)."""
