"""A fleet's estimate from Prometheus: the same causes as `--target`, from the series the
first kind's exporter makes of each server's status counters and settings (which series:
the kind's part, estimate/kinds.py), and the host's CPU where node_exporter reports it.

Every reduction runs in Prometheus, grouped by instance, so that the answer for a thousand
instances over a week is a few dozen vectors of one value per instance, never their raw
samples.  Per counter, over the window cut into --step windows (a subquery `[SINCE:STEP]`
of `rate(X[STEP])`):

  mean    avg_over_time      the window's mean rate (its step windows with data)
  lowest  min_over_time      the quietest step window   } the interval, as --target's
  highest max_over_time      the busiest step window    } lowest and highest 10 s
  peak    quantile_over_time(0.95, …)   the 95th percentile of the step windows

rate() takes a counter that went back (a restart) as a reset, so no step window has a
negative or doubled rate; resets of its uptime say how many there were.  Where an instance's
series have fewer step windows than the window holds, its exporter stopped (or could not
reach the server) for part of it, and the estimate says so.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from encbench.estimate import kinds
from encbench.estimate.counters import Rates, Window
from encbench.estimate.model import Figure
from encbench.estimate.prometheus_api import Prometheus, Sample
from encbench.estimate.units import MIB

PEAK_QUANTILE = 0.95
PEAK_WORDS = "the 95th percentile of its --step windows"
PARALLEL = 4  # queries in flight at once: Prometheus spreads them over its cores

# The cause each estimate's rate comes from, by the field of Rates it reads.
CAUSE_FIELD = {
    "table_reads": "pages_read",
    "table_writes": "pages_written",
    "redo_log": "redo_bytes",
    "binary_log": "binlog_bytes",
    "tls_handshakes": "connections",
    "tls_bytes": "bytes",
}
MIB_FIELDS = frozenset({"redo_bytes", "binlog_bytes", "bytes"})
STATISTICS = {
    "mean": "avg_over_time",
    "low": "min_over_time",
    "high": "max_over_time",
    "peak": f"quantile_over_time({PEAK_QUANTILE},",
}


@dataclass(frozen=True)
class Asked:
    """What is asked: the window's end (Unix s), its length and its step (s), and the
    matchers every exporter's series is selected with."""

    end: float
    since_s: float
    step_s: float
    matchers: str = ""

    @property
    def steps(self) -> int:
        """The step windows the window holds."""
        return max(1, math.floor(self.since_s / self.step_s))


def _d(seconds: float) -> str:
    return f"{round(seconds * 1000)}ms" if seconds < 1 else f"{round(seconds)}s"


def _series(name: str, w: Asked) -> str:
    return f"{kinds.first().STATUS}{name}{{{w.matchers}}}"


def step_rate(field: str, w: Asked) -> str:
    """The field's rate over each step window, one series per exporter (the sum of its
    counters where it has two)."""
    series = kinds.first().SERIES[field]
    return " + ".join(f"rate({_series(n, w)}[{_d(w.step_s)}])" for n in series)


def over_window(statistic: str, inner: str, w: Asked) -> str:
    """A statistic of `inner` over the window's step windows (a subquery)."""
    function = STATISTICS[statistic]
    opening = f"{function}(" if not function.endswith(",") else f"{function} "
    return f"{opening}({inner})[{_d(w.since_s)}:{_d(w.step_s)}])"


def per_instance(statistic: str, field: str, w: Asked) -> str:
    """The field's statistic per instance.  Grouped by instance outside the subquery, not
    inside: inside, Prometheus groups every series at every step window (2,016 a week at
    5 min), which made each query 3–4 times slower; where one instance's series are
    scraped twice (two jobs), the busier's statistic is taken."""
    return f"max by (instance) ({over_window(statistic, step_rate(field, w), w)})"


def queries(w: Asked) -> dict[str, str]:
    """Every query the estimate asks of the first kind's series, by a name of its own."""
    first = kinds.first()
    found = {f"mean:{f}": per_instance("mean", f, w) for f in first.SERIES}
    for field in CAUSE_FIELD.values():
        for statistic in ("low", "high", "peak"):
            found[f"{statistic}:{field}"] = per_instance(statistic, field, w)
    since = _d(w.since_s)
    found["windows"] = (
        f"max by (instance) (count_over_time(({step_rate('connections', w)})"
        f"[{since}:{_d(w.step_s)}]))"
    )
    found["restarts"] = f"max by (instance) (resets({_series(first.UPTIME, w)}[{since}]))"
    found["unreachable"] = (
        f"max by (instance) (1 - min_over_time({first.UP}{{{w.matchers}}}[{since}]))"
    )
    for name in first.EXPORTED_VARIABLES:
        found[f"variable:{name}"] = (
            f"max by (instance) (last_over_time({first.VARIABLE_SERIES}{name}"
            f"{{{w.matchers}}}[{since}]))"
        )
    series, labels = first.VERSION
    found["version"] = (
        f"max by (instance, {', '.join(labels)}) "
        f"(last_over_time({series}{{{w.matchers}}}[{since}]))"
    )
    # The hosts' CPU (node_exporter), matched to the servers by host name: not by --match,
    # whose labels are the servers' exporters'.
    # Each CPU's rate over the whole window, not a subquery's per step: a subquery holds
    # every series' every step at once, and a fleet's CPUs × modes × 2,016 steps a week
    # (1,000 hosts of 16 CPUs: 226 M) pass Prometheus's --query.max-samples (50 M).
    found["host_busy"] = (
        f'sum by (instance) (rate(node_cpu_seconds_total{{mode!="idle"}}[{since}]))'
    )
    found["host_cores"] = (
        f'count by (instance) (last_over_time(node_cpu_seconds_total{{mode="idle"}}[{since}]))'
    )
    return found


def ask_all(prometheus: Prometheus, asked: Mapping[str, str], at: float) -> dict[str, list[Sample]]:
    """Every query at the window's end, a few at a time."""
    with ThreadPoolExecutor(max_workers=PARALLEL) as pool:
        answers = pool.map(lambda q: prometheus.query(q, at), asked.values())
        return dict(zip(asked, answers, strict=True))


def host_of(instance: str) -> str:
    """An instance label's host: `db1:9104` and node_exporter's `db1:9100` are one host."""
    if instance.startswith("["):  # [::1]:9104
        return instance.split("]", 1)[0] + "]"
    return instance.rsplit(":", 1)[0] if instance.count(":") == 1 else instance


@dataclass(frozen=True)
class Instance:
    """One server's answers, by the name of the query (instance → value)."""

    name: str
    values: dict[str, float]
    version: str
    host_busy: float | None
    host_cores: int | None


def by_instance(
    answers: Mapping[str, list[Sample]],
    version_of: Callable[[Mapping[str, str]], str] | None = None,
) -> list[Instance]:
    """The answers regrouped per server instance: every instance with any of its counters
    (`version_of`: its version's words from the version's labels; the first kind's)."""
    version_of = version_of or kinds.first().version_of
    values: dict[str, dict[str, float]] = {}
    versions: dict[str, str] = {}
    for key, samples in answers.items():
        for s in samples:
            instance = s.labels.get("instance", "")
            if key == "version":
                versions[instance] = version_of(s.labels)
            elif not key.startswith("host_") and math.isfinite(s.value):
                values.setdefault(instance, {})[key] = s.value
    hosts: dict[str, dict[str, float]] = {}
    for key in ("host_busy", "host_cores"):
        for s in answers.get(key, []):
            hosts.setdefault(host_of(s.labels.get("instance", "")), {})[key] = s.value
    found = []
    for name in sorted(values):
        host = hosts.get(host_of(name), {})
        cores = host.get("host_cores")
        found.append(
            Instance(
                name=name,
                values=values[name],
                version=versions.get(name, ""),
                host_busy=host.get("host_busy"),
                host_cores=int(cores) if cores else None,
            )
        )
    return found


def rates(instance: Instance, statistic: str) -> Rates | None:
    """The instance's rates by one statistic (mean or peak) as --target's Rates; None where
    a counter every server of the first kind has is missing (not a server's exporter)."""
    first = kinds.first()
    got: dict[str, float | None] = {}
    for field in first.SERIES:
        value = instance.values.get(f"{statistic}:{field}")
        if value is None and statistic != "mean":
            value = instance.values.get(f"mean:{field}")
        got[field] = None if value is None else max(value, 0.0)
    if any(got[f] is None for f in first.SERIES_REQUIRED):
        return None
    return Rates(
        seconds=1.0,
        pages_read=got["pages_read"] or 0.0,
        pages_written=got["pages_written"] or 0.0,
        buffer_pool_reads=None,
        redo_bytes=got["redo_bytes"],
        binlog_bytes=got["binlog_bytes"],
        connections=got["connections"] or 0.0,
        tls_handshakes=got["tls_handshakes"],
        bytes=got["bytes"] or 0.0,
        pages_decrypted=got["pages_decrypted"],
        pages_encrypted=got["pages_encrypted"],
    )


def cause_rates(instance: Instance, statistic: str) -> dict[str, Figure | None]:
    """Each cause's rate in the model's units (MiB for bytes): the statistic's value with the
    window's quietest and busiest step windows (the peak: the peak alone)."""
    found: dict[str, Figure | None] = {}
    for cause, field in CAUSE_FIELD.items():
        value, low, high = (instance.values.get(f"{s}:{field}") for s in (statistic, "low", "high"))
        if value is None and statistic != "mean":
            value = instance.values.get(f"mean:{field}")  # a series with no peak of its own
        if value is None:
            found[cause] = None
            continue
        scale = 1.0 / MIB if field in MIB_FIELDS else 1.0
        value = max(value, 0.0) * scale
        if statistic == "peak" or low is None or high is None:
            found[cause] = Figure(value=value, low=value, high=value)
        else:
            found[cause] = Figure(
                value=value, low=max(low, 0.0) * scale, high=max(high, 0.0) * scale
            )
    return found


def variables(instance: Instance) -> dict[str, str]:
    """Its settings in the words of the server's own, for the report's `encrypted now`."""
    first = kinds.first()
    values = {
        name: value
        for name in first.EXPORTED_VARIABLES
        if (value := instance.values.get(f"variable:{name}")) is not None
    }
    return first.exported_variables(values)


def gaps(instance: Instance, w: Asked, up: str | None = None) -> list[str]:
    """What the estimate says about the instance's window: a gap, restarts, no traffic.
    `up`: its exporter's series saying whether it reached the server (the first kind's
    unless given), as its queries name `unreachable`."""
    up = up or kinds.first().UP
    said = []
    windows = instance.values.get("windows", 0.0)
    if windows < w.steps:
        said.append(
            f"its exporter reported its counters in {windows:.0f} of the window's {w.steps} "
            "step windows (stopped, or not scraped, for the rest): the rates are those of the "
            "windows it reported"
        )
    unreachable = instance.values.get("unreachable", 0.0)
    if unreachable > 0:
        said.append(f"its exporter could not reach the server at times ({up} 0)")
    restarts = instance.values.get("restarts", 0.0)
    if restarts > 0:
        said.append(
            f"the server restarted {restarts:.0f} time(s) in the window (Uptime went back): "
            "rate() counts each counter from zero after it, so no rate is negative or doubled"
        )
    return said


def no_traffic(instance: Instance) -> bool:
    return all((instance.values.get(f"mean:{field}") or 0.0) <= 0 for field in CAUSE_FIELD.values())


def window_of(instance: Instance, w: Asked, started_at: str, cpu_words: str) -> Window:
    """The instance's window as --target's report reads it (its settings, one interval of
    its mean rates), so that `encrypted now` is the same code's."""
    mean = rates(instance, "mean")
    assert mean is not None
    return Window(
        started_at=started_at,
        seconds=w.since_s,
        variables=variables(instance),
        changed={},
        intervals=[mean.model_copy(update={"seconds": w.since_s})],
        missing=[],
        server_cpu=cpu_words,
        host_cores=instance.host_cores,
    )
