"""Scored texts kept across audits (leakaudit.lm.score.score_texts_cached): the same model and texts are scored
once, anything that can change a number is in the key, a damaged entry is scored again, and an audit with a cache
gives the audit without one."""

import numpy as np
import pytest

from leakaudit.lm import score as score_mod
from leakaudit.lm.load import load_causal_lm
from leakaudit.lm.score import score_texts, score_texts_cached


def _same(a, b):
    for k in ("logprobs", "mean", "std", "correct"):
        x, y = getattr(a, k), getattr(b, k)
        assert (x is None) == (y is None)
        if x is not None:
            assert len(x) == len(y) and all(np.array_equal(u, v) for u, v in zip(x, y))
    assert (a.n_truncated, a.max_length) == (b.n_truncated, b.max_length)
    assert (a.truncated is None and b.truncated is None) or np.array_equal(a.truncated, b.truncated)


def test_a_model_scores_the_same_texts_once(tiny_demo, tiny_texts, tmp_path, monkeypatch):
    lm = load_causal_lm(tiny_demo.target_dir)
    texts = tiny_texts[0][:10]
    first = score_texts_cached(tmp_path, lm.model, lm.tokenizer, texts, max_length=32)
    _same(first, score_texts(lm.model, lm.tokenizer, texts, max_length=32))
    calls = []
    monkeypatch.setattr(score_mod, "score_texts", lambda *a, **k: calls.append(1) or score_texts(*a, **k))
    _same(first, score_texts_cached(tmp_path, lm.model, lm.tokenizer, texts, max_length=32, n_threads=1))
    assert calls == []  # read back: the threads change no number, so they are not in the key
    score_texts_cached(tmp_path, lm.model, lm.tokenizer, texts, max_length=16)
    score_texts_cached(tmp_path, lm.model, lm.tokenizer, texts[:9], max_length=32)
    score_texts_cached(tmp_path, lm.model, lm.tokenizer, texts, max_length=32, distribution=False)
    assert len(calls) == 3 and len(list((tmp_path / "lm_scores").glob("*.npz"))) == 4
    ref = load_causal_lm(tiny_demo.base_dir)  # other weights, the same tokenizer: another entry
    score_texts_cached(tmp_path, ref.model, ref.tokenizer, texts, max_length=32)
    assert len(calls) == 4


def test_a_damaged_entry_is_scored_again(tiny_demo, tiny_texts, tmp_path):
    lm = load_causal_lm(tiny_demo.target_dir)
    texts = tiny_texts[1][:5]
    first = score_texts_cached(tmp_path, lm.model, lm.tokenizer, texts, max_length=lm.context_length)
    (entry,) = (tmp_path / "lm_scores").glob("*.npz")
    entry.write_bytes(b"PK\x03\x04 not a zip")
    for _ in range(2):  # scored again, then read from the entry that replaced the damaged one
        _same(first, score_texts_cached(tmp_path, lm.model, lm.tokenizer, texts, max_length=lm.context_length))


def test_an_audit_with_a_cache_gives_the_audit_without_one(tiny_demo, tiny_texts, tmp_path):
    import leakaudit

    lm = load_causal_lm(tiny_demo.target_dir)
    ref = load_causal_lm(tiny_demo.base_dir)
    members, nonmembers = tiny_texts
    kw = dict(tokenizer=lm.tokenizer, references=[ref.model], profile="smoke", extraction=False, verbose=False)
    plain = leakaudit.audit(lm.model, members, nonmembers, **kw)
    for _ in range(2):  # the second reads every model's scores from the cache
        cached = leakaudit.audit(lm.model, members, nonmembers, cache_dir=str(tmp_path), **kw)
        for name, m in plain.membership.items():
            assert cached.membership[name].auc == pytest.approx(m.auc, abs=0)
    assert len(list((tmp_path / "lm_scores").glob("*.npz"))) == 2

