"""The replication study: what Galera's own TLS (socket.ssl_*) costs a write workload on a
2-node cluster whose nodes live on two emulated hosts, plain cluster against TLS cluster."""
