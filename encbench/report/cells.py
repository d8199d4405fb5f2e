"""What every study's part of the report shares: numbers as the tables print them, an
overhead with its interval, a sample's mean with its interval, and the machine's cores."""

from __future__ import annotations

from encbench.report.models import Estimate, Record, Sample


def fmt(x: float | None, digits: int = 2) -> str:
    return "–" if x is None else f"{x:,.{digits}f}"


def overhead_cell(comp: Estimate) -> str:
    ci = comp.overhead_ci_pct
    if not ci:
        return f"{comp.overhead_pct:+.1f}%"
    return f"{comp.overhead_pct:+.1f}% ({ci[0]:+.1f} … {ci[1]:+.1f})"


def sample_text(s: Sample | None, unit: str = "", digits: int = 2) -> str:
    """A variant's mean with its 95% interval: "1.25 s (1.10–1.40)"."""
    if s is None:
        return "–"
    unit = f" {unit}" if unit else ""
    if s.ci95 is None:
        return f"{fmt(s.mean, digits)}{unit}"
    return f"{fmt(s.mean, digits)}{unit} ({fmt(s.ci95[0], digits)}–{fmt(s.ci95[1], digits)})"


def cores_of(environment: Record | None) -> int:
    return int((environment or {}).get("cpu", {}).get("cores", 1))
