"""The data-in-transit study: one sandboxed server, reached over plain TCP and over TLS or a
tunnel."""
