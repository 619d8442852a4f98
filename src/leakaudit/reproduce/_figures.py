"""The papers' figures redrawn from the stored runs in docs/reproduction/*.json (matplotlib, PNG beside the runs).

Each :class:`Figure` names the section it is drawn from and the rows of its curves: a pattern whose group ``x`` is the
x value and whose group ``s`` (if any) names the curve. A curve's point is the row's mean with the 95% t-interval of
its per-seed values (``_judge.interval``) as an error bar; a row without per-seed values (a closed form, a
deterministic step) is drawn as it is. Where the row carries a paper value, it is drawn over ours: a diamond in the
curve's colour for a number the paper prints, an open grey circle for a formula or the spec's re-run; a bound the
paper states and a reference the ledger drops are not drawn.
Only stored values are drawn, nothing is recomputed; :data:`NOT_DRAWN` lists the figures the stored runs cannot
support, with why.

Bookkeeping only: it reads stored runs and computes none of their values.
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass
from pathlib import Path

from ._judge import interval
from ._kinds import PAPER_REFERENCES

__all__ = ["FIGURES", "NOT_DRAWN", "Figure", "draw_figures", "figures_of", "not_drawn_text"]


# characters of a title's line: longer titles wrap (a line of 9.5-point type this long fits the 7-inch figure)
TITLE_WIDTH = 90


@dataclass(frozen=True)
class Figure:
    """One paper figure: ``file`` (a PNG name under the runs' folder), ``title``, the ``section`` it is drawn from,
    the row ``pattern`` (group ``x``; its other groups name the curve), the axes' labels and scales. ``x_from``:
    templates (the pattern's groups by name) naming a row whose mean is the point's x instead, or two rows whose
    means' ratio is (Yeom's Figs. 2a-b and 3 plot against r = R_cv / R_emp, not the depth or the penalty).
    ``sequence``: the rows hold a sequence in their ``points`` (one curve each, x the step), as
    long-dtp-fig6's removal curves do; ``paper_pattern`` then names the rows holding the paper's printed points
    (group ``x``, the step; absent: step 0). ``scatter``: the rows are figure-data rows (``_registry.FIGURE_DATA``),
    one point per target and seed, drawn as they are (group ``s`` names the series). ``histogram``: the rows are
    figure-data rows whose points' x values are drawn as one histogram per seed (y is the point's index)."""

    file: str
    title: str
    section: str
    pattern: str
    xlabel: str
    ylabel: str
    logx: bool = False
    logy: bool = False
    x_from: tuple[str, ...] | None = None
    sequence: bool = False
    paper_pattern: str | None = None
    scatter: bool = False
    histogram: bool = False


FIGURES: tuple[Figure, ...] = (
    Figure("long-fig3.png", "Long et al. Fig. 3: r against the PDTP measurements averaged", "long-dtp-correlation",
           r"^Fig 3: r with (?P<x>\d+) PDTP measurements averaged$", "PDTP measurements averaged per target",
           "Pearson r (avg PDTP vs per-target accuracy)", logx=True),
    *(Figure(f"long-fig5{letter}.png", f"Long et al. Fig. 5{letter}: {model}-Adult, per-target distance-attack "
                                         "accuracy against average PDTP", "long-dtp-correlation",
             rf"^(?P<s>{model}-Adult): per-target avg PDTP and distance-attack accuracy \(figure data\)$",
             "average PDTP of the target", "per-target attack accuracy", scatter=True)
      for letter, model in (("a", "NN"), ("b", "NB"), ("c", "LR"))),
    *(Figure(f"long-fig4{letter}.png", f"Long et al. Fig. 4{letter}: {model}-Purchase (Purchase-like data), "
                                         "per-target distance-attack accuracy against average PDTP",
             "long-dtp-correlation",
             rf"^(?P<s>{model}-Purchase): per-target avg PDTP and distance-attack accuracy \(figure data\)$",
             "average PDTP of the target", "per-target attack accuracy", scatter=True)
      for letter, model in (("b", "NB"), ("c", "LR"))),
    Figure("long-fig1.png", "Long et al. Fig. 1: NN-Purchase (Purchase-like data), each attack's per-target "
                            "accuracy against average PDTP", "long-table1",
           r"^Purchase-like: per-target avg PDTP and (?P<s>untargeted|frequency|distance) accuracy \(figure data\)$",
           "average PDTP of the target", "per-target attack accuracy", scatter=True),
    Figure("long-fig2.png", "Long et al. Fig. 2: NN-Purchase (Purchase-like data), the best attack's per-target "
                            "accuracy against average PDTP", "long-table1",
           r"^Purchase-like: per-target avg PDTP and (?P<s>max accuracy over the 3 attacks) \(figure data\)$",
           "average PDTP of the target", "max per-target accuracy over the 3 attacks", scatter=True),
    *(Figure(f"long-fig{n}{panel}.png", f"Long et al. Fig. {n}{panel}: predicted P(>50K) of a {who} over NN-Adult "
                                         f"models trained {how}", "long-dtp-noise",
             rf"^Fig {n}{panel}: (?P<s>{who}): P\(>50K\) of each model \(figure data\)$", "predicted P(>50K)",
             "models", histogram=True)
      for n, how in (("7", "on one training set (random initialisation)"),
                     ("8", "on different training sets (random sampling)"))
      for panel, who in (("a", "low-salary individual"), ("b", "high-salary individual"))),
    Figure("long-fig6.png", "Long et al. Fig. 6: max DTP as high-risk records are removed (Adult proxy for ACS)",
           "long-dtp-fig6", r"^(?P<s>sorted removal|greedy|group): max DTP sequence$", "removal step",
           "max DTP", sequence=True,
           paper_pattern=r"^(?:initial max DTP|max DTP after removing (?P<x>\d+) records?)$"),
    Figure("yeom-fig1.png", "Yeom et al. Fig. 1: advantage of Adversary 4 against the influence tau",
           "yeom-fig1", r"^(?P<s>Thm 5 advantage|simulated Adversary 4), tau/sigma_S=(?P<x>[\d.]+), "
                        r"sigma_D/sigma_S=(?P<t>[\d.]+)$", "tau / sigma_S", "membership advantage"),
    Figure("yeom-fig2a.png", "Yeom et al. Fig. 2a: known sigma, Eyedata ridge and IWPC trees, advantage against r",
           "yeom-fig2ab", r"^(?P<d>Eyedata λ|IWPC depth) (?P<x>\d+): (?P<s>empirical known-σ advantage|"
                          r"Thm 3 advantage at r)$", "r = R_cv / R_emp", "membership advantage",
           x_from=("{d} {x}: R_cv", "{d} {x}: R_emp")),
    Figure("yeom-fig2b.png", "Yeom et al. Fig. 2b: unknown sigma, Eyedata ridge and IWPC trees, advantage against r",
           "yeom-fig2ab", r"^(?P<d>Eyedata λ|IWPC depth) (?P<x>\d+): (?P<s>empirical unknown-σ advantage|§3.3 "
                          r"advantage at r)$", "r = R_cv / R_emp", "membership advantage",
           x_from=("{d} {x}: R_cv", "{d} {x}: R_emp")),
    Figure("yeom-fig2c.png", "Yeom et al. Fig. 2c: CNN on Fashion-MNIST (for MNIST/CIFAR), advantage against size s",
           "yeom-fig2c", r"^s=(?P<x>\d+): (?P<s>threshold-at-L_S advantage|§3.3 curve at r = sqrt\(L_D / L_S\)|"
                         r"Thm 3 curve at r = sqrt\(L_D / L_S\))$", "CNN size s", "membership advantage", logx=True),
    Figure("yeom-fig3.png", "Yeom et al. Fig. 3: IWPC trees, membership and attribute advantage against r",
           "yeom-fig3", r"^d=(?P<x>\d+) (?P<s>membership|VKORC1 A4|VKORC1 A6|VKORC1 A7|CYP2C9 A4|CYP2C9 A6|"
                        r"CYP2C9 A7)$", "r = R_cv / R_emp", "advantage", x_from=("d={x} r = R_cv/R_emp",)),
    Figure("yeom-fig4.png", "Yeom et al. Fig. 4: colluding training algorithm on Fashion-MNIST, against size s",
           "yeom-fig4", r"^s=(?P<x>\d+): (?P<s>colluding advantage|generalization error \(subverted\))$",
           "CNN size s", "advantage / generalization error", logx=True),
    Figure("chase-fig1.png", "Chase et al. Fig. 1: property-inference accuracy against the poisoning rate (LR)",
           "chase-fig1", r"^(?P<s>(?:census|enron)-\w+) accuracy at p=(?P<x>[\d.]+)$", "poisoning rate p",
           "attack accuracy"),
    Figure("chase-fig1-mlp.png", "Chase et al. Fig. 1: census-random, MLP target", "chase-fig1-mlp",
           r"^(?P<s>census-random MLP) accuracy at p=(?P<x>[\d.]+)$", "poisoning rate p", "attack accuracy"),
    Figure("chase-fig2.png", "Chase et al. Fig. 2: accuracy against the poisoning rate (SpamAssassin for Enron)",
           "chase-fig2", r"^(?P<s>enron-random) accuracy at p=(?P<x>[\d.]+)$", "poisoning rate p",
           "attack accuracy"),
    Figure("chase-fig3.png", "Chase et al. Fig. 3: accuracy against the shadow models per world", "chase-fig3",
           r"^(?P<s>census-random p=0.01) accuracy with k=(?P<x>\d+) shadow models/world$",
           "shadow models per world k", "attack accuracy", logx=True),
    Figure("chase-fig3-curves.png", "Chase et al. Fig. 3: the other curves (LR; SpamAssassin for Enron)",
           "chase-fig3-curves",
           r"^(?P<s>(?:census|enron)-\w+ p=[\d.]+) accuracy with k=(?P<x>\d+) shadow models/world$",
           "shadow models per world k", "attack accuracy", logx=True),
    Figure("chase-fig4.png", "Chase et al. Fig. 4: accuracy against the training set size", "chase-fig4",
           r"^(?P<s>census-random p=0.01) accuracy at n=(?P<x>\d+)$", "training set size n", "attack accuracy"),
    Figure("chase-fig5.png", "Chase et al. Fig. 5: target precision against the poisoning rate", "chase-fig5-6",
           r"^(?P<s>(?:census|enron)-\w+) target precision at p=(?P<x>[\d.]+)$", "poisoning rate p",
           "target model precision"),
    Figure("chase-fig6.png", "Chase et al. Fig. 6: target recall against the poisoning rate", "chase-fig5-6",
           r"^(?P<s>(?:census|enron)-\w+) target recall at p=(?P<x>[\d.]+)$", "poisoning rate p",
           "target model recall"),
    Figure("izzo-fig1.png", "Izzo et al. Fig. 1: noise scale against eta, MIP (M=2) and DP", "izzo-fig1",
           r"^(?:(?P<s>n=\d+): DP|(?P<s2>MIP) scale \(M=2\)) (?:scale )?at eta=(?P<x>[\d.]+)$", "eta",
           "noise scale", logy=True),
    Figure("izzo-fig2.png", "Izzo et al. Fig. 2: relative error against eta, MIP and DP-SGD", "izzo-fig2",
           r"^(?P<s>MIP M=\d|DP-SGD),? eta=(?P<x>[\d.]+): relative error$", "eta", "relative error", logy=True),
)

# paper figures the stored runs cannot draw, and why
NOT_DRAWN: dict[str, str] = {
    "Long et al. Fig. 4a (NN-Purchase, the distance attack alone)": (
        "drawn as the distance series of Fig. 1 (long-fig1.png), from the same run"),
    "Yeom et al. Figs. 2c and 4 beyond s = 16 and s = 32 (the paper goes to s = 128)": (
        "not run: yeom-fig2c and yeom-fig4 run at the reduced profile, whose sections say what full would cost"),
    "Chase et al. Fig. 3, the Enron MLP curve": (
        "not run: no architecture in the paper, and its cost (chase-fig3-curves' notes)"),
    "Chase et al. Fig. 4, the curves other than census-random": (
        "not run: the paper does not name them (chase-fig4's notes); chase-fig4 runs census-random"),
}


def _scatter_points(result: dict, fig: Figure) -> dict[str, list[tuple]]:
    """``{series: [(x, y, seed)]}``: every seed's points of the figure-data rows that ``fig`` draws."""
    pat = re.compile(fig.pattern)
    out: dict[str, list[tuple]] = {}
    for r in result["rows"]:
        m = pat.search(r["quantity"])
        if m:
            pts = [(x, y, seed) for seed, seed_pts in r.get("points") or () for x, y in seed_pts]
            if pts:
                out.setdefault(m.group("s"), []).extend(pts)
    return out


def _points(result: dict, fig: Figure) -> dict[str, list[tuple]]:
    """``{curve: [(x, mean, lo, hi, paper, paper_is_printed)]}`` of the rows of ``result`` that ``fig`` draws."""
    if fig.scatter or fig.histogram:
        return _scatter_points(result, fig)
    pat = re.compile(fig.pattern)
    means = {r["quantity"]: r["ours"] for r in result["rows"]}
    curves: dict[str, list[tuple]] = {}
    for r in result["rows"]:
        m = pat.search(r["quantity"])
        if not m:
            continue
        groups = m.groupdict()
        name = ", ".join(f"sigma_D/sigma_S={v}" if k == "t" else v for k, v in groups.items() if k != "x" and v)
        if fig.sequence:
            curves[name] = [(float(i), float(v), None, None, None, False) for i, v in r["points"][0][1]]
            continue
        x = float(m.group("x"))
        if fig.x_from is not None:
            parts = [means.get(t.format(**groups)) for t in fig.x_from]
            if any(v is None for v in parts):
                continue
            x = parts[0] / parts[1] if len(parts) == 2 else parts[0]
        if r["ours"] is None:
            continue
        lo = hi = None
        if r.get("values") is not None:
            _, lo, hi = interval(r["values"])
        printed = r.get("reference") in PAPER_REFERENCES
        paper = r["paper"] if r.get("status") != "reference dropped" and r.get("bound") is None else None
        curves.setdefault(name, []).append((x, float(r["ours"]), lo, hi, paper, printed))
    if fig.paper_pattern is not None and curves:
        printed = re.compile(fig.paper_pattern)
        for r in result["rows"]:
            m = printed.search(r["quantity"])
            if m and r["paper"] is not None:
                x = float(m.group("x") or 0)
                curves.setdefault("", []).append((x, None, None, None, r["paper"], True))
    return {k: sorted(v, key=lambda p: p[0]) for k, v in curves.items() if v}


def figures_of(result: dict) -> list[tuple[str, str]]:
    """``(title, file)`` of the figures drawn from the stored run ``result`` (those with at least one point)."""
    return [(f.title, f.file) for f in FIGURES if f.section == result["name"] and _points(result, f)]


def draw_figures(result: dict, folder: str | Path) -> list[Path]:
    """Draw the figures of ``result`` into ``folder`` as PNG; returns their paths."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    out = []
    for fig in FIGURES:
        if fig.section != result["name"]:
            continue
        curves = _points(result, fig)
        if not curves:
            continue
        f, ax = plt.subplots(figsize=(7.0, 4.6), dpi=100)
        if fig.histogram:
            import numpy as np

            xs = [p[0] for pts in curves.values() for p in pts]
            bins = np.linspace(min(xs), max(xs), 31) if max(xs) > min(xs) else 30
            for seed in sorted({p[2] for pts in curves.values() for p in pts}):
                vals = [p[0] for pts in curves.values() for p in pts if p[2] == seed]
                ax.hist(vals, bins=bins, histtype="step", linewidth=1.3,
                        label=f"ours: seed {seed} ({len(vals)} models)")
            how = "one histogram per seed, each seed's own individual; the paper prints no numbers"
        elif fig.scatter:
            n_seeds = len({p[2] for pts in curves.values() for p in pts})
            for name, pts in curves.items():
                ax.scatter([p[0] for p in pts], [p[1] for p in pts], s=9, alpha=0.45,
                           label=f"ours: {name} ({len(pts)} points: targets x {n_seeds} seeds)")
            how = "one point per target and seed; the paper prints no points"
        else:
            how = _draw_curves(ax, curves)
        _finish(f, ax, fig, result, how)
        out.append(_save(f, plt, folder, fig))
    return out


def _draw_curves(ax, curves: dict[str, list[tuple]]) -> str:
    """Draw :func:`_points`' curves, ours with error bars and the paper's values over them; returns the footnote."""
    paper_drawn = ref_drawn = False
    for name, pts in curves.items():
        if all(p[1] is None for p in pts):  # the paper's points alone (paper_pattern)
            for x, _, _, _, paper, _ in pts:
                ax.plot([x], [paper], marker="D", color="black", markersize=7, linestyle="none",
                        label=None if paper_drawn else "the paper's printed value (diamond)")
                paper_drawn = True
            continue
        xs = [p[0] for p in pts]
        ys = [p[1] for p in pts]
        err = [[p[1] - p[2] if p[2] is not None else 0.0 for p in pts],
               [p[3] - p[1] if p[3] is not None else 0.0 for p in pts]]
        has_err = any(p[2] is not None for p in pts)
        line = ax.errorbar(xs, ys, yerr=err if has_err else None, marker="o", markersize=3.5, capsize=2.5,
                           linewidth=1.2, label=f"ours: {name}" if name else "ours")
        colour = line.lines[0].get_color()
        for x, _, _, _, paper, printed in pts:
            if paper is None:
                continue
            if printed:
                ax.plot([x], [paper], marker="D", color=colour, markeredgecolor="black", markersize=7,
                        linestyle="none", label=None if paper_drawn else "the paper's printed value (diamond)")
                paper_drawn = True
            else:
                ax.plot([x], [paper], marker="o", markerfacecolor="none", color="grey", markersize=7,
                        linestyle="none", label=None if ref_drawn else "reference (formula or the spec's re-run)")
                ref_drawn = True
    varies = any(p[2] is not None and p[3] > p[2] for pts in curves.values() for p in pts)
    return ("error bars: 95% t-interval over the seeds (or splits)" if varies
            else "no point varies by seed: each is one deterministic value")


def _finish(f, ax, fig: Figure, result: dict, how: str) -> None:
    if fig.logx:
        ax.set_xscale("log")
    if fig.logy:
        ax.set_yscale("log")
    ax.set_xlabel(fig.xlabel)
    ax.set_ylabel(fig.ylabel)
    ax.set_title(textwrap.fill(fig.title, TITLE_WIDTH), fontsize=9.5)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7, loc="best")
    f.text(0.01, 0.005, f"{result['name']}, profile {result['profile']}; {how}", fontsize=6.5, color="grey")
    f.tight_layout(rect=(0, 0.02, 1, 1))


def _save(f, plt, folder, fig: Figure) -> Path:
    path = Path(folder) / fig.file
    f.savefig(path, format="png", metadata={"Software": None})
    plt.close(f)
    return path


def not_drawn_text() -> str:
    """The page's paragraph on the paper figures the stored runs cannot draw."""
    lines = ["Paper figures not drawn, and why (every other figure of the four papers is drawn in its section, from "
             "the stored run's values, with the paper's printed numbers over it where the paper prints any):", ""]
    lines += [f"- {fig}: {why}." for fig, why in NOT_DRAWN.items()]
    return "\n".join(lines) + "\n"
