"""chase-gender-visibility: the sex-proxy screen and the smoke run (synthetic stand-in)."""

import numpy as np
import pandas as pd

from leakaudit import reproduce as rep
from leakaudit.reproduce.chase import sex_proxies


def _frame(n=4000, seed=0):
    rng = np.random.default_rng(seed)
    female = rng.random(n) < 0.5
    flip = rng.random(n) < 0.1  # a strong proxy: sex with 10% of rows flipped (gain about 0.4)
    return pd.DataFrame({
        "sex": np.where(female, "Female", "Male"),
        "household": np.where(female ^ flip, "Spouse", "Householder"),
        "noise": rng.choice(["a", "b", "c"], size=n),
        "hours": rng.normal(40, 5, size=n) - 4 * female,  # numeric, cut at deciles (gain about 0.3)
        "age": rng.normal(40, 10, size=n),
    })


def test_sex_proxies_finds_the_proxies_best_first():
    got = sex_proxies(_frame(), np.arange(4000))
    names = [c for c, _ in got]
    assert names == ["household", "hours"]
    assert 0.35 < got[0][1] < 0.45 and got[1][1] >= 0.05
    # a subset of rows is what is screened (the adversary's pool), and the threshold is respected
    assert sex_proxies(_frame(), np.arange(1000), min_gain=0.45) == []


def test_smoke_run_measures_the_synthetic_bit(tmp_path):
    rep.load_all()
    res = rep.run("chase-gender-visibility", profile="smoke", out=tmp_path, random_state=0)
    rows = {r["quantity"]: r for r in res["rows"]}
    assert all(q.startswith("[synthetic]") and r["status"] == "no-paper-value" for q, r in rows.items())
    # the poisoned bit is visible at p = 0.10 in every seed: its rows labelled 1 move between the worlds
    shift = rows["[synthetic] random bit 0.4/0.6, LR C=1: attacked group labelled 1, shift between worlds, p=0.10"]
    assert len(shift["values"]) == 5 and min(shift["values"]) > 0


def test_census_rows_full_profile_keeps_every_row(monkeypatch):
    import leakaudit.data
    from leakaudit.reproduce import chase

    class _Fake:
        def __len__(self):
            return 50

        def subset(self, idx):
            return ("subset", tuple(idx))

    fake = _Fake()
    monkeypatch.setattr(leakaudit.data, "load_census_kdd", lambda: fake)
    chase._census_rows.cache_clear()
    try:
        assert chase._census_rows(None, 0) is fake  # full profile: the whole Census
        kind, idx = chase._census_rows(20, 0)  # reduced: a seeded subset, sorted, without repeats
        assert kind == "subset" and len(set(idx)) == 20 and list(idx) == sorted(idx)
    finally:
        chase._census_rows.cache_clear()
