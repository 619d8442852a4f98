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
        seen.append({"setting": setting, "k": k or chase._per_source(cfg, "k", setting),
                     "q": chase._per_source(cfg, "q", setting), "r": cfg["r"], "n": n_train,
                     "targets": cfg["targets"], "census_rows": cfg["census_rows"], "p": tuple(p_grid)})
        return {p: [(_Res(), 0.0)] * cfg["reps"] for p in p_grid}

    monkeypatch.setattr(chase, "_sweep", fake_sweep)
    return seen


def test_paper_shadow_counts():
    # Fig. 2: "the number of shadow models is 400"; Fig. 3: "from 50 to 2000", "only 50 shadow models" at 10%;
    # Fig. 4: "In all experiments in this figure, the number of shadow models is set to 200"
    assert PAPER_SHADOWS == {"fig2": 400, "fig3": (50, 100, 250, 500, 1000, 2000), "fig3-p10": 50, "fig4": 200,
                             "table2": 600, "table2-n10000": 1000}


def test_fig2_full_uses_400_per_world_and_enron_queries(calls):
    chase.fig2("full", 0)
    assert {c["k"] for c in calls} == {400}
    assert {c["q"] for c in calls} == {chase.PAPER_FIG1["spam"]["q"]} == {500}
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


def test_reduced_profiles_use_their_sources_counts(calls):
    chase.fig2("reduced", 0)
    chase.fig4("reduced", 0)
    # Fig. 2 runs on SpamAssassin, Fig. 4 on Census: each gets its source's reduced k and q
    spam, census = CONFIG["reduced"]["k"]["spam"], CONFIG["reduced"]["k"]["census"]
    assert {(c["setting"], c["k"], c["q"]) for c in calls} == {("enron-random", spam, 150),
                                                                ("census-random", census, 300)}
    assert (spam, census) == (100, 50)


def test_fig56_full_covers_every_fig1_lr_property(monkeypatch):
    from types import SimpleNamespace

    import numpy as np

    from leakaudit.property import game, poison

    seen = []

    class _D:
        X = np.zeros((30, 2))

        def __len__(self):
            return 30

    def fake_play(learner, data, vic, *, t0, t1, n_train, poison, X_query, n_targets, random_state):
        seen.append((t0, t1, n_train, n_targets))
        return SimpleNamespace(utility={"precision": [0.5], "recall": [0.5], "accuracy": [0.5]})

    monkeypatch.setattr(chase, "_data", lambda *a, **k: _D())
    monkeypatch.setattr(game, "split_pools", lambda n, random_state: (np.arange(10), np.arange(10, 30)))
    monkeypatch.setattr(poison, "choose_poison", lambda *a, **k: SimpleNamespace(variant="X+1"))
    monkeypatch.setattr(game, "play_game", fake_play)
    rows = chase.fig56("full", 0)
    settings = {r.quantity.split(" target")[0] for r in rows}
    assert settings == set(chase.FIG1_LR_SETTINGS) == {"census-random", "census-gender", "census-race",
                                                       "enron-random", "enron-negative"}
    # the paper's training sizes (1,000 Census, 2,000 Enron) and 50 targets per game
    assert {(n, k) for _, _, n, k in seen} == {(1000, 50), (2000, 50)}
    seen.clear()
    rows = chase.fig56("reduced", 0)
    assert {r.quantity.split(" target")[0] for r in rows} == {"census-gender", "enron-random"}
