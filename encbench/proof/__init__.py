"""Proofs that an encrypted variant is encrypted and a plain one is not: files at rest, TLS
sessions in transit."""
