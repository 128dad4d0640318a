"""Shared drawing helpers of the report's figures: the Figure record, sizes and colours, axes and
ticks, legends, caption fragments and figure ids (matplotlib's object API: no pyplot, no global state)."""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field

from matplotlib import ticker
from matplotlib.figure import Figure as MplFigure

from ..series import decades, slug

TITLE_PT, LABEL_PT, TICK_PT, SMALL_PT = 11, 10, 9, 9
WIDTH = 8.0                       # inches at 100 dpi: ~800 px
GRID = "#dddddd"
TAG_COLOR = "#555555"
SUPPLY_COLORS = ["#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3", "#937860", "#da8bc3", "#8c8c8c"]


@dataclass
class Figure:
    id: str                      # unique file stem, [a-z0-9-]
    kind: str                    # one of KINDS
    title: str
    caption: str                 # plain text
    provenance: list = field(default_factory=list)
    fig: MplFigure = None


# --- drawing helpers -----------------------------------------------------------------------------
def new_figure(height: float, width: float = WIDTH) -> MplFigure:
    return MplFigure(figsize=(width, height), dpi=100, layout="constrained")


def style_axes(ax) -> None:
    ax.grid(True, which="major", color=GRID, linewidth=0.6)
    ax.set_axisbelow(True)
    ax.tick_params(labelsize=TICK_PT)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)


def tag(ax, provs) -> None:
    """The provenance, small, in the axes' top-right corner (above the plotting area: it never hides data)."""
    ax.set_title(" · ".join(provs), loc="right", fontsize=SMALL_PT, color=TAG_COLOR, style="italic")


def _tick_text(v: float, _pos=None) -> str:
    if v == 0:
        return "0"
    if abs(v) >= 1e4:
        return f"{v:,.0f}"
    if abs(v) >= 1e-3:
        return f"{v:g}"
    return f"{v:.0e}"


def _len_tick(v: float, _pos=None) -> str:
    return str(int(round(v))) if abs(v - round(v)) < 1e-9 else f"{v:g}"


def _thin(xs: list[float], scale: str) -> list[float]:
    """The measured lengths as ticks, leaving out any too close to the previous one to be read."""
    if not xs:
        return xs
    pos = [x for x in xs if x > 0]

    def where(x):
        if scale == "linear":
            return x / (xs[-1] - xs[0] or 1.0)
        floor = min(pos) if pos else 1.0
        return math.log10(max(x, floor)) / 1.0 + (0.0 if x > 0 else -0.5)

    span = (where(xs[-1]) - where(xs[0])) or 1.0
    kept = [xs[0]]
    for x in xs[1:]:
        if (where(x) - where(kept[-1])) / span >= 0.045:
            kept.append(x)
        elif x == xs[-1]:
            kept[-1] = x                       # keep the longest length: it bounds the range
    return kept


def evenly_spaced(xs: list[float]) -> bool:
    """Whether the lengths are a linear sweep: at least 4 of them, one constant step (the Cifra AEAD
    study's 0…256 B in steps of 4), as opposed to a geometric one (16, 256, 4096 B) or a few chosen
    lengths (TI's 64, 8000, 16000 B)."""
    xs = sorted(set(xs))
    if len(xs) < 4:
        return False
    steps = [b - a for a, b in zip(xs, xs[1:])]
    return all(math.isclose(s, steps[0], rel_tol=1e-9) for s in steps)


def x_lengths(ax, xs: list[float], label: str) -> str:
    """Payload-length axis: linear for a linear sweep (evenly_spaced: the Cifra study's chart is
    linear), else log when it spans a decade (symmetric-log when 0 B is among the lengths); ticks at
    the measured lengths when there are few. Returns the scale's name for the caption."""
    xs = sorted(set(xs))
    pos = [x for x in xs if x > 0]
    scale = "linear"
    if decades(xs) >= 1 and not evenly_spaced(xs):
        if xs[0] <= 0:
            ax.set_xscale("symlog", linthresh=min(pos), linscale=0.5)
            scale = "symlog"
        else:
            ax.set_xscale("log")
            scale = "log"
    if len(xs) <= 14:
        ticks = _thin(xs, scale)
        ax.xaxis.set_major_locator(ticker.FixedLocator(ticks))
        ax.xaxis.set_minor_locator(ticker.NullLocator())
        ax.xaxis.set_major_formatter(ticker.FuncFormatter(_len_tick))
        if len(ticks) > 8:
            for t in ax.get_xticklabels():
                t.set_rotation(30)
                t.set_ha("right")
    elif scale != "linear":
        ax.xaxis.set_major_formatter(ticker.FuncFormatter(_len_tick))
    ax.set_xlabel(label, fontsize=LABEL_PT)
    return scale


def y_values(ax, values: list[float], label: str) -> str:
    """Value axis: log when the values span a decade, with plain-number tick labels."""
    ax.set_ylabel(label, fontsize=LABEL_PT)
    span = decades(values)
    if span >= 1:
        log_y(ax, span)
        return "log"
    return "linear"


def log_y(ax, span: float) -> None:
    """A log value axis with plain-number ticks: 1-2-5 per decade over a few decades, every digit
    where the values span less than a decade, 1 per decade over many."""
    ax.set_yscale("log")
    subs = tuple(float(d) for d in range(1, 10)) if span < 0.7 else (1.0, 2.0, 5.0) if span < 2.5 else (1.0,)
    ax.yaxis.set_major_locator(ticker.LogLocator(base=10, subs=subs))
    ax.yaxis.set_major_formatter(ticker.FuncFormatter(_tick_text))
    ax.yaxis.set_minor_formatter(ticker.NullFormatter())


def legend(ax, n: int, title: str | None = None) -> None:
    """Outside the plotting area, right of it: never over the data."""
    if n == 0:
        return
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0, fontsize=SMALL_PT, frameon=False,
              title=title, title_fontsize=SMALL_PT)


def axes_text(xscale: str, yscale: str) -> str:
    if xscale == "log" and yscale == "log":
        return "Axes: log–log."
    if xscale == "symlog":
        return ("Axes: symmetric-log x (linear below the smallest non-zero length, so that 0 B shows), "
                + ("log y." if yscale == "log" else "linear y."))
    return f"Axes: {xscale} x, {yscale} y."


def omitted_text(items: list[str], limit: int = 8, more: int = 0) -> str:
    """'Not shown: …' of the first `limit` reasons; `more`: cells left out beyond the reasons kept."""
    if not items:
        return ""
    rest = max(0, len(items) - limit)
    tail = f"; and {rest} more" if rest else ""
    if more:
        tail += f"; and {more} more cell(s) for other reasons"
    return "Not shown: " + "; ".join(items[:limit]) + tail + "."


def tally_flag_text(tally) -> str:
    """'k of n points flagged (…)' of points counted as they came (sweep_summary.Tally)."""
    if not tally.flagged:
        return ""
    return (f"{tally.flagged} of {tally.total} points flagged ("
            + ", ".join(f"{k} ×{v}" for k, v in sorted(tally.flags.items())) + "; see the tables' notes).")


ID_CHARS = 80          # a figure file's stem at most (its name gets .png / .svg): far below any file-name limit


def unique_id(used: set, stem: str) -> str:
    """A figure id (its files' stem), [a-z0-9-], unique among `used`; a stem longer than ID_CHARS
    (many parameters that differ) keeps its start and ends in a short hash of the whole."""
    base = slug(stem)
    if len(base) > ID_CHARS:
        base = base[:ID_CHARS - 9].rstrip("-") + "-" + _short_hash(base)
    out, i = base, 2
    while out in used:
        out, i = f"{base}-{i}", i + 1
    used.add(out)
    return out


def param_slugs(groups: list[tuple[str, dict]]) -> list[str]:
    """For groups of one op that differ only in their fixed parameters: the differing ones as a slug."""
    out = []
    for op, fixed in groups:
        same = [f for o, f in groups if o == op]
        if len(same) < 2:
            out.append("")
            continue
        keys = sorted({k for f in same for k in f})
        differing = [k for k in keys if len({json.dumps(f.get(k)) for f in same}) > 1]
        out.append("-".join(f"{k}-{fixed.get(k)}" for k in differing))
    return out


RUN_IDS_SHOWN = 4      # a figure of more runs is named by a hash of their ids, not by every id


def run_suffix(ids) -> str:
    """The runs a figure draws on, in its id: r3, r1-2; beyond RUN_IDS_SHOWN runs, their count and a
    short hash of their ids (r50runs-1a2b3c4d): every id would exceed the file-name limit past ~80
    runs."""
    ids = [str(i) for i in ids]
    if len(ids) <= RUN_IDS_SHOWN:
        return "r" + "-".join(ids)
    return f"r{len(ids)}runs-{_short_hash(','.join(ids))}"


def _short_hash(text: str) -> str:
    import hashlib
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:8]


# --- colour and length text ----------------------------------------------------------------------
def luminance(rgba) -> float:
    r, g, b = rgba[:3]
    return 0.299 * r + 0.587 * g + 0.114 * b


def hex_rgb(color: str) -> tuple[float, float, float]:
    c = color.lstrip("#")
    return tuple(int(c[i:i + 2], 16) / 255 for i in (0, 2, 4))


def len3(x: float) -> str:
    """A length to 3 significant digits, without an exponent: 4690, 638, 21.4."""
    if x is None:
        return "—"
    if x == 0:
        return "0"
    digits = 2 - int(math.floor(math.log10(abs(x))))
    v = round(x, digits)
    return f"{v:.0f}" if digits <= 0 else f"{v:.{digits}f}".rstrip("0").rstrip(".")
