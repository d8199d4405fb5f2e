"""Where the server's CPU goes: `perf record` of a sandboxed server around one extra paired
run per cell (`perf`); `perf report` is parsed into function groups by the server's kind
(MariaDB's: servers/mariadb/cpu_groups.py)."""

# Per results directory: the probe's verdict, the cipher core's calibration and, per cell,
# each variant's CPU by function group (studies/at_rest/cpu_profile.py writes it, the report
# reads it).
PROFILE_FILE = "at-rest-profile.json"
