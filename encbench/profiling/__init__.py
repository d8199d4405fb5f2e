"""Where the server's CPU goes: `perf record` of a sandboxed mariadbd around one extra paired
run per cell (`perf`), and `perf report` parsed into function groups (`groups`)."""

# Per results directory: the probe's verdict, the cipher core's calibration and, per cell,
# each variant's CPU by function group (studies/at_rest/cpu_profile.py writes it, the report
# reads it).
PROFILE_FILE = "at-rest-profile.json"
