"""History: one operation's value over stored runs, with change points (`cryptobench history`,
the report's `--history OP` figures; docs/gate.md "History").

A series is one (engine, target, parameters) cell across the runs that measured it. Its points are
ordered by the library's commit where every point's build recorded one (conditions.builds.<engine>
.library_commit, from `--library-source DIR@REF` or a plain DIR that is a git repository) and a
repository the runs recorded (library_repo, or the library_source folder) is reachable here and
holds them all: `git rev-list --topo-order` of those commits, ancestors first; runs of one commit
by time. Otherwise by the run's time, and the series says why (no commit; the repository gone;
runs from different repositories, named).

A change point is where the value stepped from the previous point:
* deterministic values (simulated cycles and time, stack bytes, code size: the same image gives the
  same number) step on any change at all;
* measured values step where `diff` would call the pair a regression or an improvement
  (analysis/diff.py: beyond --threshold and significant at --alpha), never on noise."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..core.errors import UsageError
from ..core.quantity import fmt_num
from ..core.table import Table, columns
from ..core.records import Cell, Run, place_of
from ..targets.mcu.firmware.library_ref import HASH_RX, git
from .diff import compare_pair

METRICS = {"cycles": "cycles", "time": "s", "stack": "B", "code-size": "B"}     # the values' units
HEADERS = {"cycles": "cycles", "time": "time (µs)", "stack": "stack (B)", "code-size": "code size (B)"}


@dataclass
class Point:
    run_id: int
    created: str
    version: str | None
    commit: str | None
    value: float
    deterministic: bool
    provenance: str
    cell: Cell = field(repr=False)
    change: float | None = None          # value / previous value - 1
    step: bool = False                   # a change point
    verdict: str = ""


@dataclass
class Series:
    engine: str
    target: str
    params: dict
    metric: str
    points: list[Point]
    order: str = "time"                  # "commit" or "time"
    why: str = "no-commit"               # the reason's kind: commit, no-commit, unreachable, repositories
    repos: list[str] = field(default_factory=list)     # the repositories the points' runs recorded
    repo: str | None = None              # the one whose commit order it is

    @property
    def order_why(self) -> str:
        return self.reason()

    def reason(self, data=str) -> str:
        """Why the series is in its order, repositories named by their last component (through
        `data`: the Markdown output makes them inert)."""
        names = [data(n) for n in short_names(self.repos)]
        if self.why == "commit":
            return f"commit order of {names[self.repos.index(self.repo)]}"
        if self.why == "no-commit":
            return "not every run recorded a library commit"
        if self.why == "repositories":
            return (f"the runs came from {len(names)} repositories ({', '.join(names)}), "
                    "and none of them here holds every run's commit")
        return f"the library's repository ({names[0] if names else 'not recorded'}) is not reachable here"

    @property
    def label(self) -> str:
        ps = " ".join(f"{k}={v}" for k, v in self.params.items())
        return " · ".join(x for x in (self.engine, self.target, ps) if x)


def metric_value(cell: Cell, metric: str) -> tuple[float | None, bool]:
    """(the cell's value of `metric`, whether it is deterministic); None where the cell has none."""
    r = cell.result
    if not cell.ok or r is None:
        return None, False
    simulated = cell.provenance == "simulated"
    if metric == "cycles":
        v = (r.cycles or {}).get("per_op_median")
        return (float(v) if v is not None and (r.cycles or {}).get("counter", "none") != "none" else None), simulated
    if metric == "time":
        t = r.reported_time()
        return (float(t[0]) if t else None), simulated
    if metric == "stack":
        return (float(r.stack_bytes) if r.stack_bytes is not None else None), True
    v = (r.code_size or {}).get("flash_bytes")
    return (float(v) if v is not None else None), True


def library_of(run: Run, engine: str) -> tuple[str | None, str | None, str | None]:
    """(version, commit, repository folder) of an engine as the run recorded it."""
    b = (run.conditions.get("builds") or {}).get(engine)
    if isinstance(b, dict):
        commit = b.get("library_commit") if HASH_RX.fullmatch(str(b.get("library_commit") or "")) else None
        return (str(b["library_version"]) if b.get("library_version") else None, commit,
                b.get("library_repo") or b.get("library_source"))
    e = (run.conditions.engines or {}).get(engine)
    return (str(e["version"]) if isinstance(e, dict) and e.get("version") else None), None, None


def matches(cell: Cell, op: str, params: dict[str, list[str]], engine: str | None, target: str | None) -> bool:
    if cell.op != op or (engine and cell.engine != engine):
        return False
    where = place_of(cell.target)[0]
    # sim:cortex-m0 takes the cells of every device profile of that core (sim:cortex-m0:stm32f030)
    if target and target not in (where, cell.target) and not where.startswith(target + ":"):
        return False
    given = cell.params.to_dict()
    return all(k in given and str(given[k]) in vs for k, vs in params.items())


def build_series(runs: list[Run], op: str, metric: str, params: dict | None = None, engine: str | None = None,
                 target: str | None = None, threshold: float = 0.05, alpha: float = 0.01) -> list[Series]:
    """Every series of `op` the runs hold (their cells loaded), ordered and with change points."""
    if metric not in METRICS:
        raise UsageError(f"--metric: expected one of {', '.join(METRICS)}; got {metric!r}")
    groups: dict[tuple, Series] = {}
    for run in runs:
        for c in run.cells:
            if not matches(c, op, params or {}, engine, target):
                continue
            value, det = metric_value(c, metric)
            if value is None:
                continue
            version, commit, repo = library_of(run, c.engine)
            key = (c.engine, place_of(c.target)[0], c.params.key)
            s = groups.setdefault(key, Series(c.engine, key[1], c.params.to_dict(), metric, []))
            if repo and str(repo) not in s.repos:
                s.repos.append(str(repo))
            s.points.append(Point(run.id, str(run.created or ""), version, commit, value, det, c.provenance, c))
    out = list(groups.values())
    for s in groups.values():
        order_points(s)
        mark_changes(s, threshold, alpha)
    return out


def order_points(s: Series) -> None:
    """By commit order where every point has a commit and one of the recorded repositories knows
    them all, else by time (s.why says which reason)."""
    by_time = lambda p: (p.created, p.run_id)           # noqa: E731
    commits = list(dict.fromkeys(p.commit for p in s.points if p.commit))
    s.order = "time"
    if not commits or any(p.commit is None for p in s.points):
        s.points.sort(key=by_time)
        s.why = "no-commit"
        return
    for repo in s.repos:
        rank = commit_order(commits, repo)
        if rank is not None:
            s.points.sort(key=lambda p: (rank[p.commit], *by_time(p)))
            s.order, s.why, s.repo = "commit", "commit", repo
            return
    s.points.sort(key=by_time)
    s.why = "repositories" if len(s.repos) > 1 else "unreachable"


def short_names(paths: list[str]) -> list[str]:
    """Each path by its last component, or as many last components as tell it from the others."""
    parts = [Path(p).parts or (p,) for p in paths]
    out = []
    for i, ps in enumerate(parts):
        n = 1
        while n < len(ps) and any(q[-n:] == ps[-n:] for j, q in enumerate(parts) if j != i):
            n += 1
        out.append("/".join(ps[-n:]).lstrip("/") or str(paths[i]))
    return out


def commit_order(commits: list[str], repo: str | None) -> dict[str, int] | None:
    """Each commit's place in `git rev-list --topo-order --reverse` of them all (ancestors first);
    None when the repository is gone or lacks one of them."""
    if not repo or not Path(repo).is_dir():
        return None
    listed = git(Path(repo), "rev-list", "--topo-order", "--reverse", *commits, "--", check=False)
    if listed is None:
        return None
    at = {c: i for i, c in enumerate(listed.split())}
    return {c: at[c] for c in commits} if all(c in at for c in commits) else None


def mark_changes(s: Series, threshold: float, alpha: float) -> None:
    """change vs the previous point, and whether it stepped (module docstring)."""
    for prev, p in zip(s.points, s.points[1:]):
        p.change = p.value / prev.value - 1 if prev.value else None
        if p.deterministic and prev.deterministic:
            p.step = p.value != prev.value
            p.verdict = "changed" if p.step else "same"
        else:                             # measured: diff's test of the pair's times decides
            row = compare_pair(prev.cell, p.cell, threshold, alpha)
            p.step = row["kind"] in ("regression", "improvement")
            p.verdict = row["verdict"]


def as_json(series: list[Series]) -> dict:
    return {"series": [{"engine": s.engine, "target": s.target, "params": s.params, "metric": s.metric,
                        "unit": METRICS[s.metric], "order": s.order, "order_why": s.order_why,
                        "points": [{"run_id": p.run_id, "created": p.created, "library_version": p.version,
                                    "library_commit": p.commit, "value": p.value, "provenance": p.provenance,
                                    "deterministic": p.deterministic, "change": p.change, "change_point": p.step,
                                    "verdict": p.verdict} for p in s.points]} for s in series]}


def _value_text(v: float, metric: str) -> str:
    if metric == "time":
        return fmt_num(v * 1e6)
    return f"{v:.0f}" if float(v).is_integer() else f"{v:.1f}"


def history_table(s: Series, data=str, cell=None) -> Table:
    """One series as a table: a row per run, in the series' order; a change point marked ◆ (and
    'step' in the style the terminal prints regressions in). Every text a run recorded (engine,
    target, parameters, date, version, commit, repository, provenance) passes through `data`
    (a table cell's through `cell`, default `data`): the Markdown output makes it inert."""
    cell = cell or data
    t = Table(f"{data(s.label)}: {s.metric}", columns(["run", "date", "library", "commit", HEADERS[s.metric],
                                                        "change", "step"], left=4), key=s.metric)
    for p in s.points:
        change = "" if p.change is None else f"{p.change * 100:+.2f} %"
        mark = ("◆ " + p.verdict) if p.step else p.verdict
        t.add([str(p.run_id), cell(p.created[:19]), cell(p.version or ""), cell((p.commit or "")[:12]),
               _value_text(p.value, s.metric), change, cell(mark)],
              [p.run_id, p.created, p.version, p.commit, p.value, p.change, p.step],
              style="regression" if p.step and (p.change or 0) > 0 else "improvement" if p.step else "")
    kind = "deterministic (any change steps)" if all(p.deterministic for p in s.points) else \
        "measured (a step is a significant change beyond the threshold, as diff tests it)"
    t.notes.append(f"ordered by {s.order}: {s.reason(data)}; {kind}; provenance "
                   + ", ".join(data(x) for x in sorted({p.provenance for p in s.points})))
    return t
