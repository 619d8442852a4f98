"""leakaudit.lm on the tiny demo model: loading, batched scoring against one text at a time, the attacks on known
truth, the scores-only input, and the blind baseline."""

import numpy as np
import pytest

from leakaudit.exceptions import InvalidInputError, InvalidParameterError
from leakaudit.lm.attacks import (
    min_k_plus_plus_score,
    min_k_score,
    run_lm_attacks,
    zlib_score,
)
from leakaudit.lm.blind import blind_baseline
from leakaudit.lm.load import load_causal_lm
from leakaudit.lm.score import score_texts, scores_from_arrays
from leakaudit.metrics import auc


@pytest.fixture(scope="module")
def loaded(tiny_demo):
    return load_causal_lm(tiny_demo.target_dir), load_causal_lm(tiny_demo.base_dir)


def test_loaded_model_describes_itself(loaded, tiny_demo):
    lm, _ = loaded
    assert lm.context_length == 128
    assert 50_000 < lm.n_parameters < 1_000_000
    assert "GPT2LMHeadModel" in lm.description and str(tiny_demo.target_dir) in lm.description


def test_batched_scores_equal_one_text_at_a_time(loaded, tiny_texts):
    """Padding and batching change nothing: each text's token log-probabilities match its own forward pass."""
    import torch

    lm, _ = loaded
    texts = tiny_texts[0][:6] + tiny_texts[1][:6]
    batched = score_texts(lm.model, lm.tokenizer, texts, max_length=lm.context_length, batch_tokens=2048)
    for i, t in enumerate(texts):
        ids = [lm.tokenizer.bos_token_id] + lm.tokenizer(t)["input_ids"]
        ids = ids[: lm.context_length]
        with torch.inference_mode():
            logp = torch.log_softmax(lm.model(input_ids=torch.tensor([ids])).logits[0, :-1].float(), -1)
        own = logp.gather(-1, torch.tensor(ids[1:]).unsqueeze(-1)).squeeze(-1).numpy()
        np.testing.assert_allclose(batched.logprobs[i], own, atol=1e-4)
        # the distribution's moments: mean of log p under p, and its standard deviation
        p = logp.exp()
        mu = (p * logp).sum(-1).numpy()
        np.testing.assert_allclose(batched.mean[i], mu, atol=1e-4)
        sd = np.sqrt(np.maximum(((p * logp * logp).sum(-1).numpy() - mu**2), 0))
        np.testing.assert_allclose(batched.std[i], sd, atol=1e-3)


def test_prefix_scores_each_texts_own_tokens_after_the_prefix(loaded, tiny_texts):
    """ReCaLL's conditioned scores: the same tokens of each text as without the prefix, each computed by the model
    on prefix + text (one forward pass per text, by hand); a text cut to the room the prefix leaves is counted."""
    import torch

    from leakaudit.lm.attacks import recall_score

    lm, _ = loaded
    texts = tiny_texts[0][:3] + tiny_texts[1][:3]
    prefix = tiny_texts[1][-1][:60]
    plain = score_texts(lm.model, lm.tokenizer, texts, max_length=lm.context_length, distribution=False)
    cond = score_texts(lm.model, lm.tokenizer, texts, max_length=lm.context_length, distribution=False,
                       prefix=prefix)
    pre = [lm.tokenizer.bos_token_id] + lm.tokenizer(prefix)["input_ids"]
    for i, t in enumerate(texts):
        body = lm.tokenizer(t)["input_ids"][: lm.context_length - len(pre)]
        ids = pre + body
        with torch.inference_mode():
            logp = torch.log_softmax(lm.model(input_ids=torch.tensor([ids])).logits[0, :-1].float(), -1)
        own = logp.gather(-1, torch.tensor(ids[1:]).unsqueeze(-1)).squeeze(-1).numpy()[len(pre) - 1:]
        np.testing.assert_allclose(cond.logprobs[i], own, atol=1e-4)
        assert len(cond.logprobs[i]) == min(len(plain.logprobs[i]), len(body))
        assert not np.allclose(cond.logprobs[i], plain.logprobs[i][: len(body)])
    assert cond.n_truncated == sum(len(lm.tokenizer(t)["input_ids"]) > lm.context_length - len(pre) for t in texts)
    r = recall_score(plain, cond)
    k = [len(c) for c in cond.logprobs]
    np.testing.assert_allclose(r, [c.mean() / p[:n].mean() for c, p, n in zip(cond.logprobs, plain.logprobs, k)])
    with pytest.raises(InvalidInputError, match="prefix must be a non-empty text"):
        score_texts(lm.model, lm.tokenizer, texts, prefix=" ")
    with pytest.raises(InvalidInputError, match="no room is left"):
        score_texts(lm.model, lm.tokenizer, texts, max_length=8, prefix=prefix)


def test_long_texts_are_cut_and_counted(loaded):
    lm, _ = loaded
    long = "the quick brown fox jumps over the lazy dog " * 60
    ts = score_texts(lm.model, lm.tokenizer, [long, "short text here"], max_length=lm.context_length)
    assert ts.n_truncated == 1 and ts.truncated.tolist() == [True, False]
    assert ts.n_tokens[0] == lm.context_length - 1


def test_empty_text_is_refused(loaded):
    lm, _ = loaded
    with pytest.raises(InvalidInputError, match=r"texts\[1\] is empty"):
        score_texts(lm.model, lm.tokenizer, ["fine", "   "])


def test_attacks_find_the_members_of_the_fine_tuned_model(loaded, tiny_texts):
    """Fine-tuned 15 epochs on 40 members: every attack separates them from 40 unseen texts of the same pool (the
    zlib ratio least: 0.65 measured; it divides by compressed length, which varies little among cut e-mails)."""
    lm, base = loaded
    mem, non = tiny_texts
    texts, m = mem + non, np.r_[np.ones(len(mem)), np.zeros(len(non))]
    ts = score_texts(lm.model, lm.tokenizer, texts, max_length=lm.context_length)
    rs = score_texts(base.model, base.tokenizer, texts, max_length=base.context_length, distribution=False)
    scores = run_lm_attacks(ts, texts, [rs])
    assert set(scores) == {"lm_loss", "lm_zlib", "lm_min_k", "lm_min_k_pp", "lm_reference", "lm_lira", "lm_rmia",
                           "lm_window_reference", "lm_window_min_k_pp"}
    aucs = {k: auc(m, s) for k, s in scores.items()}
    assert min(v for k, v in aucs.items() if k != "lm_zlib") > 0.8, aucs
    assert aucs["lm_zlib"] > 0.55, aucs
    # the base model never saw either set: its loss does not tell them apart
    assert abs(auc(m, run_lm_attacks(rs, texts)["lm_loss"]) - 0.5) < 0.2


def test_scores_only_input_gives_the_same_attacks():
    rng = np.random.default_rng(0)
    lp = [-rng.gamma(2.0, 1.0, size=n) for n in (5, 9, 14)]
    ts = scores_from_arrays(lp)
    np.testing.assert_allclose(run_lm_attacks(ts, ["a b", "c d", "e f"])["lm_loss"], [a.mean() for a in lp])
    # Min-K% at 20%: the mean of the ceil(0.2 T) lowest
    assert min_k_score(ts, 0.2)[1] == pytest.approx(np.sort(lp[1])[:2].mean())
    with pytest.raises(InvalidInputError, match="Min-K%\\+\\+ needs"):
        min_k_plus_plus_score(ts)
    padded = np.full((3, 14), np.nan)
    for i, a in enumerate(lp):
        padded[i, : a.size] = a
    np.testing.assert_allclose(scores_from_arrays(padded).mean_logprob(), ts.mean_logprob())
    ts2 = scores_from_arrays(lp, mean=[a * 0 - 1 for a in lp], std=[a * 0 + 2 for a in lp])
    assert min_k_plus_plus_score(ts2, 1.0)[0] == pytest.approx(((lp[0] + 1) / 2).mean())
    assert zlib_score(ts, ["aaaa", "bbbb", "cccc"]).shape == (3,)


@pytest.mark.parametrize("bad, match", [
    ([np.array([-1.0, 0.5])], "at most 0"),
    ([np.array([])], "no tokens"),
    ([np.array([-1.0, np.nan])], "NaN"),
    ([], "empty"),
])
def test_scores_only_input_is_checked(bad, match):
    with pytest.raises(InvalidInputError, match=match):
        scores_from_arrays(bad)


def test_blind_baseline_flags_a_split_that_differs_in_style():
    """Members all spam, non-members all easy ham: the texts alone tell them apart (permutation p at its floor),
    so well that even a perfect attack does not clearly beat them; a random relabelling of the same texts is not
    flagged. With a milder shift (two periods of easy ham), a perfect attack clears the blind baseline."""
    from leakaudit.lm.demo import demo_texts

    texts, groups = demo_texts(max_chars=200)
    rng = np.random.default_rng(0)
    spam = rng.choice(np.flatnonzero(groups == "spam-2"), 60, replace=False)
    ham = rng.choice(np.flatnonzero(groups == "easy-ham-1"), 60, replace=False)
    chosen = [texts[i] for i in np.r_[spam, ham]]
    m = np.r_[np.ones(60), np.zeros(60)]
    bb = blind_baseline(chosen, m, versus={"perfect": m.copy(), "noise": rng.normal(size=120)}, alpha=0.01,
                        random_state=0)
    assert bb.auc > 0.95 and bb.p_value == pytest.approx(1 / (1 + bb.n_permutations))
    assert bb.n_permutations == 2000 and 0 < bb.auc_sd < 0.1
    z = 2.33  # one-sided 99%
    perfect, noise = bb.versus["perfect"], bb.versus["noise"]
    assert perfect["auc"] == 1.0 and perfect["diff"] - z * perfect["diff_sd"] < 0
    assert noise["diff"] + z * noise["diff_sd"] < 0  # the texts alone beat a random scorer
    assert auc(m, bb.scores) == pytest.approx(bb.auc)
    shuffled = rng.permutation(m)
    null = blind_baseline(chosen, shuffled, alpha=0.05, n_boot=0, random_state=0)
    assert null.p_value > 0.05 and null.auc < 0.75
    # the permutation null's spread is at least a fixed scorer's (out-of-fold scores are dependent)
    assert null.null_sd > 0.9 * np.sqrt(121 / (12 * 60 * 60))
    early = rng.choice(np.flatnonzero(groups == "easy-ham-1"), 60, replace=False)
    late = rng.choice(np.flatnonzero(groups == "easy-ham-2"), 60, replace=False)
    mild = blind_baseline([texts[i] for i in np.r_[early, late]], m, versus={"perfect": m.copy()}, alpha=0.01,
                          random_state=0)
    assert mild.auc < 0.9 and mild.versus["perfect"]["diff"] - z * mild.versus["perfect"]["diff_sd"] > 0


def test_blind_baseline_keeps_near_duplicates_in_one_fold():
    """Ten copies of one text (slightly edited) and distinct others: the copies form one group, so one fold."""
    from leakaudit.lm.blind import _folds, _groups, _kernels
    from leakaudit.lm.demo import demo_texts

    texts, _ = demo_texts(max_chars=200)
    docs = [texts[0] + f" {i}" for i in range(10)] + texts[1:51]
    _, k_char = _kernels(docs)
    groups = _groups(k_char, 0.8)
    assert len(set(groups[:10])) == 1 and len(set(groups)) <= 51
    fold = _folds(groups, 5, np.random.default_rng(0))
    assert len(set(fold[:10])) == 1 and np.bincount(fold).min() >= 10


def test_blind_baseline_checks_its_inputs():
    with pytest.raises(InvalidInputError, match="is_member has 3"):
        blind_baseline(["a b", "c d"], [1, 0, 1])
    with pytest.raises(InvalidParameterError, match="alpha"):
        blind_baseline(["a b", "c d", "e f", "g h"], [1, 1, 0, 0], alpha=1.5)
    with pytest.raises(InvalidInputError, match="versus"):
        blind_baseline(["a b", "c d", "e f", "g h"], [1, 1, 0, 0], versus={"x": np.zeros(3)})


def test_rmia_with_one_reference_ranks_as_the_reference_ratio():
    from scipy.stats import spearmanr

    from leakaudit.lm.attacks import lira_score, reference_score, rmia_score

    rng = np.random.default_rng(0)
    t = [-rng.gamma(4, 1, size=20) for _ in range(50)]
    r = [np.minimum(a - rng.normal(0.3, 0.5), 0) for a in t]
    ts, rs = scores_from_arrays(t), [scores_from_arrays(r)]
    ratio = reference_score(ts, rs)
    assert spearmanr(rmia_score(ts, rs), ratio).statistic == pytest.approx(1.0)
    assert spearmanr(lira_score(ts, rs), ratio).statistic > 0.95


def test_blind_check_keeps_only_the_attacks_that_beat_the_texts():
    """The audit's rule on a hand-made blind baseline: a comparable split keeps every attack; on a split that differs
    by itself, an attack stands only if its paired lower bound clears 0, and with none standing the check is not
    measurable."""
    from leakaudit.audit.steps.lm import _blind_check
    from leakaudit.lm.blind import BlindBaseline

    metrics = {"lm_loss": {"display": "loss"}, "lm_min_k": {"display": "Min-K%"}}
    versus = {"lm_loss": {"auc": 0.95, "diff": 0.15, "diff_sd": 0.03},  # 0.15 - 2.58 x 0.03 > 0
              "lm_min_k": {"auc": 0.85, "diff": 0.05, "diff_sd": 0.03}}  # 0.05 - 2.58 x 0.03 < 0

    def bb(p, vs):
        return BlindBaseline(scores=np.zeros(4), used=np.ones(4, bool), auc=0.8, auc_sd=0.03, p_value=p,
                             n_permutations=2000, null_sd=0.05, n_groups=4, n_folds=2, n_boot=200, versus=vs)

    check, standing = _blind_check(bb(0.3, versus), metrics, 0.995)
    assert check.status == "shown below" and standing == {"lm_loss", "lm_min_k"} and "comparable" in check.sentence
    check, standing = _blind_check(bb(0.001, versus), metrics, 0.995)
    assert check.status == "shown below" and standing == {"lm_loss"} and "loss beats it" in check.sentence
    check, standing = _blind_check(bb(0.001, {"lm_min_k": versus["lm_min_k"]}), metrics, 0.995)
    assert check.status == "not measurable" and not standing and "not comparable" in check.sentence
    assert check.interval == pytest.approx((0.8 - 2.807 * 0.03, 0.8 + 2.807 * 0.03), abs=1e-3)


def test_scoring_device_cpu_changes_nothing_and_bad_devices_are_one_line(loaded, tiny_texts):
    import torch

    from leakaudit.exceptions import UnsupportedError

    lm, _ = loaded
    texts = tiny_texts[0][:4]
    base = score_texts(lm.model, lm.tokenizer, texts, max_length=lm.context_length)
    on_cpu = score_texts(lm.model, lm.tokenizer, texts, max_length=lm.context_length, device="cpu")
    for a, b in zip(base.logprobs + base.std, on_cpu.logprobs + on_cpu.std):
        assert a.tobytes() == b.tobytes()
    with pytest.raises(InvalidParameterError, match="^device must be 'cpu', 'cuda', 'cuda:N' or 'auto'; got 'gpu'"):
        score_texts(lm.model, lm.tokenizer, texts, device="gpu")
    if not torch.cuda.is_available():
        with pytest.raises(UnsupportedError, match="^device='cuda' but CUDA is not available here"):
            load_causal_lm("/nonexistent", device="cuda")  # refused before anything is read


@pytest.mark.gpu
@pytest.mark.skipif(not __import__("torch").cuda.is_available(), reason="CUDA not available")
def test_scores_on_a_gpu_match_the_cpus(tiny_demo, tiny_texts):
    cpu = load_causal_lm(tiny_demo.target_dir)
    gpu = load_causal_lm(tiny_demo.target_dir, device="cuda")
    assert next(gpu.model.parameters()).device.type == "cuda" and "on cuda" in gpu.description
    texts = tiny_texts[0][:8]
    a = score_texts(cpu.model, cpu.tokenizer, texts, max_length=cpu.context_length)
    b = score_texts(gpu.model, gpu.tokenizer, texts, max_length=gpu.context_length)
    for x, y in zip(a.logprobs + a.mean + a.std, b.logprobs + b.mean + b.std):
        np.testing.assert_allclose(y, x, rtol=0, atol=1e-4)


def test_demo_sizes_build_and_grow():
    """Each demo size is a GPT-2 the config accepts (width divisible by the heads), each larger than the one before
    (the extraction measurements compare them); "medium" is the 8.79M-parameter model of docs/lm.md."""
    import torch

    from leakaudit.lm.demo import SIZES, new_model

    with torch.device("meta"):  # shapes only: no memory, no initialisation cost
        counts = [sum(p.numel() for p in new_model(SIZES[s], SIZES[s].vocab_size, seed=0).parameters())
                  for s in ("tiny", "small", "medium")]
    assert counts == sorted(counts) and len(set(counts)) == 3
    assert counts[2] == 8_791_040
