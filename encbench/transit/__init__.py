"""Building blocks of the in-transit study: what TLS (and its alternatives, stunnel and an SSH
tunnel) costs connections, queries and bulk transfers, on loopback or between two emulated
hosts (network namespaces with a chosen round-trip time)."""
