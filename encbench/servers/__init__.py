"""Throwaway servers and the secrets they need: sandboxed MariaDB, keys, the variants."""
