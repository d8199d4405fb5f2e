"""Prometheus's HTTP API, read only: instant and range queries (/api/v1/query, /query_range)
over plain HTTP(S), with the credentials a Prometheus behind basic auth or a bearer token
needs taken from the environment or a file, never from argv (where any user of the machine
reads them).

  ENCBENCH_PROMETHEUS_TOKEN                             a bearer token, or
  ENCBENCH_PROMETHEUS_USER and ENCBENCH_PROMETHEUS_PASSWORD   basic auth

in the environment, or the same NAME=VALUE lines in the file --prometheus-credentials names.
"""

from __future__ import annotations

import base64
import json
import re
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from encbench.errors import BadInput, EncbenchError

TOKEN = "ENCBENCH_PROMETHEUS_TOKEN"
USER = "ENCBENCH_PROMETHEUS_USER"
PASSWORD = "ENCBENCH_PROMETHEUS_PASSWORD"
NAMES = (TOKEN, USER, PASSWORD)
TIMEOUT_S = 120.0  # one query over a fleet's week may take Prometheus a while
CREDENTIALS_FIX = (
    f"set {TOKEN}, or {USER} and {PASSWORD}, in the environment or in the file "
    "--prometheus-credentials names"
)


class PrometheusError(EncbenchError):
    """Prometheus answered, but not with a result (it names why)."""


def check_url(url: str) -> str:
    """An http(s) URL of a Prometheus, without credentials in it (they would be in argv);
    the URL without a trailing slash."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise BadInput(
            f"--prometheus {url!r}: give Prometheus's address as http://HOST:PORT "
            "(or https://, with a path prefix where it has one)"
        )
    if parts.username or parts.password:
        raise BadInput(
            "--prometheus: credentials in the URL would be in this command's argv, which "
            f"every user of the machine can read: {CREDENTIALS_FIX}"
        )
    return url.rstrip("/")


def _read_file(path: Path) -> dict[str, str]:
    try:
        text = path.read_text()
    except OSError as exc:
        raise BadInput(
            f"--prometheus-credentials {path}: cannot read it ({exc.strerror or exc}): give "
            f"a readable file of {TOKEN}=… or {USER}=… and {PASSWORD}=… lines"
        ) from None
    found = {}
    for number, line in enumerate(text.splitlines(), start=1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        name, sep, value = line.partition("=")
        if not sep or name.strip() not in NAMES:
            raise BadInput(
                f"--prometheus-credentials {path}, line {number}: expected NAME=VALUE with "
                f"NAME one of {', '.join(NAMES)}"
            )
        found[name.strip()] = value.strip()
    return found


def authorization(environ: Mapping[str, str], path: Path | None) -> str | None:
    """The Authorization header's value, from the file where one is given, else the
    environment; None where neither has credentials (a Prometheus without auth)."""
    given = _read_file(path) if path is not None else {k: environ[k] for k in NAMES if k in environ}
    token, user, password = (given.get(name) for name in NAMES)
    if token and (user or password):
        raise BadInput(f"give {TOKEN}, or {USER} and {PASSWORD}, not both kinds of credential")
    if token:
        return f"Bearer {token}"
    if bool(user) != bool(password):
        raise BadInput(f"basic auth needs both {USER} and {PASSWORD}: set the one missing")
    if user and password:
        pair = base64.b64encode(f"{user}:{password}".encode()).decode()
        return f"Basic {pair}"
    return None


@dataclass(frozen=True)
class Sample:
    """One series of an instant query's answer: its labels and its value."""

    labels: dict[str, str]
    value: float


@dataclass(frozen=True)
class Series:
    """One series of a range query's answer: its labels and its (time, value) points."""

    labels: dict[str, str]
    points: list[tuple[float, float]]


@dataclass(frozen=True)
class Prometheus:
    url: str
    auth: str | None = None
    timeout_s: float = TIMEOUT_S

    def query(self, promql: str, at: float) -> list[Sample]:
        """An instant query at `at` (Unix seconds): its vector."""
        result = self._ask("query", {"query": promql, "time": f"{at:.3f}"}, "vector")
        return [
            Sample(labels=dict(s.get("metric", {})), value=float(s["value"][1]))
            for s in result.get("result", [])
        ]

    def query_range(self, promql: str, start: float, end: float, step_s: float) -> list[Series]:
        """A range query (/api/v1/query_range) from `start` to `end` every `step_s`: its
        matrix, each series' points in time order."""
        fields = {"query": promql, "start": f"{start:.3f}", "end": f"{end:.3f}"}
        result = self._ask("query_range", fields | {"step": f"{step_s:g}"}, "matrix")
        return [
            Series(
                labels=dict(s.get("metric", {})),
                points=[(float(t), float(v)) for t, v in s.get("values", [])],
            )
            for s in result.get("result", [])
        ]

    def _ask(self, endpoint: str, fields: dict[str, str], kind: str) -> dict[str, Any]:
        promql = fields["query"]
        body = urllib.parse.urlencode(fields).encode()
        request = urllib.request.Request(f"{self.url}/api/v1/{endpoint}", data=body, method="POST")
        request.add_header("Content-Type", "application/x-www-form-urlencoded")
        if self.auth:
            request.add_header("Authorization", self.auth)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as answer:
                data = json.load(answer)
        except urllib.error.HTTPError as exc:
            raise self._refused(exc, promql) from None
        except (urllib.error.URLError, TimeoutError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise BadInput(
                f"--prometheus {self.url}: no answer ({reason}): check the address and "
                "that Prometheus is up (its /-/ready says so)"
            ) from None
        except ValueError:
            raise BadInput(
                f"--prometheus {self.url}: the answer is not Prometheus's JSON: give the "
                "address of Prometheus's HTTP API (http://HOST:9090)"
            ) from None
        result: dict[str, Any] = data.get("data", {})
        if data.get("status") != "success" or result.get("resultType") != kind:
            raise PrometheusError(f"Prometheus answered {promql!r} with {data!r:.300}")
        return result

    def _refused(self, exc: urllib.error.HTTPError, promql: str) -> EncbenchError:
        if exc.code in (401, 403):
            return BadInput(
                f"--prometheus {self.url} refused the query (HTTP {exc.code}): {CREDENTIALS_FIX}"
            )
        try:
            said = str(json.loads(exc.read()).get("error", ""))
        except (ValueError, OSError):
            said = ""
        if "too many samples" in said:
            return BadInput(
                f"Prometheus refused a query ({said}): it holds every series' every --step "
                "window at once; give a longer --step or a shorter --since, narrow --match, "
                "or raise Prometheus's --query.max-samples (default 50000000)"
            )
        if "timed out" in said or exc.code == 503:
            return BadInput(
                f"Prometheus gave up on a query ({said or exc.reason}): give a longer --step "
                "or a shorter --since, narrow --match, or raise Prometheus's --query.timeout "
                "(default 2m)"
            )
        if exc.code == 400 and said:
            return BadInput(f"Prometheus refused the query ({said}): check --match's selector")
        return PrometheusError(
            f"--prometheus {self.url}: HTTP {exc.code} on {promql!r:.120}: {said or exc.reason}"
        )


DURATION = re.compile(r"^(\d+)(ms|s|m|h|d|w|y)$")
SECONDS_IN = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800, "y": 31536000}


def duration_s(text: str, option: str) -> float:
    """A Prometheus duration of one unit (30s, 5m, 7d) in seconds."""
    found = DURATION.match(text.strip())
    if not found or int(found.group(1)) == 0:
        raise BadInput(
            f"{option} {text!r}: give a Prometheus duration of one unit, e.g. 30s, 5m, 2h, 7d"
        )
    return int(found.group(1)) * SECONDS_IN[found.group(2)]


def label_matchers(selector: str | None) -> str:
    """--match's `{label="value",…}` as the matchers to put inside each series' braces."""
    if selector is None:
        return ""
    text = selector.strip()
    if not (text.startswith("{") and text.endswith("}")) or not text[1:-1].strip():
        raise BadInput(
            f"--match {selector!r}: give a label selector in braces, e.g. "
            '\'{job="mysql",env="prod"}\''
        )
    return text[1:-1].strip().rstrip(",")
