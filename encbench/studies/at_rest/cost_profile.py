"""Where the cost goes: the CPU profile of one extra paired run per cell (at-rest-profile.json,
written by studies/at_rest/cpu_profile.py) as extra µs per transaction and per cipher page by
function group, encrypted minus plain, beside the cipher's floor.

One profiled run per variant is one sample: the groups' sizes carry the run's noise (the
sample counts are shown), unlike the paired rounds' intervals.  Where perf could not sample,
the section says why instead.
"""

from __future__ import annotations

from encbench.report.models import Record
from encbench.servers.mariadb import cpu_groups as groups
from encbench.studies.at_rest.models import CostProfile
from encbench.studies.at_rest.records import CellKey


def cost_profile(profile_json: Record | None, cell: CellKey) -> CostProfile | None:
    if not profile_json:
        return None
    if profile_json.get("unavailable"):
        return CostProfile(unavailable=str(profile_json["unavailable"]))
    entry = (profile_json.get("cells") or {}).get(cell.slug)
    if entry is None:
        return None
    if entry.get("error"):
        return CostProfile(unavailable=f"the profiled run failed: {entry['error']}")
    enc, plain = entry["variants"]["encrypted"], entry["variants"]["plain"]
    pages = (enc["pages_decrypted"] + enc["pages_encrypted"]) / enc["transactions"]
    b = groups.breakdown(
        enc["ns_by_group"], enc["transactions"], plain["ns_by_group"], plain["transactions"], pages
    )
    return CostProfile(
        seconds=int(profile_json.get("seconds", 0)),
        samples=(int(plain["samples"]), int(enc["samples"])),
        pages_per_txn=pages,
        extra_us_per_txn=b.extra_us_per_txn,
        extra_us_per_page=b.per_page(),
        words=groups.in_words(b),
        reports=(str(plain["report"]), str(enc["report"])),
    )
