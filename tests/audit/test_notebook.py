"""The result in a notebook: a small public surface, a display that ranks the checks and formats them as the report
does, and the report's plots drawn from the result."""

import html as _html
import json
import re

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from matplotlib.figure import Figure
from sklearn.tree import DecisionTreeClassifier

import leakaudit
from leakaudit.audit.result.checks import STATUS_COLOURS, STATUSES, Check, rank_checks
from leakaudit.audit.result.results import AuditResult, read_result
from leakaudit.exceptions import InvalidInputError, InvalidParameterError
from leakaudit.report.plots import histogram_svg, pdtp_vs_score_figure, roc_svg

#: every word a check's status takes
STATUS_WORDS = set(STATUSES)


@pytest.fixture(scope="module")
def result():
    """An unpruned tree on noisy labels: members are told from non-members and PDTP runs (do not publish)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(240, 3))
    y = X[:, 0] + rng.normal(size=240) > 0
    df = pd.DataFrame(X, columns=["a", "b", "c"]).assign(label=np.where(y, "yes", "no"))
    mem, non = df.iloc[:120], df.iloc[120:]
    model = DecisionTreeClassifier(random_state=0).fit(mem.drop(columns="label"), mem["label"])
    return leakaudit.audit(model, mem, non, label="label", profile="smoke")


def _check(status, value=None, interval=None, threshold=None, id="x.y", **kw) -> Check:
    """A check with the status given as it is (``model_construct``: not resolved from its interval)."""
    return Check.model_construct(id=id, analysis="x", name=id, status=status, value=value, interval=interval,
                                 threshold=threshold, sentence="", fix="", describes="model", shows="both",
                                 because=None, **kw)


# -- the public surface -------------------------------------------------------------------------------------------


def test_dir_lists_the_public_surface_not_pydantics(result):
    public = [n for n in dir(result) if not n.startswith("_")]
    assert {"verdict", "outcome", "checks", "records", "evidence", "checks_frame", "save", "plot_roc",
            "plot_records", "plot_pdtp", "membership", "dtp", "data", "target", "skipped", "to_json"} <= set(public)
    machinery = {"dict", "json", "copy", "parse_obj", "construct", "schema", "validate", "update_forward_refs"}
    for obj in (result, result.verdict, result.checks[0], result.membership["lira"], result.dtp):
        names = [n for n in dir(obj) if not n.startswith("_")]
        assert not [n for n in names if n.startswith("model_") or n in machinery], type(obj).__name__
        assert "__class__" in dir(obj)  # Python's own names stay
    assert {"headline", "finding", "checks", "family_sentence"} <= set(dir(result.verdict))
    assert {"auc", "tpr_at", "keys", "get"} <= set(dir(result.membership["lira"]))
    assert result.model_dump()["verdict"]["outcome"] == result.outcome  # the machinery keeps working


# -- ranking ------------------------------------------------------------------------------------------------------


def test_checks_are_ranked_by_strength_of_evidence():
    auc = _check("exceeded", 0.75, (0.7, 0.8), 0.6, id="auc")  # 0.15 above, 0.05 = 1.96 se: z 5.9
    tpr = _check("exceeded", 0.25, (0.2, 0.3), 0.05, id="tpr")  # 0.2 above, 0.05 = 1.96 se: z 7.8
    strong = _check("exceeded", 0.75, (0.7, 0.8), 0.6, id="strong", p_value=1e-20)  # its analysis's own test
    leaf = _check("exceeded", 1.0, None, 5.0, id="leaf")  # an exact count (a smallest leaf of 1 against 5): certain
    below = _check("shown below", 0.5, (0.45, 0.55), 0.6, id="below")
    near = _check("shown below", 0.57, (0.55, 0.59), 0.6, id="near")  # closer to its threshold: first of them
    undecided = _check("undecided", 0.55, (0.5, 0.62), 0.6, id="undecided")
    recipe = _check("exceeded", 0.9, (0.85, 0.95), 0.6, id="recipe").model_copy(update={"describes": "recipe"})
    unmeasured = _check("not measurable", 0.01, None, 0.05, id="unmeasured")
    given = [unmeasured, below, auc, undecided, recipe, near, leaf, strong, tpr]
    assert [c.id for c in rank_checks(given)] == ["leaf", "strong", "tpr", "auc", "recipe", "undecided", "near",
                                                  "below", "unmeasured"]


def test_the_display_ranks_the_checks_and_formats_them_as_the_report(result):
    html = result._repr_html_()
    ranked = rank_checks(result.checks)
    names = [_html.unescape(n) for n in re.findall(r"<tr><td[^>]*>(.*?)</td>", html)]
    assert names == [c.name for c in ranked]
    assert ranked[0].status == "exceeded" and result.outcome == "do not publish"
    for c in result.checks:
        row = re.search(rf"<tr><td[^>]*>{re.escape(_html.escape(c.name))}</td>(.*?)</tr>", html).group(1)
        if c.id.endswith("tpr_at_low_fpr"):  # a rate: a percentage, as in the report
            assert f">{c.value * 100:.2f}%<" in row and ">5%<" in row  # the threshold as the sentence says it
        elif c.id.endswith(".auc"):
            assert f">{c.value:.3f}<" in row and f">[{c.interval[0]:.3f}, {c.interval[1]:.3f}]<" in row
        assert f"color:{STATUS_COLOURS[c.status]}'>{c.status}<" in row


def test_the_display_states_the_outcome_once(result):
    html = result._repr_html_()
    assert html.count("Do not publish") == 1 and "DO NOT PUBLISH" not in html
    assert _html.escape(result.verdict.finding) in html
    text = []
    result._repr_pretty_(type("Printer", (), {"text": lambda self, t: text.append(t)})(), False)
    assert text[0].startswith("Do not publish: ") and text[0].count("Do not publish") == 1
    lines = text[0].splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith("check "))
    assert [line.split("  ")[0] for line in lines[first + 1:]] == [c.name for c in rank_checks(result.checks)]


def test_every_status_word_has_its_colour_in_the_display(result):
    assert STATUS_WORDS <= set(STATUS_COLOURS)
    assert STATUS_COLOURS["shown below"] != STATUS_COLOURS["undecided"] != STATUS_COLOURS["exceeded"]
    checks = [_check(s, 0.5, (0.4, 0.6), 0.55, id=f"x.{i}") for i, s in enumerate(sorted(STATUS_WORDS))]
    shown = result.model_copy(update={"verdict": result.verdict.model_copy(update={"checks": checks})})
    html = shown._repr_html_()
    for s in STATUS_WORDS:
        assert f"<b style='color:{STATUS_COLOURS[s]}'>{s}</b>" in html


# -- plots --------------------------------------------------------------------------------------------------------


def test_the_plots_are_figures_of_the_records(result):
    records = result.records
    attacks = [n for n in result.membership if f"score_{n}" in records]
    members = records[(records["is_member"] == 1) & np.isfinite(records["pdtp"])]
    before = plt.get_fignums()

    roc = result.plot_roc()
    assert isinstance(roc, Figure)
    ax = roc.axes[0]
    labels = [line.get_label() for line in ax.lines]
    assert labels == [result.membership[n].display for n in attacks] + ["chance", "FPR of 1 non-member",
                                                                         "FPR 0.01 (checked)"]
    assert len(ax.collections) == len(attacks)  # one bootstrap band each
    assert "pointwise 99.29% bootstrap bands" in ax.get_title()

    scatter = result.plot_records()
    ax = scatter.axes[0]
    assert sum(len(c.get_offsets()) for c in ax.collections) == len(members)  # every measured member, once
    assert len(ax.lines) == 1  # the DTP threshold
    best = max(attacks, key=lambda n: result.membership[n].auc)
    assert ax.get_ylabel().startswith(f"{result.membership[best].display} score")
    assert result.plot_records("loss").axes[0].get_ylabel().startswith("loss threshold score")

    hist = result.plot_pdtp()
    ax = hist.axes[0]
    assert len(ax.patches) == 50 and sum(p.get_height() for p in ax.patches) == len(members)
    assert [line.get_label() for line in ax.lines] == ["threshold 1"]
    assert plt.get_fignums() == before  # no figure left in pyplot's keeping


def test_a_plot_draws_into_the_axes_given(result):
    fig, (left, right) = plt.subplots(1, 2)
    try:
        assert result.plot_roc(ax=left) is fig and result.plot_pdtp(ax=right) is fig
        assert left.get_xscale() == "log" and len(right.patches) == 50
    finally:
        plt.close(fig)


def test_a_plot_names_what_the_result_lacks(result):
    back = read_result(json.loads(result.to_json()))
    with pytest.raises(InvalidInputError, match=r"plot_roc\(\) draws from the per-record table.*with_records"):
        back.plot_roc()
    data = result.to_dict()
    data["skipped"].append({"name": "PDTP / DTP-1", "reason": "needs the training algorithm"})
    no_pdtp = AuditResult.from_dict(data).with_records(result.records.drop(columns="pdtp"))
    for plot in (no_pdtp.plot_pdtp, no_pdtp.plot_records):
        with pytest.raises(InvalidInputError, match=r"measured none \(PDTP / DTP-1: needs the training algorithm\)"):
            plot()
    assert isinstance(no_pdtp.plot_roc(), Figure)
    with pytest.raises(InvalidParameterError, match="attack must be one of 'loss', 'lira', 'shadow'; got 'nope'"):
        result.plot_records("nope")
    with pytest.raises(InvalidParameterError, match="ax must be a matplotlib Axes .* got 'left'"):
        result.plot_pdtp(ax="left")
    no_auc = result.to_dict()
    for m in no_auc["membership"].values():
        m["auc"] = None
    no_auc = AuditResult.from_dict(no_auc).with_records(result.records)
    with pytest.raises(InvalidParameterError, match=r"no attack's AUC was measured: name one with attack= \(one of "
                                                    r"loss, lira, shadow\)"):
        no_auc.plot_records()
    assert isinstance(no_auc.plot_records("lira"), Figure)


def test_the_report_plots_change_no_global_setting():
    """The report is rendered in the user's process (``result.save`` in a notebook): no backend switched, no
    rcParams changed, no figure left open."""
    backend, size, fignums = matplotlib.get_backend(), matplotlib.rcParams["font.size"], plt.get_fignums()
    rng = np.random.default_rng(0)
    m = np.r_[np.ones(50), np.zeros(50)]
    roc_svg({"a": (m, rng.normal(size=100) + m)}, n_boot=5)
    histogram_svg(rng.exponential(size=50), xlabel="x", title="t", threshold=1.0)
    assert (matplotlib.get_backend(), matplotlib.rcParams["font.size"], plt.get_fignums()) == (backend, size, fignums)


# -- the records scatter's polish ---------------------------------------------------------------------------------


def _beyond(fig: Figure) -> list[str]:
    return [t.get_text() for t in fig.axes[0].get_legend().get_texts() if "beyond" in t.get_text()]


@pytest.mark.parametrize("n_far, words", [(0, None), (1, "1 record beyond"), (2, "2 records beyond")])
def test_the_scatter_counts_the_records_beyond_its_axis(n_far, words):
    score = np.linspace(0, 1, 100)
    score[:n_far] = 50.0
    fig = pdtp_vs_score_figure(np.linspace(0, 2, 100), score, score_name="LiRA", threshold=1.0)
    said = _beyond(fig)
    assert (said == []) if words is None else (len(said) == 1 and said[0].startswith(words + " 3 IQR"))
    assert len(fig.axes[0].collections) == 1 + bool(n_far)
    assert fig.axes[0].get_ylabel() == "LiRA score" + (" (axis clipped)" if n_far else "")


def test_the_scatter_says_nothing_of_records_beyond_when_the_margin_holds_them():
    """A score past Tukey's fence but inside the axis' 5% margin is drawn where it is: no "0 record beyond"."""
    score = np.r_[np.linspace(0, 1, 100), 2.33]  # the fence is at 2.27, the axis ends at 2.39
    fig = pdtp_vs_score_figure(np.linspace(0, 2, 101), score, score_name="LiRA", threshold=1.0)
    assert _beyond(fig) == [] and fig.axes[0].get_ylabel() == "LiRA score"


def test_the_axis_labels_and_titles_fit_in_the_figures(result):
    """No text is cut at the figure's edge, with the longest built-in attack name and a clipped axis."""
    score = np.r_[np.linspace(0, 1, 100), 50.0]
    figures = [pdtp_vs_score_figure(np.linspace(0, 2, 101), score, score_name="shadow-model attack", threshold=1.0),
               result.plot_roc(), result.plot_pdtp()]
    for fig in figures:
        fig.draw_without_rendering()
        box = fig.bbox
        ax = fig.axes[0]
        for text in (ax.title, ax.xaxis.label, ax.yaxis.label):
            ext = text.get_window_extent()
            assert box.x0 <= ext.x0 and ext.x1 <= box.x1 and box.y0 <= ext.y0 and ext.y1 <= box.y1, text.get_text()
