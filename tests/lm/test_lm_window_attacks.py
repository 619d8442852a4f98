"""The window attacks (WBC's window votes against a reference, window Min-K%++ votes): token-local evidence on
hand-made per-token scores, their registration, the blind baseline's guard, determinism."""

import numpy as np
import pytest

from leakaudit.exceptions import InvalidInputError
from leakaudit.lm.attacks import (WINDOWS, loss_score, min_k_plus_plus_score, reference_score, run_lm_attacks,
                                  window_means, window_min_k_plus_plus_score, window_reference_score)
from leakaudit.lm.score import TokenScores


def _scores(*logprobs, std=1.0):
    """TokenScores whose next-token distribution has mean -3 and standard deviation ``std`` at every position."""
    lp = tuple(np.asarray(a, float) for a in logprobs)
    return TokenScores(lp, mean=tuple(np.full(a.size, -3.0) for a in lp), std=tuple(np.full(a.size, std) for a in lp))


@pytest.fixture
def span_and_flat():
    """Two 64-token texts with the same mean log-probability, both as likely as the reference on the whole (-3 at
    every token): text 0 holds one memorised 16-token span (+2.4 over the reference) in slightly worse text (-0.8),
    text 1 is no likelier anywhere (+-0.5 alternating). The next-token distribution has mean -3 and std 1, so the
    standardised scores are the same differences."""
    span = np.full(64, -0.8)
    span[24:40] = 2.4
    flat = np.tile([0.5, -0.5], 32)
    return _scores(span - 3, flat - 3), _scores(np.full(64, -3.0), np.full(64, -3.0))


def test_one_memorised_span_scores_above_a_text_the_whole_text_scores_tie_with(span_and_flat):
    ts, ref = span_and_flat
    assert loss_score(ts)[0] == pytest.approx(loss_score(ts)[1])
    assert reference_score(ts, [ref])[0] == pytest.approx(reference_score(ts, [ref])[1])
    assert min_k_plus_plus_score(ts)[0] < min_k_plus_plus_score(ts)[1]  # its lowest 20% sit in the worse text
    for w in (window_reference_score(ts, [ref]), window_min_k_plus_plus_score(ts)):
        assert w[0] > w[1]
        # the flat text wins only single tokens' votes (half of them); every longer window of it ties at 0
        assert w[1] == pytest.approx(0.5 / len(WINDOWS))
    # a text a little likelier than the reference at every token wins every vote
    assert window_reference_score(_scores(np.full(10, -2.9)), [_scores(np.full(10, -3.0))])[0] == 1.0


def test_window_means_match_a_loop_over_texts_of_any_length():
    rng = np.random.default_rng(0)
    vals = tuple(rng.normal(size=t) for t in (1, 5, 40, 33, 100))
    for w in (1, 8, 32):
        means, n = window_means(vals, w)
        for v, row, k in zip(vals, means, n):
            ww = min(w, v.size)
            loop = [v[s:s + ww].mean() for s in range(v.size - ww + 1)]
            assert k == len(loop) and np.allclose(row[:k], loop) and np.all(np.isneginf(row[k:]))


def test_references_are_averaged_and_another_tokenizer_is_read_at_relative_positions(span_and_flat):
    ts, ref = span_and_flat
    lower, higher = _scores(*[np.full(64, -3.5)] * 2), _scores(*[np.full(64, -2.5)] * 2)
    assert np.allclose(window_reference_score(ts, [lower, higher]), window_reference_score(ts, [ref]))
    longer = _scores(np.full(80, -3.0), np.full(50, -3.0))  # other token counts, the same constant
    assert np.allclose(window_reference_score(ts, [longer]), window_reference_score(ts, [ref]))
    with pytest.raises(InvalidInputError, match="at least one"):
        window_reference_score(ts, [])
    with pytest.raises(InvalidInputError, match="mean and std"):
        window_min_k_plus_plus_score(TokenScores(ts.logprobs))


def test_registered_as_text_attacks_with_their_needs():
    from leakaudit.membership import ATTACKS, text_attacks

    assert ATTACKS.get("lm_window_reference").needs == {"references"}
    assert ATTACKS.get("lm_window_min_k_pp").needs == {"distribution"}
    assert {"lm_window_reference", "lm_window_min_k_pp"} <= set(text_attacks(True, True))
    assert "lm_window_reference" not in text_attacks(True, False)
    assert "lm_window_min_k_pp" not in text_attacks(False, True)
    assert "lm_window_min_k_pp" in text_attacks(True, False)
    assert all(ATTACKS.get(n).audit == "always" for n in ("lm_window_reference", "lm_window_min_k_pp"))


def test_deterministic_and_run_by_run_lm_attacks(span_and_flat):
    ts, ref = span_and_flat
    texts = ["a text with a span", "a flat text"]
    a, b = run_lm_attacks(ts, texts, [ref]), run_lm_attacks(ts, texts, [ref])
    for name in ("lm_window_reference", "lm_window_min_k_pp"):
        assert np.array_equal(a[name], b[name])
    assert np.array_equal(a["lm_window_reference"], window_reference_score(ts, [ref], windows=WINDOWS))
    assert "lm_window_reference" not in run_lm_attacks(ts, texts)


def test_blind_baseline_guards_the_window_attacks():
    """The language-model step judges every attack run_lm_attacks returns against the blind baseline: on a split the
    texts alone tell apart, a window attack that does not beat it is not measurable."""
    from leakaudit.audit.result.checks import NOT_MEASURABLE
    from leakaudit.audit.steps.lm import _blind_check
    from leakaudit.lm.blind import blind_baseline

    rng = np.random.default_rng(0)
    n = 60
    # members are about cats, non-members about ships; the model's scores carry no signal
    texts = [f"the cat number {i} sat on the mat and purred" for i in range(n)] + \
            [f"a ship number {i} sailed over the grey sea" for i in range(n)]
    m = np.r_[np.ones(n, int), np.zeros(n, int)]
    lp = [rng.normal(-3, 1, size=20) for _ in range(2 * n)]
    ts = TokenScores(tuple(lp), mean=tuple(np.full(20, -3.0) for _ in lp), std=tuple(np.ones(20) for _ in lp))
    ref = TokenScores(tuple(rng.normal(-3, 1, size=20) for _ in range(2 * n)))
    scores = run_lm_attacks(ts, texts, [ref])
    bb = blind_baseline(texts, m, versus=scores, alpha=0.01, n_boot=50, random_state=0)
    assert {"lm_window_reference", "lm_window_min_k_pp"} <= set(bb.versus)
    metrics = {k: {"display": k} for k in scores}
    check, standing = _blind_check(bb, metrics, 0.99)
    assert check.status == NOT_MEASURABLE
    assert not {"lm_window_reference", "lm_window_min_k_pp"} & standing
