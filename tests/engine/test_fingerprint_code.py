"""The cache key names leakaudit's training code, not only its version: a changed learner in a checkout (same
version) does not reuse the outputs its older code cached."""

import numpy as np

from leakaudit.engine import Engine
from leakaudit.engine import _fingerprint as fp
from leakaudit.learners import LogisticRegression


def test_digest_covers_the_learners_sources_and_enters_the_fingerprint(monkeypatch):
    digest = fp.training_code_digest()
    assert len(digest) == 16 and int(digest, 16) >= 0
    assert fp.learner_fingerprint(LogisticRegression())["versions"]["leakaudit"].endswith("+" + digest)
    monkeypatch.setattr(fp, "training_code_digest", lambda: "0" * 16)
    assert fp.learner_fingerprint(LogisticRegression())["versions"]["leakaudit"].endswith("+" + "0" * 16)


def test_changed_training_code_misses_the_cache(tmp_path, monkeypatch):
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(60, 3)), rng.integers(0, 2, 60)
    subsets, seeds = [np.arange(40), np.arange(20, 60)], [1, 2]
    eng = Engine(cache_dir=tmp_path, progress=False)
    eng.predict_many(LogisticRegression(), X, y, subsets, seeds, X)
    eng.predict_many(LogisticRegression(), X, y, subsets, seeds, X)
    assert eng.stats.chunks_cached >= 1 and eng.stats.models_trained == 0
    monkeypatch.setattr(fp, "training_code_digest", lambda: "f" * 16)
    eng.predict_many(LogisticRegression(), X, y, subsets, seeds, X)
    assert eng.stats.models_trained == 2 and eng.stats.chunks_cached == 0
