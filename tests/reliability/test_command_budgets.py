"""Counts a command is given (repeats, models, games, a data set's size) are bounded before any work starts: what they
would take is estimated against the work and memory budgets and refused in one line naming the estimate, the budget
and what to lower; never a hang, a MemoryError or the kernel's OOM killer (each case below ran until killed, or until
25 s, before)."""

from __future__ import annotations

import time

import numpy as np
import pytest

from leakaudit.engine import check_work, using_work_budget
from leakaudit.exceptions import InvalidParameterError

HUGE = 10**12


@pytest.fixture(scope="module")
def xy():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 5))
    return X, (X[:, 0] > 0).astype(int)


def _fast(call, match: str, seconds: float = 5.0) -> None:
    t0 = time.perf_counter()
    with pytest.raises(InvalidParameterError, match=match):
        call()
    assert time.perf_counter() - t0 < seconds


def test_check_work_names_the_estimate_the_budget_and_the_fix():
    with using_work_budget("1e6"):
        assert check_work(1e6, "x", fix="y") == 1e6
        with pytest.raises(InvalidParameterError, match=r"^10 models would take at least 2e\+06 steps, over the "
                                                        r"work budget of 1e\+06 steps \(LEAKAUDIT_WORK_BUDGET\); "
                                                        r"train fewer$"):
            check_work(2e6, "10 models", fix="train fewer")


def test_pdtp_repeats_and_noise_floor_models(xy):
    from leakaudit.dtp import pdtp, seed_noise_floor
    from leakaudit.dtp.pdtp import pdtp_models
    from leakaudit.learners import LogisticRegression, NaiveBayes, RandomForest

    X, y = xy
    # a closed form: repeats cost no training, but each keeps its values
    _fast(lambda: pdtp(NaiveBayes(categorical="none"), X, y, n_repeats=HUGE), r"keeps every repeat's values: about .* GiB, over the "
                                                             r"memory budget")
    # retraining: every repeat retrains the full model and each record's (counted by pdtp_models), except for a
    # learner whose seed does not matter, whose first repeat serves them all
    assert pdtp_models(RandomForest(), 200, 3) == 3 * 201
    assert pdtp_models(LogisticRegression(), 200, 3, method="retrain") == 201
    assert pdtp_models(NaiveBayes(categorical="none"), 200, 3) == 1
    _fast(lambda: seed_noise_floor(NaiveBayes(categorical="none"), X, y, n_models=HUGE), r"seed noise floor over 1,000,000,000,000 "
                                                                       r"models .* over the work budget")
    # what the budget allows still runs
    assert np.shape(pdtp(NaiveBayes(categorical="none"), X, y, n_repeats=3).per_repeat) == (3, 200)


def test_property_ensemble_shadows_and_targets():
    from leakaudit.property.attack import PoisoningPropertyAttack
    from leakaudit.property.game import logistic_learner, play_game, split_pools
    from leakaudit.property.synthetic import make_property_data
    from leakaudit.property.queries import select_queries

    data = make_property_data(400, 5, random_state=0)[0]
    adv, vic = split_pools(len(data), random_state=0)
    _fast(lambda: select_queries(logistic_learner(), data, adv, n_train=100, n_ensemble=HUGE),
          r"clean ensemble of 1,000,000,000,000 models .* over the work budget")
    attack = PoisoningPropertyAttack(t0=0.2, t1=0.4, poison_rate=0.05, n_train=100, n_shadow=HUGE)
    _fast(lambda: attack.fit(data, adv), r"2,000,000,000,000 shadow models .* over the work budget")
    _fast(lambda: play_game(logistic_learner(), data, vic, t0=0.2, t1=0.4, n_train=100, poison=None,
                            X_query=data.X[:5], n_targets=HUGE), r"1,000,000,000,000 target models .* over the work "
                                                                 r"budget")


def test_mip_splits_games_and_prop9_size():
    from leakaudit.mip.audit import enumerate_splits, simulate_bayes_attacker
    from leakaudit.mip.examples import prop9_dataset
    from leakaudit.mip.noise import MIPNoise

    # math.comb(10**12, 5 * 10**11) alone ran for minutes before the limit was compared
    _fast(lambda: enumerate_splits(HUGE), r"about 10\^301029995\d+\.\d splits is too many to enumerate")
    _fast(lambda: prop9_dataset(HUGE), r"n must be in \[4, 1024\]")
    x = np.arange(12.0)
    _fast(lambda: simulate_bayes_attacker(lambda X, y, idx, rs: np.array([X[idx].sum()]), x, None,
                                          MIPNoise((1.0,), 2.0, 1.0, "laplace"), targets=[0], n_games=HUGE),
          r"random halves \(n_reference \+ n_games\) of 12 records would take about .* GiB .* over the memory budget")


@pytest.mark.parametrize("argv, words", [
    (["dtp", "pdtp", "--repeats", str(10**9)], "keeps every repeat's values"),
    (["dtp", "pdtp", "--noise-floor", str(10**12)], "seed noise floor over"),
    (["dtp", "pdtp", "--model", "mlp", "--repeats", str(10**6)], "repeats (--repeats)"),
    (["membership", "--n-members", str(10**9)], "bytes a row), over the memory budget"),
    (["membership", "--n-reference", str(10**8)], "reference models over"),
    (["attribute", "--dataset", "adult", "--attribute", "sex", "--n-members", str(10**9)],
     "room for 10 to 24,416 members"),
    (["dp-audit", "--epsilon", "1", "--hidden", str(10**9)], "MLP of at least 4,000,000,002 parameters"),
    (["dp-audit", "--epsilon", "1", "--m", str(10**9)], "the --m canaries"),
    (["dp-audit", "--epsilon", "1", "--epochs", str(10**9)], "epochs of DP-SGD over 5,000 rows"),
    (["mip", "audit", "--n", str(HUGE), "--eta", "0.1"], "n must be in [4, 1024]"),
    (["mip", "audit", "--eta", "0.1", "--method", "simulate", "--games", str(HUGE)], "random halves"),
])
def test_the_commands_refuse_in_one_line(argv, words, capsys):
    from leakaudit.cli import main

    t0 = time.perf_counter()
    rc = main(argv)
    err = capsys.readouterr().err
    assert rc == 2, err
    assert err.startswith("leakaudit: error: ") and err.count("\n") == 1 and words in err, err
    assert time.perf_counter() - t0 < 20


def test_language_model_canaries_and_power_curve():
    from leakaudit.lm.canary import make_canaries
    from leakaudit.lm.dataset_inference import detection_power

    texts = [f"text number {i} with some words" for i in range(50)]
    _fast(lambda: make_canaries(texts, m=HUGE, design="new_token"), r"1,000,000,000,000 canaries of 8 secret tokens "
                                                                      r"would take about .* over the memory budget")
    _fast(lambda: make_canaries(texts, m=10, design="new_token", secret_length=HUGE), r"shorter secrets")
    rng = np.random.default_rng(0)
    x = rng.normal(size=(60, 3))
    _fast(lambda: detection_power(x, x + 0.1, n_repeats=HUGE), r"power curve of 1,000,000,000,000 draws .* over the "
                                                                r"work budget")
    assert detection_power(x, x + 0.1, n_repeats=5, sizes=[10]).n_repeats == 5


def test_an_encoding_past_the_memory_limit_is_refused_naming_the_column(tmp_path, capsys, monkeypatch):
    """A one-hot column of 32,000 distinct values over 32,000 rows ended in a MemoryError line (or the OOM killer):
    now refused before encoding, with the size, the estimate and the column."""
    import pandas as pd

    from leakaudit.cli import main
    from leakaudit.engine import using_memory_budget

    rng = np.random.default_rng(0)
    for name, rows in (("train", range(0, 3000)), ("test", range(3000, 6000))):
        pd.DataFrame({"id": [f"c{i}" for i in rows], "x": rng.normal(size=3000),
                      "label": [i % 2 for i in rows]}).to_csv(tmp_path / f"{name}.csv", index=False)
    argv = ["audit", "--train", str(tmp_path / "train.csv"), "--test", str(tmp_path / "test.csv"), "--label", "label",
            "--check-inputs", "--out", str(tmp_path / "out")]
    import leakaudit.engine._store as store

    monkeypatch.setattr(store, "default_memory_budget", lambda: 64 * 2**20)  # a quarter of memory: 64 MiB
    with using_memory_budget("64MB"):
        rc = main(argv)
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1, err
    assert ("6,000 rows x 6,001 columns (one-hot 'id': 6,000 values): about 274.7 MiB, over the memory budget of "
            "64.0 MiB" in err)
