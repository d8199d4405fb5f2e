"""The state-transfer study: what encrypting a Galera state snapshot transfer (SST) costs —
a full copy of a node's data to a joining node, by mariadb-backup over socat or by rsync,
plain against encrypted (socat's TLS, stunnel) — on a real 2- or 3-node cluster whose nodes live
each on its own emulated host."""
