"""The full profiles of chase-fig2/3/4 run at the paper's stated shadow counts, read per world (Algorithm 3's k).

The sweeps are replaced by a recorder, so these tests check the settings each figure asks for without training.
"""

import pytest

from leakaudit.reproduce import chase
from leakaudit.reproduce.chase import CONFIG, PAPER_SHADOWS


class _Res:
    accuracy = 1.0
    n_shadow = 0
    n_poison = 10


@pytest.fixture
def calls(monkeypatch):
    seen = []

    def fake_sweep(setting, cfg, p_grid, *, k=None, n_train=None, seed=0, **kw):
        seen.append({"setting": setting, "k": k or cfg["k"], "q": cfg["q"], "r": cfg["r"], "n": n_train,
                     "targets": cfg["targets"], "census_rows": cfg["census_rows"], "p": tuple(p_grid)})
        return {p: [(_Res(), 0.0)] * cfg["reps"] for p in p_grid}

    monkeypatch.setattr(chase, "_sweep", fake_sweep)
    return seen


def test_paper_shadow_counts():
    # Fig. 2: "the number of shadow models is 400"; Fig. 3: "from 50 to 2000", "only 50 shadow models" at 10%;
    # Fig. 4: "In all experiments in this figure, the number of shadow models is set to 200"
    assert PAPER_SHADOWS == {"fig2": 400, "fig3": (50, 100, 250, 500, 1000, 2000), "fig3-p10": 50, "fig4": 200}


def test_fig2_full_uses_400_per_world_and_enron_queries(calls):
    chase.fig2("full", 0)
    assert {c["k"] for c in calls} == {400}
    assert {c["q"] for c in calls} == {chase.PAPER_Q_ENRON} == {500}
    assert {c["n"] for c in calls} == {1000} and {c["r"] for c in calls} == {1000}


def test_fig3_full_sweeps_the_papers_axis_per_world(calls):
    rows = chase.fig3("full", 0)
    assert [c["k"] for c in calls if c["p"] == (0.01,)] == [50, 100, 250, 500, 1000, 2000]
    assert [c["k"] for c in calls if c["p"] == (0.10,)] == [50]
    assert rows[-1].quantity.startswith("census-random p=0.10 accuracy with k=50/world (100 in all)")
    assert {c["census_rows"] for c in calls} == {None}  # the whole Census


def test_fig4_full_uses_200_per_world_at_every_n(calls):
    chase.fig4("full", 0)
    assert [c["n"] for c in calls] == [100, 250, 500, 1000, 1500]
    assert {c["k"] for c in calls} == {200}


def test_reduced_profiles_keep_their_counts(calls):
    chase.fig2("reduced", 0)
    chase.fig4("reduced", 0)
    assert {c["k"] for c in calls} == {CONFIG["reduced"]["k"]} == {50}
    assert {c["q"] for c in calls} == {CONFIG["reduced"]["q"]}
