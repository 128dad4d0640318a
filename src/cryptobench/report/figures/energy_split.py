"""Energy split: 100 % stacked bars of each supply's share of the energy per operation (the ZHAW
IoT study, figure 3)."""
from __future__ import annotations

import json

from ..captions import n_text, provenance_text, runs_caption
from ..series import energy_unit, op_title, param_text
from ...core.quantity import fmt_num
from ...core.records import Cell, Energy, Run
from .style import (LABEL_PT, SMALL_PT, SUPPLY_COLORS, TICK_PT, TITLE_PT, Figure, hex_rgb, luminance, new_figure,
                    run_suffix, style_axes, tag, unique_id)


def _split_energy(c: Cell) -> Energy | None:
    """An ok cell's energy figure when it splits the energy between supplies."""
    en = c.energy if c.ok else None
    return en if en is not None and isinstance(en.get("supplies"), dict) and len(en["supplies"]) >= 1 else None


def energy_split_figure(run: Run, used: set) -> Figure | None:
    cells = [c for c in run.cells if _split_energy(c) is not None]
    if not cells:
        return None
    energies = [c.energy for c in cells]
    supplies: list = []
    for en in energies:
        for name in en["supplies"]:
            if name not in supplies:
                supplies.append(name)
    totals = [en.per_op_j or sum(v.get("median_j") or 0 for v in en["supplies"].values()) for en in energies]
    unit, scale = energy_unit(totals)
    fig = new_figure(1.7 + 0.42 * len(cells))
    ax = fig.add_subplot()
    style_axes(ax)
    ax.grid(False, axis="y")
    ys = list(range(len(cells)))
    _stacked_bars(ax, ys, energies, supplies)
    ax.set_yticks(ys)
    ax.set_yticklabels(_bar_labels(cells, totals, unit, scale), fontsize=TICK_PT)
    ax.set_ylim(len(cells) - 0.5, -0.5)
    ax.set_xlim(0, 100)
    ax.set_xlabel("share of the energy per operation (%)", fontsize=LABEL_PT)
    ax.legend(loc="lower left", bbox_to_anchor=(0.0, 1.0), ncol=min(len(supplies), 5), fontsize=SMALL_PT,
              frameon=False, title="supply", title_fontsize=SMALL_PT)
    provs = sorted({en.provenance for en in energies})
    tag(ax, provs)
    title = f"Energy split between supplies (run {run.id})"
    fig.suptitle(title, fontsize=TITLE_PT)
    return Figure(unique_id(used, f"energy-split-{run_suffix([run.id])}"), "energy-split", title,
                  _split_caption(run, energies, supplies, unit, provs), provs, fig)


def _bar_labels(cells: list[Cell], totals: list[float], unit: str, scale: float) -> list[str]:
    """Per cell: operation, the parameters that vary within the operation, engine and total energy."""
    by_op: dict = {}
    for c in cells:
        by_op.setdefault(c.op, []).append(c.params)
    labels = []
    for c, tot in zip(cells, totals):
        same = by_op[c.op]
        varying = [k for k in c.params if len({json.dumps(p.get(k)) for p in same}) > 1]
        shown = varying or [k for k in c.params if k != "source"]
        ptxt = ", ".join(param_text(k, c.params[k]) for k in shown)
        labels.append(f"{op_title(c.op)}{' ' + ptxt if ptxt else ''} · {c.engine} ({fmt_num(tot * scale)} {unit})")
    return labels


def _stacked_bars(ax, ys: list[int], energies: list[Energy], supplies: list[str]) -> None:
    """One 100 % bar per cell (its energy figure), a segment per supply, its share printed where the
    segment is wide enough."""
    for si, name in enumerate(supplies):
        lefts, widths = [], []
        for en in energies:
            sup = en["supplies"]
            left = sum(float(sup[n].get("share_pct") or 0) for n in supplies[:si] if n in sup)
            lefts.append(left)
            widths.append(float((sup.get(name) or {}).get("share_pct") or 0))
        color = SUPPLY_COLORS[si % len(SUPPLY_COLORS)]
        ax.barh(ys, widths, left=lefts, color=color, edgecolor="white", height=0.7, label=name, zorder=3)
        for y, l, w in zip(ys, lefts, widths):
            if w >= 7:
                ax.text(l + w / 2, y, f"{w:.1f} %", ha="center", va="center", fontsize=SMALL_PT,
                        color="white" if luminance(hex_rgb(color)) < 0.55 else "black", zorder=4)


def _split_caption(run: Run, energies: list[Energy], supplies: list[str], unit: str, provs: list[str]) -> str:
    n = [en.stats.get("n") for en in energies]
    cap = [f"Share of each supply ({', '.join(supplies)}) in the energy per operation, per operation and engine "
           "(the ZHAW IoT study's figure 3: host MCU vs secure element); each supply's median energy per window as a "
           f"percentage of their sum, printed where the segment is wide enough; in brackets the total energy per "
           f"operation ({unit}).",
           "Supply names are the trace's channel names."]
    nt = n_text(n, None, "windows")
    if nt:
        cap.append(nt + ".")
    cap.append(provenance_text(provs).capitalize() + ".")
    cap.append(runs_caption([run], [run.id]))
    return " ".join(cap)
