"""The audit's plots: each drawn once, as a matplotlib Figure (``*_figure``), which the report inlines as SVG text
(``*_svg``: the same figure, serialised; no external assets) and :class:`~leakaudit.audit.result.results.AuditResult`'s
``plot_*`` methods return.

A figure is drawn into the ``ax`` given (a matplotlib Axes; the figure holding it is returned), or into a new
:class:`matplotlib.figure.Figure` that pyplot does not manage: no backend is switched and no global setting changed,
so a report rendered in a notebook leaves its plotting as it was, and a figure returned as a notebook cell's value is
shown once. ``fig.savefig(path)`` writes it; to have ``plt.show()`` show it, draw into pyplot's axes
(``ax=plt.subplots()[1]``).
"""

from __future__ import annotations

import contextlib
import io
import math
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # the audit imports the report to write report.html: the report names its types only
    import pandas as pd
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from ..audit.result.results import AuditResult

__all__ = ["as_number", "as_svg", "display_name", "histogram_figure", "histogram_svg", "interp_roc",
           "measured_members", "pdtp_histogram_of", "pdtp_scatter_of", "pdtp_vs_score_figure", "robust_limits",
           "roc_figure", "roc_of", "roc_points", "roc_svg", "scored_attacks", "strongest_attack"]

_COLORS = ["#1b6ca8", "#d1495b", "#2e933c", "#edae49", "#6a4c93", "#00798c", "#8d6a9f", "#444444"]
#: the plots' text size (points), set only while a plot is drawn
_FONT_SIZE = 9


def as_number(v) -> float | None:
    """``v`` as a finite float, else None (None, NaN, infinity, text)."""
    if isinstance(v, bool) or v is None:
        return None
    try:
        x = float(v)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None


def display_name(results: AuditResult, name: str) -> str:
    """An attack's (or the DTP-1 check's) name in words: the ``display`` its own results carry (so a report
    re-rendered without a plug-in names the plug-in's attack as the audit did)."""
    if name == "dtp1":
        return "DTP-1"
    return getattr(results.membership.get(name), "display", None) or name


# -- what the plots draw: chosen once here for the report and for AuditResult's plot_* methods --------------------
def scored_attacks(names, records: pd.DataFrame) -> list[str]:
    """The attacks among ``names`` whose scores ``records`` (records.csv's rows) holds, in order: those the ROC plot
    draws."""
    return [n for n in names if f"score_{n}" in records]


def strongest_attack(results: AuditResult, scored: list[str]) -> str | None:
    """The attack of highest AUC among ``scored`` (``results``' membership attacks): the one the PDTP scatter
    draws; None when no AUC was measured."""
    known = {n: a for n in scored if (a := as_number(results.membership[n].auc)) is not None}
    return max(known, key=known.get) if known else None


def measured_members(records: pd.DataFrame) -> pd.DataFrame:
    """The members of ``records`` whose PDTP was measured (a finite ``pdtp``): those the PDTP plots draw; empty
    without a ``pdtp`` column."""
    members = records[records["is_member"].to_numpy(int) == 1]
    return members[np.isfinite(members["pdtp"].to_numpy(float))] if "pdtp" in records else members.iloc[:0]


def roc_of(results: AuditResult, records: pd.DataFrame, attacks: list[str], *, ax: Axes | None = None) -> Figure:
    """The ROC curves of ``results``' membership ``attacks`` from ``records``' scores (:func:`roc_figure`), banded
    at the checks' confidence, with the FPR the verdict judges TPR at."""
    m = records["is_member"].to_numpy(int)
    curves = {display_name(results, n): (m, records[f"score_{n}"].to_numpy(float)) for n in attacks}
    return roc_figure(curves, low_fpr=as_number(results.verdict.thresholds.get("low_fpr")),
                      confidence=as_number(results.verdict.check_confidence) or 0.95, ax=ax)


def pdtp_histogram_of(results: AuditResult, members: pd.DataFrame, *, ax: Axes | None = None) -> Figure:
    """The histogram of the ``members``' PDTP (:func:`measured_members`) with ``results``' DTP threshold."""
    return histogram_figure(members["pdtp"].to_numpy(float), xlabel="PDTP (nats)", title="PDTP of training records",
                            threshold=as_number(results.verdict.thresholds.get("max_dtp")), ax=ax)


def pdtp_scatter_of(results: AuditResult, members: pd.DataFrame, attack: str, *, ax: Axes | None = None) -> Figure:
    """The ``members``' PDTP against ``attack``'s score (:func:`pdtp_vs_score_figure`), with the DTP threshold."""
    return pdtp_vs_score_figure(members["pdtp"].to_numpy(float), members[f"score_{attack}"].to_numpy(float),
                                score_name=display_name(results, attack),
                                threshold=as_number(results.verdict.thresholds.get("max_dtp")) or 1.0, ax=ax)


@contextlib.contextmanager
def _drawing(ax: Axes | None, size: tuple[float, float]):
    """(figure, axes) to draw one plot into: ``ax`` and the figure holding it, drawn in its own style; or a new
    Figure of ``size`` inches (not managed by pyplot, laid out tight when drawn) whose text is ``_FONT_SIZE``
    points (set only inside the block, never globally). Anything else as ``ax`` is refused by name."""
    import matplotlib
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    if ax is not None:
        if not isinstance(ax, Axes):
            from .._validation import shown
            from ..exceptions import InvalidParameterError

            raise InvalidParameterError(f"ax must be a matplotlib Axes (or None: a new figure); got {shown(ax)}")
        yield ax.figure, ax
        return

    with matplotlib.rc_context({"font.size": _FONT_SIZE}):
        fig = Figure(figsize=size, layout="tight")
        ax = fig.add_subplot()
        ax.tick_params(which="both", labelsize=_FONT_SIZE)  # tick labels are made when drawn, after the block
        yield fig, ax


def _literal(name: str) -> str:
    """``name`` (an attack's, from results.json) drawn as written: each ``$`` escaped, so matplotlib never reads it
    as mathtext (which raises when drawn where it does not parse)."""
    return name.replace("$", r"\$")


def as_svg(fig: Figure) -> str:
    """``fig`` as inline SVG text (text kept as text, so the page's search finds it), the same bytes at every call
    (no date, fixed element ids): a report rendered again has the digest evidence.json gives it."""
    import matplotlib

    buf = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "leakaudit"}):
        fig.savefig(buf, format="svg", metadata={"Date": None})
    text = buf.getvalue()
    return text[text.index("<svg"):]


def roc_points(m: np.ndarray, s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(fpr, tpr) of the rule "member iff score >= t" at every distinct score t, from (0, 0) to (1, 1).

    A block of tied scores moves the curve in one step, so between two points the curve is the straight segment a
    random tie-break gives (scikit-learn's ``roc_curve``), never a staircase through the block in record order.
    """
    from sklearn.metrics import roc_curve

    fpr, tpr, _ = roc_curve(np.asarray(m, int), np.asarray(s, float), drop_intermediate=False)
    return fpr, tpr


def interp_roc(fpr: np.ndarray, tpr: np.ndarray, x: np.ndarray) -> np.ndarray:
    """TPR of the ROC polyline at each FPR in ``x``: linear between its points, in linear coordinates.

    Where the curve jumps vertically (members tied above the next non-member), ``x`` on the jump gets the lower end.
    """
    x = np.asarray(x, float)
    i = np.clip(np.searchsorted(fpr, x, side="left"), 1, len(fpr) - 1)
    f0, f1, t0, t1 = fpr[i - 1], fpr[i], tpr[i - 1], tpr[i]
    w = np.where(f1 > f0, (x - f0) / np.where(f1 > f0, f1 - f0, 1.0), 1.0)
    return t0 + np.clip(w, 0.0, 1.0) * (t1 - t0)


def _bootstrap_tpr(pos: np.ndarray, neg: np.ndarray, grid: np.ndarray, n_boot: int,
                   rng: np.random.Generator) -> np.ndarray:
    """TPR at each FPR of ``grid`` of ``n_boot`` bootstrap resamples (members and non-members resampled apart), shape
    (n_boot, grid.size): :func:`roc_points` and :func:`interp_roc` of each resample, bit for bit, from one sort of the
    scores and each resample's counts of every record (a record drawn k times weighs k)."""
    s = np.r_[pos, neg]
    order = np.argsort(-s, kind="stable")
    ss = s[order]
    last = np.r_[np.flatnonzero(ss[1:] != ss[:-1]), ss.size - 1]  # each distinct score's last position, descending
    is_pos = order < pos.size
    band = np.empty((n_boot, grid.size))
    for b in range(n_boot):
        w = np.r_[np.bincount(rng.integers(0, pos.size, pos.size), minlength=pos.size),
                  np.bincount(rng.integers(0, neg.size, neg.size), minlength=neg.size)][order]
        # a score no resampled record has repeats the point before it: the same polyline as roc_curve's
        tps = np.r_[0, np.cumsum(np.where(is_pos, w, 0))[last]]
        fps = np.r_[0, np.cumsum(np.where(is_pos, 0, w))[last]]
        band[b] = interp_roc(fps / fps[-1], tps / tps[-1], grid)
    return band


def _roc_polyline(fpr: np.ndarray, tpr: np.ndarray, xmin: float) -> tuple[np.ndarray, np.ndarray]:
    """Points that draw the ROC polyline on a log-x axis from ``xmin``: each straight segment (in linear
    coordinates) is sampled densely in log space, so it shows as the line it is, not as a chord or a plateau."""
    grid = np.geomspace(xmin, 1.0, 400)
    xs = np.unique(np.r_[grid, fpr[(fpr >= xmin)]])
    # keep both ends of a vertical jump: the arrival (lower) and the departure (upper) at the same FPR; fpr and tpr
    # never decrease along the curve, so the departure is the last point at that FPR
    lo = interp_roc(fpr, tpr, xs)
    last = np.searchsorted(fpr, xs, side="right") - 1
    at = (last >= 0) & (fpr[np.maximum(last, 0)] == xs)
    hi = np.where(at, tpr[np.maximum(last, 0)], lo)
    jump = hi > lo
    start = np.cumsum(1 + jump) - (1 + jump)  # each x's first output position
    out_y = np.empty(len(xs) + int(jump.sum()))
    out_y[start], out_y[start[jump] + 1] = lo, hi[jump]
    return np.repeat(xs, 1 + jump), out_y


def roc_figure(curves: dict[str, tuple[np.ndarray, np.ndarray]], *, n_boot: int = 100, seed: int = 0,
               low_fpr: float | None = None, confidence: float = 0.95, ax: Axes | None = None) -> Figure:
    """ROC curves on log-log axes, with a pointwise bootstrap band at ``confidence`` for each attack, both drawn only
    where the non-members can estimate an FPR (at or above one non-member's share).

    Parameters
    ----------
    curves : dict name -> (is_member of shape (n,), scores of shape (n,))
        One curve per attack (an attack whose records are of one class only draws none).
    n_boot : int, default=100
        Bootstrap resamples behind each band.
    seed : int, default=0
        Seed of the resampling.
    low_fpr : float, optional
        The FPR the verdict judges TPR at (a dotted vertical line).
    confidence : float, default=0.95
        The bands' level (the report passes the checks' corrected confidence, the level of the table's intervals).
    ax : matplotlib Axes, optional
        Draw into it; None: a new 6 x 4.2 inch Figure.

    Returns
    -------
    matplotlib.figure.Figure
        The figure drawn into: per attack one line (label: its name) and one band, the chance diagonal, and the
        vertical lines at one non-member's FPR and at ``low_fpr``.
    """
    with _drawing(ax, (6.0, 4.2)) as (fig, ax):
        rng = np.random.default_rng(seed)
        xmin, ymin = 1e-4, 1e-4
        grid = np.geomspace(xmin, 1, 80)
        n_neg_min = None
        for i, (name, (m, s)) in enumerate(curves.items()):
            m = np.asarray(m, int)
            s = np.asarray(s, float)
            ok = np.isfinite(s)
            m, s = m[ok], s[ok]
            if m.min(initial=1) == m.max(initial=0):  # one class only: no curve
                continue
            c = _COLORS[i % len(_COLORS)]
            fpr, tpr = roc_points(m, s)
            pos, neg = s[m == 1], s[m == 0]
            px, py = _roc_polyline(fpr, tpr, xmin)
            est = px >= 1.0 / max(neg.size, 1)  # below one non-member's share the data estimate no FPR
            ax.plot(px[est], np.maximum(py[est], ymin), color=c, lw=1.4, label=_literal(name))
            n_neg_min = neg.size if n_neg_min is None else min(n_neg_min, neg.size)
            band = _bootstrap_tpr(pos, neg, grid, n_boot, rng)
            lo, hi = np.quantile(band, [(1 - confidence) / 2, (1 + confidence) / 2], axis=0)
            keep = grid >= 1.0 / max(neg.size, 1)
            ax.fill_between(grid[keep], np.maximum(lo[keep], ymin), np.maximum(hi[keep], ymin), color=c, alpha=0.15,
                            lw=0)
        ax.plot([xmin, 1], [ymin, 1], ls="--", color="#888", lw=1, label="chance")
        if n_neg_min:
            ax.axvline(1.0 / n_neg_min, color="#999", lw=0.8, ls=":", label="FPR of 1 non-member")
        if low_fpr is not None:
            ax.axvline(low_fpr, color="#c0392b", lw=0.8, ls="-.", label=f"FPR {low_fpr:g} (checked)")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlim(xmin, 1)
        ax.set_ylim(ymin, 1)
        ax.set_xlabel("false positive rate (non-members called members)")
        ax.set_ylabel("true positive rate (members found)")
        ax.set_title(f"Membership attacks: ROC on log axes,\npointwise {confidence * 100:.4g}% bootstrap bands")
        ax.legend(loc="lower right", fontsize=8)
    return fig


def roc_svg(curves: dict[str, tuple[np.ndarray, np.ndarray]], **kwargs) -> str:
    """:func:`roc_figure` (same arguments) as inline SVG text."""
    return as_svg(roc_figure(curves, **kwargs))


def robust_limits(values: np.ndarray, *, k: float = 3.0) -> tuple[float, float, bool]:
    """Axis limits that a few extreme values do not squash: Tukey's fences ``k`` interquartile ranges beyond the
    quartiles (the 5th-95th percentile range when the quartiles coincide) when some values lie beyond them, else
    the full range; with a margin of 5%. Returns (low, high, clipped)."""
    v = np.asarray(values, float)
    v = v[np.isfinite(v)]
    if v.size == 0:
        return 0.0, 1.0, False
    lo, hi = float(np.min(v)), float(np.max(v))
    q1, q3 = (float(x) for x in np.quantile(v, [0.25, 0.75]))
    if q3 <= q1:
        q1, q3 = (float(x) for x in np.quantile(v, [0.05, 0.95]))
    f_lo, f_hi = q1 - k * (q3 - q1), q3 + k * (q3 - q1)
    clipped = q3 > q1 and (lo < f_lo or hi > f_hi)
    if clipped:
        lo, hi = max(lo, f_lo), min(hi, f_hi)
    pad = 0.05 * (hi - lo) if hi > lo else max(abs(hi), 1.0) * 0.05
    return lo - pad, hi + pad, bool(clipped)


def pdtp_vs_score_figure(pdtp: np.ndarray, score: np.ndarray, *, score_name: str, threshold: float,
                         ax: Axes | None = None) -> Figure:
    """Scatter of each member's PDTP against an attack's score, with the DTP threshold.

    The score axis is clipped at Tukey's fences (:func:`robust_limits`) when a few records lie far beyond them;
    those records are drawn as triangles at the edge, and the legend says how many ("1 record", "2 records"; no
    such entry when none lies beyond).

    Parameters
    ----------
    pdtp : ndarray of shape (n,)
        Each member's PDTP (nats); records where it or the score is not finite are left out.
    score : ndarray of shape (n,)
        The attack's score of the same members.
    score_name : str
        The attack, named on the score axis.
    threshold : float
        The DTP threshold (a dashed vertical line).
    ax : matplotlib Axes, optional
        Draw into it; None: a new 6 x 3.8 inch Figure.

    Returns
    -------
    matplotlib.figure.Figure
        The figure drawn into: one scatter of the records on the axis, one of those beyond it (when any), the
        threshold's line.
    """
    with _drawing(ax, (6.0, 3.8)) as (fig, ax):
        pdtp, score = np.asarray(pdtp, float), np.asarray(score, float)
        ok = np.isfinite(pdtp) & np.isfinite(score)
        pdtp, score = pdtp[ok], score[ok]
        lo, hi, _ = robust_limits(score)
        inside = (score >= lo) & (score <= hi)
        ax.scatter(pdtp[inside], score[inside], s=6, alpha=0.5, color=_COLORS[0])
        k = int((~inside).sum())
        if k:
            ax.scatter(pdtp[~inside], np.clip(score[~inside], lo, hi), s=14, marker="^", color=_COLORS[3],
                       clip_on=False, label=f"{k} record{'' if k == 1 else 's'} beyond 3 IQR of the quartiles, drawn at the edge")
        ax.set_ylim(lo, hi)
        ax.axvline(threshold, color=_COLORS[1], ls="--", lw=1, label=f"DTP threshold {threshold:g}")
        ax.set_xlabel("PDTP (nats, binned outputs)")
        ax.set_ylabel(f"{_literal(score_name)} score" + (" (axis clipped)" if k else ""))
        ax.set_title("Per-record leakage: PDTP against attack score (members)")
        ax.legend(fontsize=8)
    return fig


def histogram_figure(values: np.ndarray, *, xlabel: str, title: str, threshold: float | None = None,
                     ax: Axes | None = None) -> Figure:
    """Histogram of ``values`` (50 bins, counts on a log axis), with ``threshold`` as a dashed line.

    Parameters
    ----------
    values : ndarray of shape (n,)
    xlabel, title : str
    threshold : float, optional
    ax : matplotlib Axes, optional
        Draw into it; None: a new 6 x 3.2 inch Figure.

    Returns
    -------
    matplotlib.figure.Figure
        The figure drawn into: 50 bars, and the threshold's line when given.
    """
    with _drawing(ax, (6.0, 3.2)) as (fig, ax):
        ax.hist(values, bins=50, color=_COLORS[0], alpha=0.85)
        if threshold is not None:
            ax.axvline(threshold, color=_COLORS[1], ls="--", lw=1, label=f"threshold {threshold:g}")
            ax.legend(fontsize=8)
        ax.set_yscale("log")
        ax.set_xlabel(xlabel)
        ax.set_ylabel("records")
        ax.set_title(title)
    return fig


def histogram_svg(values: np.ndarray, **kwargs) -> str:
    """:func:`histogram_figure` (same arguments) as inline SVG text."""
    return as_svg(histogram_figure(values, **kwargs))
