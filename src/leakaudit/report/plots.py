"""Plots for the report, as inline SVG strings (matplotlib, Agg backend; no external assets)."""

from __future__ import annotations

import io

import numpy as np

__all__ = ["roc_svg", "pdtp_vs_score_svg", "histogram_svg"]

_COLORS = ["#1b6ca8", "#d1495b", "#2e933c", "#edae49", "#6a4c93", "#00798c", "#8d6a9f", "#444444"]


def _fig(w=6.0, h=4.2):
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    plt.rcParams.update({"svg.fonttype": "none", "font.size": 9})
    return plt, plt.subplots(figsize=(w, h))


def _svg(plt, fig) -> str:
    buf = io.StringIO()
    fig.tight_layout()
    fig.savefig(buf, format="svg")
    plt.close(fig)
    text = buf.getvalue()
    return text[text.index("<svg"):]


def _roc_points(m: np.ndarray, s: np.ndarray):
    order = np.argsort(-s, kind="mergesort")
    m = m[order]
    tps = np.cumsum(m)
    fps = np.cumsum(1 - m)
    return fps / max(fps[-1], 1), tps / max(tps[-1], 1)


def roc_svg(curves: dict[str, tuple[np.ndarray, np.ndarray]], *, n_boot: int = 100, seed: int = 0) -> str:
    """ROC curves on log-log axes, with a pointwise 95% bootstrap band for each attack.

    Parameters
    ----------
    curves : dict name -> (is_member of shape (n,), scores of shape (n,))
    """
    plt, (fig, ax) = _fig()
    rng = np.random.default_rng(seed)
    grid = np.logspace(-4, 0, 60)
    n_neg_min = None
    for i, (name, (m, s)) in enumerate(curves.items()):
        m = np.asarray(m, int)
        s = np.asarray(s, float)
        c = _COLORS[i % len(_COLORS)]
        fpr, tpr = _roc_points(m, s)
        ax.plot(np.maximum(fpr, 1e-5), np.maximum(tpr, 1e-5), color=c, lw=1.4, label=name)
        pos, neg = s[m == 1], s[m == 0]
        n_neg_min = neg.size if n_neg_min is None else min(n_neg_min, neg.size)
        band = np.empty((n_boot, grid.size))
        for b in range(n_boot):
            pp = pos[rng.integers(0, pos.size, pos.size)]
            nn = neg[rng.integers(0, neg.size, neg.size)]
            mm = np.r_[np.ones(pp.size, int), np.zeros(nn.size, int)]
            f, t = _roc_points(mm, np.r_[pp, nn])
            band[b] = np.interp(grid, f, t)
        lo, hi = np.quantile(band, [0.025, 0.975], axis=0)
        ok = grid >= 1.0 / max(neg.size, 1)
        ax.fill_between(grid[ok], np.maximum(lo[ok], 1e-5), np.maximum(hi[ok], 1e-5), color=c, alpha=0.15, lw=0)
    ax.plot([1e-5, 1], [1e-5, 1], ls="--", color="#888", lw=1, label="chance")
    if n_neg_min:
        ax.axvline(1.0 / n_neg_min, color="#bbb", lw=0.8, ls=":")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(1e-4, 1)
    ax.set_ylim(1e-4, 1)
    ax.set_xlabel("false positive rate (non-members called members)")
    ax.set_ylabel("true positive rate (members found)")
    ax.set_title("Membership attacks: ROC on log axes, 95% bands")
    ax.legend(loc="lower right", fontsize=8)
    return _svg(plt, fig)


def pdtp_vs_score_svg(pdtp: np.ndarray, score: np.ndarray, *, score_name: str, threshold: float) -> str:
    """Scatter of each member's PDTP against an attack's score, with the DTP threshold."""
    plt, (fig, ax) = _fig(6.0, 3.8)
    ax.scatter(pdtp, score, s=6, alpha=0.5, color=_COLORS[0])
    ax.axvline(threshold, color=_COLORS[1], ls="--", lw=1, label=f"DTP threshold {threshold:g}")
    ax.set_xlabel("PDTP (nats, binned outputs)")
    ax.set_ylabel(f"{score_name} score")
    ax.set_title("Per-record leakage: PDTP against attack score (members)")
    ax.legend(fontsize=8)
    return _svg(plt, fig)


def histogram_svg(values: np.ndarray, *, xlabel: str, title: str, threshold: float | None = None) -> str:
    plt, (fig, ax) = _fig(6.0, 3.2)
    ax.hist(values, bins=50, color=_COLORS[0], alpha=0.85)
    if threshold is not None:
        ax.axvline(threshold, color=_COLORS[1], ls="--", lw=1, label=f"threshold {threshold:g}")
        ax.legend(fontsize=8)
    ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("records")
    ax.set_title(title)
    return _svg(plt, fig)
