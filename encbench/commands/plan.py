"""`encbench plan`: what a run of a profile would measure and how long it would take,
printed; nothing is created or started (a target is only read).

The time estimate adds, per cell, how long the engine lets it run: a cell stops when its
time budget would be overrun (estimates.stop_reason), or earlier at its maximum rounds;
a round is taken as two runs of run_s and their overhead each (durations.RUN_OVERHEAD_S), and
both warm-ups are added.  A cell that reaches its target
half-width stops earlier still, which no plan can know: the estimate is what the budgets
allow.  Outside the cells, a study that loads its servers' tables adds an estimate of that
(Here.setup_s: durations.LOAD_S_PER_MILLION_ROWS); other set-up (starting a cluster,
installing a donor's data) is not counted."""

from __future__ import annotations

from dataclasses import dataclass

from encbench import studies
from encbench.profiles.durations import cell_seconds, duration
from encbench.profiles.profile import Profile
from encbench.servers import server_kind, ways
from encbench.servers.grants import NOTHING
from encbench.servers.mariadb import installs
from encbench.studies.definition import StudyDefinition


@dataclass(frozen=True)
class StudyPlan:
    study: StudyDefinition
    cells: list[str]
    cells_s: list[float]  # the bound of each cell's time, in the order of `cells`
    left_out: str | None  # why this machine (or a target) would leave it out
    setup_s: float = 0.0  # making and loading its servers, outside its cells

    @property
    def measuring_s(self) -> float:
        """Its cells' time, wherever it would run."""
        return sum(self.cells_s)

    @property
    def whole_s(self) -> float:
        """Its cells and its set-up, wherever it would run."""
        return self.measuring_s + self.setup_s

    @property
    def total_s(self) -> float:
        return 0.0 if self.left_out else self.whole_s

    def cell_words(self) -> str:
        """ "4 cells × about 1 min 30 s", or, where some cells have a budget of their own,
        "4 cells of about 1 min 30 s to 7 min 00 s"."""
        low, high = min(self.cells_s, default=0.0), max(self.cells_s, default=0.0)
        if low == high:
            return f"{len(self.cells)} cells × about {duration(low)}"
        return f"{len(self.cells)} cells of about {duration(low)} to {duration(high)}"


def study_plans(profile: Profile) -> list[StudyPlan]:
    why = studies.left_out(profile, studies.unavailable_studies(profile))
    out = []
    for s in studies.named(profile):
        rule = s.rule(profile)
        cells = s.cells(profile)
        out.append(
            StudyPlan(
                study=s,
                cells=_labels(profile, s),
                cells_s=[cell_seconds(rule.for_cell(c), rule.planned_rounds(c)) for c in cells],
                left_out=why.get(s.name),
                setup_s=s.here.setup_s(profile),
            )
        )
    return out


def _labels(profile: Profile, s: StudyDefinition) -> list[str]:
    """Each cell's label; where the study measures several kinds, first the kind of server
    it measures ("PostgreSQL: ..."), so that one list of both kinds' cells tells them apart.
    Only the plan says it: records and the report keep the labels they always had."""
    found = s.kinds_cells(profile)
    if len({kind for kind, _ in found}) < 2:
        return [c.label for _, c in found]
    return [f"{_title(profile, s, kind)}: {c.label}" for kind, c in found]


def _title(profile: Profile, s: StudyDefinition, kind: str) -> str:
    """A kind as people read it; its first kind's as the install's family where the profile
    runs a private root of it (MySQL's cells are the mariadb kind's)."""
    install = profile.server.install
    if kind == s.kinds[0] and s.install_families and install != installs.SYSTEM:
        return installs.family_of(install)
    return server_kind.named(kind).title


def _rounds_words(profile: Profile, s: StudyDefinition) -> str:
    rule = s.rule(profile)
    warm = f", {rule.warmup_s} s warm-up" if rule.warmup_s else ""
    run = f"{rule.run_s} s runs" if rule.warmup_s else f"runs of about {rule.run_s} s"
    budgets = sorted({rule.for_cell(c).cell_budget_s for c in s.cells(profile)})
    budget = (
        f"its {budgets[0]:g} s budget"
        if len(budgets) <= 1
        else f"its budget ({', '.join(f'{b:g}' for b in budgets)} s: each cell's below)"
    )
    if rule.min_rounds == rule.max_rounds:
        return (
            f"{rule.min_rounds} paired rounds a cell ({run}{warm}), or fewer if {budget} ends first"
        )
    return (
        f"{rule.min_rounds}–{rule.max_rounds} paired rounds a cell ({run}{warm}), until "
        f"±{rule.target_halfwidth_pct:g}% or {budget}"
    )


def _needs_words(profile: Profile, s: StudyDefinition) -> str:
    """What the study takes of this host while it runs: the data its servers write under the
    results directory, the memory they need at once (the figures `run` checks), and root."""
    need_mb, what = s.here.memory_mb(profile)
    what = what.split("; use ", 1)[0]  # the rest is the fix a refusal would give
    words = (
        f"needs here: about {s.here.disk_bytes(profile) / 2**30:.1f} GiB of disk under the results "
        f"directory, about {need_mb:,} MB of memory ({what})"
    )
    root = s.here.root(profile)
    if root is None:
        return words + "; no root"
    if root.without is None:
        return words + f"; root, for {root.what}"
    return words + f"; root for {root.what} (without it: {root.without} left out)"


def lines(profile: Profile) -> list[str]:
    plans = study_plans(profile)
    measured = [p for p in plans if not p.left_out]
    cells = sum(len(p.cells) for p in measured)
    total = sum(p.total_s for p in measured)
    loading = sum(p.setup_s for p in measured)
    out = [
        f"profile {profile.name}: {len(measured)} of {len(plans)} studies, {cells} cells, "
        f"about {duration(total - loading)} of measuring"
        + (f" and {duration(loading)} of loading servers" if loading else "")
    ]
    logged_in = True
    if profile.target is not None:
        needs = NOTHING
        for p in measured:
            use = p.study.target_use(profile)
            needs |= use.needs(profile) if use is not None else NOTHING
        target, logged_in = ways.of(profile.target.kind).target.plan_lines(
            profile.target, needs, profile.server.encryption_algorithm[0]
        )
        out += target
    for p in plans:
        s = p.study
        a, b = ("plain", "plain twin (A/A calibration)") if profile.calibration else s.variants
        if p.left_out:
            out.append(f"{s.name}: left out here — {p.left_out}")
            continue
        use = s.target_use(profile)
        if profile.target is not None and use is not None:
            out.append(f"{s.name}: {use.setup_words}")
        else:
            out.append(f"{s.name}: {s.setup_words}; {a} against {b}")
        out.append(f"  {p.cell_words()} = {duration(p.measuring_s)}; " + _rounds_words(profile, s))
        if p.setup_s:
            out.append(f"  and about {duration(p.setup_s)} making and loading its servers")
        out.append("  " + _needs_words(profile, s))
        if profile.target is not None and use is not None:
            # Its servers are the target's: here only the results directory.
            out.append("  creates on this host: only its results directory")
        elif s.here.creates:
            out.append(f"  creates on this host: {s.here.creates}")
        rule = s.rule(profile)
        own = {
            label: cell_rule.cell_budget_s
            for label, c in zip(p.cells, s.cells(profile), strict=True)
            if (cell_rule := rule.for_cell(c)).cell_budget_s != rule.cell_budget_s
        }
        out += [
            f"  cell {label}" + (f" (its own budget: {own[label]:g} s)" if label in own else "")
            for label in p.cells
        ]
        if logged_in:
            out += s.plan_lines(profile)
        # What the run leaves out of it here, the rest measured (doctor lists the same).
        for what, found in s.here.optional_cells(profile).items():
            missing = [c.problem() for c in found if not c.ok]
            if missing:
                out.append(f"  {what}: left out here — {'; '.join(missing)}")
    out.append(
        f"time: about {duration(total)} — each cell until its time budget or its maximum "
        "rounds, whichever comes first"
        + (
            ", and loading the servers' tables"
            if loading
            else "; set-up outside the cells (servers, data, clusters) not counted"
        )
    )
    return out
