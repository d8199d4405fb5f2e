"""The data-at-rest study: a plain and an encrypted sandboxed server, identical but for
encryption."""
