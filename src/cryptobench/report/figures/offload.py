"""`model offload RUN --figure`: time per operation vs payload length for the software engine and the
accelerator (polling, and with interrupt completion), the cells as points and the fitted lines of
models.offload_cells, the crossover marked where it lies on the axis (matplotlib's object API)."""
from __future__ import annotations

from ..series import engine_color
from .style import LABEL_PT, SMALL_PT, TITLE_PT, new_figure, style_axes, tag


def offload_figure(doc: dict):
    """The matplotlib Figure for a model offload document (cli/model_offload.py's JSON)."""
    fig = new_figure(4.8, 11.0)
    ax = fig.add_subplot()
    style_axes(ax)
    rows, bb = doc["rows"], doc["block_bytes"]
    xs = [r["bytes"] for r in rows]
    lo, hi = min(xs), max(xs)
    grid = [lo * (hi / lo) ** (i / 60) for i in range(61)] if lo > 0 and hi > lo else xs
    prov = "/".join(doc["time_provenance"])
    curves = [(doc["sw"], "sw", [r["sw_s"] for r in rows], 0.0, "-"),
              (doc["hw"] + " (polling)", "hw", [r["hw_polling_s"] for r in rows], 0.0, "-")]
    lat = doc["interrupt_latency"]
    if lat:
        curves.append((doc["hw"] + " (interrupt)", "hw", [r["hw_interrupt_s"] for r in rows], lat["seconds"], "--"))
    for label, role, ys, extra, style in curves:
        f = doc["fits"][role]
        color = engine_color(doc[role])
        ax.plot(xs, [y * 1e6 for y in ys], linestyle="none", marker="o" if style == "-" else "s", markersize=5,
                color=color, fillstyle="full" if style == "-" else "none", zorder=3,
                label=f"{label}: {prov} cells" + (" + latency" if extra else ""))
        ax.plot(grid, [(f["setup_s"] + extra + f["per_block_s"] * x / bb) * 1e6 for x in grid], linestyle=style,
                color=color, linewidth=1.2, zorder=2, label=f"{label}: fit (modeled)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("payload length (bytes)", fontsize=LABEL_PT)
    ax.set_ylabel("time per operation (µs)", fontsize=LABEL_PT)
    cx = doc["crossover"]
    if cx["status"] in ("from", "below") and cx["bytes_exact"] and lo <= cx["bytes_exact"] <= hi:
        ax.axvline(cx["bytes_exact"], color="#222222", linestyle=":", linewidth=1.4, zorder=1)
        ax.annotate(f"crossover {cx['bytes_exact']:.4g} B ({doc['completion']})", xy=(cx["bytes_exact"], 0.97),
                    xycoords=("data", "axes fraction"), xytext=(4, 0), textcoords="offset points",
                    fontsize=SMALL_PT, va="top")
    else:
        ax.text(0.01, 0.97, f"{doc['completion']}, modeled fit: {cx['text']}", transform=ax.transAxes,
                fontsize=SMALL_PT, va="top", wrap=True)
    ax.legend(fontsize=SMALL_PT, frameon=False, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0)
    tag(ax, [prov, "modeled"])
    c = doc["conditions"]
    clock = f" at {c['clock_hz'] / 1e6:g} MHz" if c.get("clock_hz") else ""
    fig.suptitle(f"{doc['op']}: {doc['hw']} vs {doc['sw']}, {c.get('device') or ''}{clock} (run {doc['run']})",
                 fontsize=TITLE_PT)
    return fig
