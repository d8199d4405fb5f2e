"""The kinds of server encbench measures, one package each (kinds/kind.py says what a kind
is; kinds/server_kind.py lists them)."""
