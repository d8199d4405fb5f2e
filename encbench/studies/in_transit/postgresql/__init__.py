"""The in-transit study on a PostgreSQL server: one sandboxed PostgreSQL (or a user's,
`--target`), reached by pgbench over plain TCP and over TLS (new connections with -C, and
queries on persistent connections) and by psql's COPY, on loopback and at emulated
distances.  The study's face (in_transit/__init__.py) chooses it by the kind measured."""
