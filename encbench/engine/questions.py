"""Questions more than one study answers, each on its own server: the table and key under
which their cells stand side by side in the report (report/across.py).  Here, below the studies,
since no study imports another, and not in report/, which names no study's words."""

from __future__ import annotations

# What encryption at rest costs for the same workload, memory regime and client threads:
# MariaDB's TDE and its filesystem layer (the at-rest study), PostgreSQL's filesystem layer
# (the PostgreSQL at-rest study).
AT_REST_TABLE = "Throughput lost to encryption at rest (TPS), the same workload on each server"
AT_REST_KEY = ("workload", "regime", "client threads")
