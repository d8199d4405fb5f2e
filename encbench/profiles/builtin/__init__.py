"""The built-in profiles, one TOML file each (`encbench profiles` lists them)."""
