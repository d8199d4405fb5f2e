"""`encbench estimate`: what encryption would cost a server at its own load, from its own
counters, with no load put on it.

Encryption's cost is driven by things a server already counts: pages read from disk (each
decrypted once), pages written (each encrypted once), redo and binary log bytes (scope
`all`), new connections (each a TLS handshake) and bytes sent and received (each through
the TLS record cipher).  This package multiplies those rates, read from the server's own
status counters over a window, by the cost of one unit of each, measured on this machine by
encbench's own studies, and says what the product amounts to:

- kinds.py: what differs by kind, given by the kind's package (`servers/<kind>/estimate.py`,
  through its ways): which counters and settings it reads, how it counts each cause, its
  exporter's series, its words;
- counters.py: the window — the server's status counters every 10 s and its settings at
  both ends, over one connection, and the server's CPU over ssh where the user allows it;
  kind_target.py: the same for a kind read one snapshot at a time;
- units.py: the unit costs, from a finished results directory's runs, kept in this
  machine's state beside the calibration;
- rescale.py: the cipher's part of each unit, re-measured with `openssl speed` on the
  server's host (or for the server's cipher) where it differs from this machine's;
- model.py: rates × units → extra CPU per cause, with intervals;
- validate.py: the same model held against measured runs of a results directory;
- report.py: the answer in words, Markdown and JSON;
- prometheus_api.py, prometheus.py: a fleet's counters from Prometheus instead
  (its exporters' series, reduced there by instance), as the same model's rates;
  kind_fleet.py: the instances of the kinds read from their own series;
- fleet.py: the fleet's answer, its instances ranked, in Markdown and JSON;
- rules.py: the same estimate as Prometheus recording rules, every kind's;
- command.py: what `encbench estimate` does, in order.
"""
