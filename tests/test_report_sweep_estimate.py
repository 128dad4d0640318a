"""The duration sweep figures draw the number the tables print: a cell's estimate (p1, with its
repeat interval) where it has one, not the median; the axis and caption name the estimator."""
from cryptobench.report.figures import build_figures
from cryptobench.report.series import sweep_groups
from test_report_figures import _store, _timed

LENGTHS = [16, 256, 4096]


def _with_estimate(cell: dict, factor: float = 0.9) -> dict:
    """The cell with an estimate (p1) below its median, as a host run sampled in rounds stores it."""
    median = cell["result"]["time_s"]["median"]
    value = median * factor
    cell["result"]["estimate"] = {"value": value, "ci95": [value * 0.98, value * 1.03], "estimator": "p1"}
    return cell


def _run(tmp_path, estimate=True):
    cells = [_timed("sha256", e, {"bytes": n}, t * (1 + n / 1000)) for e, t in (("openssl-hw", 1e-6),
                                                                                ("openssl-sw", 3e-6))
             for n in LENGTHS]
    if estimate:
        cells = [_with_estimate(c) for c in cells]
    return _store(tmp_path / "r.sqlite", cells, baseline="openssl-sw")


def test_sweep_points_are_the_printed_estimate(tmp_path):
    run = _run(tmp_path)
    (g,) = [g for g in sweep_groups([run], "time") if g.op == "sha256"]
    printed = {(c.engine, float(c.params["bytes"])): c.reported_time() for c in run.cells}
    assert g.estimators == {"p1"}
    for s in g.series:
        for p in s.points:
            value, (lo, hi), name = printed[(s.engine, p.x)]
            assert (p.y, p.lo, p.hi, p.estimator) == (value, lo, hi, name) == (value, lo, hi, "p1")
            median = next(c for c in run.cells if c.engine == s.engine and c.params["bytes"] == p.x).result.time_s["median"]
            assert p.y != median


def test_sweep_figure_draws_and_names_the_estimate(tmp_path):
    run = _run(tmp_path)
    fig = next(f for f in build_figures([run]) if f.kind == "duration")
    ax = fig.fig.axes[0]
    assert "p1" in ax.get_ylabel()
    assert "1st percentile (p1)" in fig.caption and "Median time" not in fig.caption
    assert "confidence interval of the printed estimate" in fig.caption
    unit_scale = {"ns": 1e9, "µs": 1e6, "ms": 1e3, "s": 1.0}[ax.get_ylabel().rsplit("(", 1)[1].rstrip(")")]
    drawn = {line.get_label(): list(line.get_ydata()) for line in ax.get_lines()}
    for engine in ("openssl-hw", "openssl-sw"):
        cells = sorted((c for c in run.cells if c.engine == engine), key=lambda c: c.params["bytes"])
        want = [c.reported_time()[0] * unit_scale for c in cells]
        assert drawn[engine] == want


def test_cells_without_an_estimate_draw_and_name_the_median(tmp_path):
    run = _run(tmp_path, estimate=False)
    (g,) = [g for g in sweep_groups([run], "time") if g.op == "sha256"]
    assert g.estimators == {"median"}
    assert all(p.y == next(c for c in run.cells if c.engine == s.engine and c.params["bytes"] == p.x)
               .result.time_s["median"] for s in g.series for p in s.points)
    fig = next(f for f in build_figures([run]) if f.kind == "duration")
    assert "median" in fig.fig.axes[0].get_ylabel() and "confidence interval of the median" in fig.caption
