"""PostgreSQL instances in `encbench estimate --prometheus`: the causes of pg_estimate.py
from postgres_exporter's series, reduced in Prometheus per instance as prometheus.py reduces
mysqld_exporter's (mean, quietest, busiest and 95th percentile step window), estimated with
PostgreSQL's units and shown in the same fleet table.

  blocks read     pg_stat_database_blks_read, summed over the databases
  blocks written  pg_stat_bgwriter_buffers_{checkpoint,clean,backend}_total
  sessions        pg_stat_database_sessions, summed over the databases (PostgreSQL 14+)

postgres_exporter (Debian 12's 0.11) exports no pg_stat_wal, so the WAL is not estimated
through it (`--target postgresql://` reads it); nor are bytes through TLS, which PostgreSQL
does not count.  The exporter holds one connection open: its scrapes add no sessions."""

from __future__ import annotations

import math
from collections.abc import Mapping

from encbench.estimate import model, pg_estimate, prometheus
from encbench.estimate.fleet import InstanceEstimate
from encbench.estimate.prometheus import Asked, Instance, _d, over_window
from encbench.estimate.prometheus_api import Sample
from encbench.estimate.rescale import Resolved

PREFIX = "pg:"  # the PostgreSQL queries' names among mysqld_exporter's
# Rates' fields (as pg_estimate keeps them), each the sum of these counters over every
# series of the instance (one per database).
SERIES: dict[str, tuple[str, ...]] = {
    "pages_read": ("pg_stat_database_blks_read",),
    "pages_written": (
        "pg_stat_bgwriter_buffers_checkpoint_total",
        "pg_stat_bgwriter_buffers_clean_total",
        "pg_stat_bgwriter_buffers_backend_total",
    ),
    "connections": ("pg_stat_database_sessions",),
}
CAUSE_FIELD = {
    "table_reads": "pages_read",
    "table_writes": "pages_written",
    "tls_handshakes": "connections",
}
NOT_EXPORTED = "postgres_exporter does not export it"


def step_rate(field: str, w: Asked, step: str | None = None) -> str:
    """The field's rate over each step window, one series per instance."""
    window = step or _d(w.step_s)
    parts = [f"sum by (instance) (rate({n}{{{w.matchers}}}[{window}]))" for n in SERIES[field]]
    return " + ".join(parts)


def queries(w: Asked) -> dict[str, str]:
    """Every PostgreSQL query, by its name (PREFIX and prometheus.py's names)."""
    since = _d(w.since_s)
    found = {f"mean:{f}": over_window("mean", step_rate(f, w), w) for f in SERIES}
    for field in SERIES:
        for statistic in ("low", "high", "peak"):
            found[f"{statistic}:{field}"] = over_window(statistic, step_rate(field, w), w)
    found["windows"] = f"count_over_time(({step_rate('pages_read', w)})[{since}:{_d(w.step_s)}])"
    found["unreachable"] = f"max by (instance) (1 - min_over_time(pg_up{{{w.matchers}}}[{since}]))"
    found["variable:ssl"] = (
        f"max by (instance) (last_over_time(pg_settings_ssl{{{w.matchers}}}[{since}]))"
    )
    found["version"] = (
        f"max by (instance, short_version) (last_over_time(pg_static{{{w.matchers}}}[{since}]))"
    )
    return {PREFIX + k: v for k, v in found.items()}


def _version(s: Sample) -> Sample:
    short = s.labels.get("short_version", "")
    return Sample(
        labels={"instance": s.labels.get("instance", ""), "version": f"PostgreSQL {short}"},
        value=s.value,
    )


def instances(answers: Mapping[str, list[Sample]]) -> list[Instance]:
    """The PostgreSQL instances among the answers (their hosts' CPU from node_exporter's,
    asked by prometheus.py)."""
    mine: dict[str, list[Sample]] = {
        k.removeprefix(PREFIX): v for k, v in answers.items() if k.startswith(PREFIX)
    }
    if "version" in mine:
        mine["version"] = [_version(s) for s in mine["version"]]
    for key in ("host_busy", "host_cores"):
        mine[key] = list(answers.get(key, []))
    return [i for i in prometheus.by_instance(mine) if any(f"mean:{f}" in i.values for f in SERIES)]


def cause_rates(i: Instance, statistic: str) -> dict[str, model.Figure | None]:
    """As prometheus.cause_rates, over PostgreSQL's fields."""
    found: dict[str, model.Figure | None] = dict.fromkeys(prometheus.CAUSE_FIELD)
    for cause, field in CAUSE_FIELD.items():
        value, low, high = (i.values.get(f"{s}:{field}") for s in (statistic, "low", "high"))
        if value is None and statistic != "mean":
            value = i.values.get(f"mean:{field}")
        if value is None or not math.isfinite(value):
            continue
        value = max(value, 0.0)
        if statistic == "peak" or low is None or high is None:
            found[cause] = model.Figure(value=value, low=value, high=value)
        else:
            found[cause] = model.Figure(value=value, low=max(low, 0.0), high=max(high, 0.0))
    return found


def _missing(e: model.Estimate) -> model.Estimate:
    """Each cause without a figure says why: not exported, or not counted by PostgreSQL."""
    why = {
        "redo_log": f"{NOT_EXPORTED} (pg_stat_wal; `--target postgresql://` reads it)",
        "tls_bytes": "PostgreSQL does not count bytes per connection",
    }
    causes = [c.model_copy(update={"missing": why[c.key]}) if c.key in why else c for c in e.causes]
    return pg_estimate.no_binary_log(e.model_copy(update={"causes": causes}))


def on_now(i: Instance) -> dict[str, str]:
    ssl = i.values.get("variable:ssl")
    variables = {} if ssl is None else {"ssl": "on" if ssl >= 1 else "off"}
    found = pg_estimate.on_now(variables)
    if ssl is not None and ssl >= 1:
        tls = "ssl = on (which connections use it: not exported)"
        found |= {"tls_handshakes": tls, "tls_bytes": tls}
    elif ssl is None:
        found |= {"tls_handshakes": "unknown (pg_settings_ssl not exported)"}
    found["table_reads"] = found["table_writes"] = found["redo_log"] = "unknown (below it)"
    return found


def instance_estimate(
    i: Instance, asked: Asked, units: Mapping[str, Resolved], scope: model.Scope
) -> InstanceEstimate:
    mine = pg_estimate.used_units(units)
    causes = pg_estimate.CAUSES
    mean = model.estimate_at(
        cause_rates(i, "mean"), asked.since_s, mine, scope, i.host_busy, kind_causes=causes
    )
    peak = model.estimate_at(
        cause_rates(i, "peak"), asked.step_s, mine, scope, None, kind_causes=causes
    )
    notes = prometheus.gaps(i, asked, up="pg_up")
    if all((i.values.get(f"mean:{f}") or 0.0) <= 0 for f in SERIES):
        notes.append("no traffic in the window: its counters did not move, nothing to pay")
    return InstanceEstimate(
        instance=i.name,
        server=i.version or "PostgreSQL",
        host_cores=i.host_cores,
        host_busy_cores=i.host_busy,
        mean=_missing(mean),
        peak=_missing(peak),
        on_now=on_now(i),
        notes=notes,
    )


def estimates(
    answers: Mapping[str, list[Sample]],
    asked: Asked,
    units: Mapping[str, Resolved],
    scope: model.Scope,
) -> list[InstanceEstimate]:
    return [instance_estimate(i, asked, units, scope) for i in instances(answers)]
