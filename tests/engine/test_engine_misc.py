"""Fingerprints, the progress bar, and the chunked bank."""

import time

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from _engine_learners import CentroidBank, CentroidLearner
from leakaudit.engine import ChunkedModelBank, array_fingerprint, learner_fingerprint
from leakaudit.engine._fingerprint import Unfingerprintable, chunk_key
from leakaudit.engine._progress import ProgressBar
from leakaudit.learners import SklearnLearner


def test_array_fingerprint_sees_dtype_shape_and_bytes():
    a = np.arange(6.0)
    fp = array_fingerprint(a)
    assert fp == array_fingerprint(a.copy()) == array_fingerprint(np.asfortranarray(a))
    assert fp != array_fingerprint(a.reshape(2, 3))
    assert fp != array_fingerprint(a.astype(np.float32))
    b = a.copy()
    b[3] = np.nextafter(b[3], 10)
    assert fp != array_fingerprint(b)


def test_learner_fingerprint_stable_and_sensitive():
    base = SklearnLearner(make_pipeline(StandardScaler(), LogisticRegression(C=2.0)))
    assert learner_fingerprint(base) == learner_fingerprint(clone(base))
    other = SklearnLearner(make_pipeline(StandardScaler(), LogisticRegression(C=2.0000001)))
    assert learner_fingerprint(base) != learner_fingerprint(other)
    assert learner_fingerprint(CentroidLearner()) != learner_fingerprint(CentroidLearner(jitter=0.2))
    # n_jobs and verbose do not change which models come out.
    assert learner_fingerprint(base) == learner_fingerprint(clone(base).set_params(n_jobs=4))


def test_unfingerprintable_values():
    with pytest.raises(Unfingerprintable, match="lambda"):
        learner_fingerprint(SklearnLearner(LogisticRegression(C=lambda: 1)))  # type: ignore[arg-type]
    with pytest.raises(Unfingerprintable, match="random generator"):
        learner_fingerprint(SklearnLearner(LogisticRegression(random_state=np.random.default_rng(0))))


def test_chunk_key_is_a_sha256_of_everything():
    kw = dict(kind="predict_proba", learner_fp={"a": 1}, data_fp="d", query_fp="q", n_classes=2,
              subsets_fp="s", seeds=[1, 2])
    k = chunk_key(**kw)
    assert len(k) == 64 and int(k, 16) >= 0
    for name, value in [("kind", "state"), ("learner_fp", {"a": 2}), ("data_fp", "e"), ("query_fp", None),
                        ("n_classes", 3), ("subsets_fp", "t"), ("seeds", [2, 1])]:
        assert chunk_key(**{**kw, name: value}) != k


def test_progress_silent_when_disabled_or_not_a_terminal(capsys):
    for enabled in (False, None):  # pytest's captured stdout is not a terminal
        bar = ProgressBar(10, "x", enabled=enabled, delay=0.0)
        time.sleep(0.05)
        bar.advance(10)
        bar.close()
        assert not bar.shown
    assert capsys.readouterr().out == ""


def test_progress_shows_after_delay_only():
    quick = ProgressBar(5, "quick", enabled=True, delay=5.0)
    quick.advance(5)
    quick.close()
    assert not quick.shown
    slow = ProgressBar(5, "slow", enabled=True, delay=0.01)
    time.sleep(0.2)
    slow.advance(3)
    assert slow.shown and slow.completed == 3
    slow.close()


def test_chunked_bank_loads_one_chunk_at_a_time():
    rng = np.random.default_rng(0)
    cents = rng.normal(size=(7, 3, 2))
    loads = []

    def loader(a, b):
        def load():
            loads.append(a)
            return CentroidBank(cents[a:b], 1.0)
        return load

    bank = ChunkedModelBank([(3, loader(0, 3)), (3, loader(3, 6)), (1, CentroidBank(cents[6:], 1.0))], 3)
    Xq = rng.normal(size=(4, 2))
    np.testing.assert_array_equal(bank.predict_proba(Xq), CentroidBank(cents, 1.0).predict_proba(Xq))
    assert loads == [0, 3]
    np.testing.assert_array_equal(bank.model(4).predict_proba(Xq)[0], CentroidBank(cents, 1.0).predict_proba(Xq)[4])
    bank.model(5)  # chunk 1 is still the loaded one: not reloaded
    assert loads == [0, 3]
    bank.model(0)  # chunk 0 replaces it
    assert loads == [0, 3, 0] and bank._loaded[0] == 0


def test_engine_progress_bar_counts_models(monkeypatch, capsys):
    from _engine_learners import make_data, make_subsets
    from leakaudit.engine import Engine

    monkeypatch.setattr(Engine, "progress_delay", 0.0)
    monkeypatch.setenv("LEAKAUDIT_TEST_DELAY", "0.02")
    X, y = make_data()
    Engine(chunk_size=2, progress=True).predict_many(CentroidLearner(), X, y, make_subsets(len(X), 10, 50), 0, X[:3])
    out = capsys.readouterr().out
    assert "10/10" in out and "training CentroidLearner" in out
    Engine(chunk_size=2, progress=False).predict_many(CentroidLearner(), X, y, make_subsets(len(X), 10, 50), 0, X[:3])
    assert capsys.readouterr().out == ""


def test_frame_parameters_are_fingerprinted_by_content_names_and_dtypes():
    import pandas as pd

    from leakaudit.engine._fingerprint import _canonical

    f = pd.DataFrame({"age": [30, 40], "sex": ["F", "M"]})
    base = _canonical(f, "frame")
    assert base == _canonical(f.copy(), "frame")
    assert base != _canonical(f.assign(age=[30, 41]), "frame")  # a value
    assert base != _canonical(f.rename(columns={"age": "years"}), "frame")  # a column name
    assert base != _canonical(f.astype({"age": float}), "frame")  # a dtype
    assert base != _canonical(f.iloc[::-1], "frame")  # row order
