"""(n, p)-extraction (Hayes et al. 2024): the rule and its intervals on published values, the sampler's suffix
probability against the frequency with which the model's own sampling emits the suffix, a model that memorised its
members against one that never saw them, localisation, the personal-data detector, and refusals."""

import numpy as np
import pytest

from leakaudit.exceptions import InvalidParameterError, UnsupportedError
from leakaudit.lm.extraction import (Sampler, check_can_generate, extraction_audit, extraction_threshold,
                                     find_personal_data, generate_continuations, generation_match, localise,
                                     n_p_extractable, rate_difference_interval, sampler_logprobs,
                                     suffix_log_probability)


def test_the_rule_and_newcombes_interval_on_known_values():
    # 1 - (1 - p_s)^n >= p  <=>  p_s >= 1 - (1 - p)^(1/n)
    assert extraction_threshold(1, 0.9) == pytest.approx(0.9)
    t = extraction_threshold(100, 0.9)
    assert 1 - (1 - t) ** 100 == pytest.approx(0.9)
    lp = np.log([t * 1.001, t * 0.999, 1.0]).tolist() + [-np.inf, np.nan]
    assert n_p_extractable(lp, 100, 0.9).tolist() == [True, False, True, False, False]
    # Newcombe (1998), Table II, method 10 (hybrid score): examples (a), (b) and (g)
    for (k1, n1, k0, n0), want in (((56, 70, 48, 80), (0.0524, 0.3339)), ((9, 10, 3, 10), (0.1705, 0.8090)),
                                   ((0, 10, 0, 20), (-0.1611, 0.2775))):
        assert rate_difference_interval(k1, n1, k0, n0, confidence=0.95) == pytest.approx(want, abs=1e-4)


def test_matches_and_the_personal_data_detector():
    m = generation_match([[1, 2, 3, 4], [1, 2, 9, 4], [7, 8]], [[1, 2, 3, 4]] * 3)
    assert m["exact"].tolist() == [True, False, False]
    assert m["edit_distance"].tolist() == pytest.approx([0.0, 0.25, 1.0])
    assert m["rouge_l"].tolist() == pytest.approx([1.0, 0.75, 0.0])
    assert m["near_verbatim"].tolist() == [True, False, False]
    found = find_personal_data("Write to Jane Doe at jane.doe@example.org or call +44 20 7946 0958 today.")
    assert [(d["kind"], d["text"]) for d in found] == [("name", "Jane Doe"), ("e-mail", "jane.doe@example.org"),
                                                       ("phone", "+44 20 7946 0958")]
    assert find_personal_data("nothing personal here, version 2.0 of 12 items") == []


@pytest.fixture(scope="module")
def memorised(tiny_demo, tiny_texts):
    """A copy of the tiny base fine-tuned until it holds six short member texts verbatim; six others never seen."""
    from leakaudit.lm.demo import train_lm
    from leakaudit.lm.load import load_causal_lm

    lm = load_causal_lm(tiny_demo.base_dir)
    members, nonmembers = ([t[:50] for t in group[:6]] for group in tiny_texts)
    train_lm(lm.model, lm.tokenizer, members, epochs=80, seed=1, lr=6e-3, batch_size=6, n_threads=1)
    return lm, members, nonmembers


def test_memorised_members_are_extracted_and_unseen_texts_are_not(memorised, tiny_demo):
    from leakaudit.lm.load import load_causal_lm
    from leakaudit.lm.score import score_texts

    lm, members, nonmembers = memorised
    texts, m = members + nonmembers, np.r_[np.ones(6), np.zeros(6)]
    base = load_causal_lm(tiny_demo.base_dir)
    ref = score_texts(base.model, base.tokenizer, texts, distribution=False).logprobs
    own = score_texts(lm.model, lm.tokenizer, texts, distribution=False).logprobs
    ex = extraction_audit(lm.model, lm.tokenizer, texts, m, prefix_lengths=(4, 6), suffix_length=8, n_generate=6,
                          target_logprobs=own, reference_logprobs=ref, n_threads=1, random_state=0)
    s = ex.summary
    top = s["any_prefix"][-1]  # n = 1000
    assert (top["members"]["k"], top["nonmembers"]["k"]) == (6, 0) and top["difference"] == 1.0
    assert top["difference_interval"][0] > 0.4
    assert s["generation"]["greedy"]["members"]["exact"] == 6 and s["generation"]["greedy"]["nonmembers"]["exact"] == 0
    assert s["generation"]["sampled"]["members"]["near_verbatim"] >= 4
    assert np.nanmax(ex.extractable[6:]) == 0 and ex.extractable[:6].tolist() == [1.0] * 6
    # localisation: each member's most extractable span is text of that member, and fine-tuning raised its tokens
    assert len(s["spans"]) == 6 and all(sp["span"] in members[sp["index"]] for sp in s["spans"])
    assert all(sp["raised"] and sp["raised"][0]["delta"] > 1.0 for sp in s["spans"])
    # the same texts under the base model, which never saw them: nothing is extractable
    ex0 = extraction_audit(base.model, base.tokenizer, texts, m, prefix_lengths=(4,), suffix_length=8, n_generate=0,
                           n_threads=1)
    assert ex0.summary["any_prefix"][-1]["members"]["k"] == 0 and ex0.summary["generation"] is None


def _sampled_as_computed(lm, members, samplers, reps):
    """For each sampler, every member's 3-token suffix after 5 tokens whose p_s is neither near 0 nor 1: how often
    ``reps`` draws of the model's own sampling (transformers' generate, the same temperature and top-k) emit it,
    against p_s from one forward pass, in standard errors."""
    out = []
    for sampler in samplers:
        sc = sampler_logprobs(lm.model, lm.tokenizer, members, sampler)
        p = np.exp(suffix_log_probability(sc, 5, 3))
        start = 5 + sc.offset
        gen = generate_continuations(lm.model, [e[:start] for e in sc.ids for _ in range(reps)], suffix_length=3,
                                     sampler=sampler, greedy=False, seed=1, n_threads=1)
        for i in np.flatnonzero((p > 0.03) & (p < 0.97)):
            freq = np.mean([g == sc.ids[i][start:start + 3] for g in gen[i * reps:(i + 1) * reps]])
            out.append((freq - p[i]) / np.sqrt(p[i] * (1 - p[i]) / reps))
    return np.array(out)


def test_suffix_probability_is_how_often_the_sampler_emits_it(memorised):
    """p_s from one forward pass is the frequency with which the model's sampling emits the suffix (temperature and
    top-k applied as transformers' generate applies them); top-k 1 is greedy decoding."""
    lm, members, _ = memorised
    z = _sampled_as_computed(lm, members, [Sampler(1.5, 5)], reps=300)
    assert z.size >= 2 and np.abs(z).max() <= 4.5, z
    greedy = sampler_logprobs(lm.model, lm.tokenizer, members, Sampler(1.0, 1))
    p = np.exp(suffix_log_probability(greedy, 4, 8))
    gen = generate_continuations(lm.model, [e[:5] for e in greedy.ids], suffix_length=8, sampler=Sampler(1.0, 1),
                                 greedy=True, seed=0, n_threads=1)
    assert np.allclose(p, [float(g == e[5:13]) for g, e in zip(gen, greedy.ids)])


@pytest.mark.slow
def test_suffix_probability_is_the_sampling_frequency_at_more_draws(memorised):
    """As above with two samplers (temperature alone; temperature and top-k) and 2,000 draws per suffix."""
    lm, members, _ = memorised
    z = _sampled_as_computed(lm, members, [Sampler(2.0, None), Sampler(1.5, 5)], reps=2000)
    assert z.size >= 4 and np.abs(z).max() <= 4.5, z


def test_a_model_that_cannot_generate_is_refused_in_one_line(memorised):
    from transformers import GPT2Config, GPT2ForSequenceClassification

    lm, members, nonmembers = memorised
    clf = GPT2ForSequenceClassification(GPT2Config(vocab_size=64, n_embd=8, n_layer=1, n_head=1, n_positions=16))
    for model in (clf, object()):
        with pytest.raises(UnsupportedError, match="cannot be extracted from") as e:
            check_can_generate(model)
        assert "\n" not in str(e.value)

    class NoConfig:
        can_generate = staticmethod(lambda: True)
        generation_config = None

    with pytest.raises(UnsupportedError, match="no generation configuration"):
        check_can_generate(NoConfig())
    with pytest.raises(InvalidParameterError, match="prefix length"):
        extraction_audit(lm.model, lm.tokenizer, members + nonmembers, np.r_[np.ones(6), np.zeros(6)],
                         prefix_lengths=(0,))
    with pytest.raises(InvalidParameterError, match="temperature"):
        Sampler(0.0, 40)


def test_localise_without_a_reference_and_on_a_short_text(memorised):
    lm, members, _ = memorised
    sc = sampler_logprobs(lm.model, lm.tokenizer, members[:2] + ["Hi"], Sampler())
    loc = localise(sc, lm.tokenizer, span_length=50)
    assert [r["raised"] for r in loc] == [None] * len(loc)
    assert loc[0]["span"] in members[0] and loc[0]["start"] >= 1
    assert np.isnan(suffix_log_probability(sc, 4, 8)[2])  # too short for a prefix and a suffix: not eligible


def test_a_bad_extraction_option_is_one_line_and_exit_2(tmp_path, capsys, tiny_demo):
    from leakaudit.cli import main

    code = main(["audit", "--model-dir", str(tiny_demo.target_dir), "--members", str(tiny_demo.members),
                 "--nonmembers", str(tiny_demo.nonmembers), "--text-column", "text", "--extraction-prefix", "16",
                 "--extraction-prefix", "0", "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    assert "extraction_prefix" in err and "at least 1" in err


@pytest.mark.slow
def test_the_library_extracts_as_the_command_line_does(tmp_path, tiny_demo, tiny_texts):
    """leakaudit.audit() with a transformers model runs the same extraction step as --model-dir: the same section
    (but its timings) and the same check."""
    import json

    import leakaudit
    from leakaudit.cli import main
    from leakaudit.lm.load import load_causal_lm

    args = ["--extraction-prefix", "16", "--extraction-prefix", "32", "--extraction-suffix", "16", "--extraction-n",
            "1", "--extraction-n", "50", "--extraction-p", "0.5", "--extraction-temperature", "0.8",
            "--extraction-top-k", "0"]
    assert main(["audit", "--model-dir", str(tiny_demo.target_dir), "--reference-dir", str(tiny_demo.base_dir),
                 "--members", str(tiny_demo.members), "--nonmembers", str(tiny_demo.nonmembers), "--text-column",
                 "text", "--profile", "smoke", "--quiet", "--out", str(tmp_path / "o"), *args]) == 0
    disk = json.loads((tmp_path / "o" / "results.json").read_text())
    lm, base = load_causal_lm(tiny_demo.target_dir), load_causal_lm(tiny_demo.base_dir)
    res = leakaudit.audit(lm.model, *tiny_texts, tokenizer=lm.tokenizer, references=[base.model], profile="smoke",
                          extraction_prefix=[16, 32], extraction_suffix=16, extraction_n=[1, 50], extraction_p=0.5,
                          extraction_temperature=0.8, extraction_top_k=0)
    mem = res.extraction.to_dict()
    assert mem["sampler"] == "sampling at temperature 0.8, all tokens (no top-k)" and mem["n_values"] == [1, 50]
    for key in ("seconds", "cpu_seconds", "spans"):
        mem.pop(key), disk["extraction"].pop(key)
    assert json.loads(json.dumps(mem)) == disk["extraction"]
    got = next(c for c in res.checks if c.id == "extraction.suffixes.rate_difference")
    want = next(c for c in disk["verdict"]["checks"] if c["id"] == got.id)
    assert (got.status, got.value, list(got.interval)) == (want["status"], want["value"], want["interval"])


def test_the_rank_bound_on_ranks_given_by_hand():
    """b = sum_t log2 r_t over the suffix, and Algorithm 2's least b over every span with a text token before it."""
    from leakaudit.lm.extraction import SamplerScores, rank_bound_bits, window_bound_bits

    r = np.array([1, 2, 4, 1, 8])  # r[j] ranks ids[j + 1] given ids[:j + 1]
    lq = np.log([0.9, 0.3, 0.2, 0.99, 0.05])
    sc = SamplerScores((lq, lq[:2]), ([0] * 6, [0] * 3), 0, (r, r[:2]))
    assert rank_bound_bits(sc, 1, 3).tolist()[0] == 3.0 and np.isnan(rank_bound_bits(sc, 1, 3)[1])
    assert rank_bound_bits(sc, 3, 2)[0] == 2.0  # ranks 4 and 1
    assert window_bound_bits(sc, 2)[0] == 1.0 and np.isnan(window_bound_bits(sc, 3)[1])
    bos = SamplerScores((lq,), ([0] * 6,), 1, (r,))  # ids[0] a beginning-of-text token: no span starts at r[0]
    assert window_bound_bits(bos, 2)[0] == 2.0 and rank_bound_bits(bos, 1, 2)[0] == 3.0  # ranks 2 and 4


def test_the_rank_bound_holds_for_every_sampler_and_is_zero_where_greedy_decoding_emits_the_suffix(memorised):
    """On the memorised model: each token's rank is its place among the logits (sorted here independently), the
    sampler's p_s never exceeds 2^-b for four samplers, b = 0 exactly where greedy decoding emits the suffix, and the
    audit's bound rates are at least its measured rates, member by member."""
    import torch

    from leakaudit.lm.extraction import rank_bound_bits, window_bound_bits

    lm, members, nonmembers = memorised
    texts = members + nonmembers
    sc = sampler_logprobs(lm.model, lm.tokenizer, texts, Sampler(1.0, 40))
    with torch.inference_mode():
        logits = lm.model(torch.tensor([sc.ids[0]])).logits[0, :-1]
    order = torch.argsort(logits, dim=-1, descending=True)
    want = [int((order[j] == t).nonzero()[0, 0]) + 1 for j, t in enumerate(sc.ids[0][1:])]
    assert sc.ranks[0].tolist() == want
    bits = rank_bound_bits(sc, 4, 8)
    assert np.isfinite(bits).all() and (bits[:6].mean() < bits[6:].mean())
    for sampler in (Sampler(1.0, 40), Sampler(1.5, None), Sampler(0.5, 5), Sampler(1.0, 1)):
        lp = suffix_log_probability(sampler_logprobs(lm.model, lm.tokenizer, texts, sampler), 4, 8)
        assert (lp <= -bits * np.log(2) + 1e-6).all(), sampler
    greedy = generate_continuations(lm.model, [e[:5] for e in sc.ids], suffix_length=8, sampler=Sampler(1.0, 1),
                                    greedy=True, seed=0, n_threads=1)
    emitted = [g == e[5:13] for g, e in zip(greedy, sc.ids)]
    assert (bits == 0).tolist() == emitted and any(emitted) and not all(emitted)
    assert (window_bound_bits(sc, 8) <= bits).all()  # the suffix is one of the spans

    ex = extraction_audit(lm.model, lm.tokenizer, texts, np.r_[np.ones(6), np.zeros(6)], prefix_lengths=(4, 6),
                          suffix_length=8, n_values=(1, 10, 1000), n_generate=0, n_threads=1)
    b = ex.summary["bound"]
    for measured, bound in zip(ex.summary["any_prefix"], b["rates"]):
        assert bound["members"]["k"] >= measured["members"]["k"]
        assert bound["nonmembers"]["k"] >= measured["nonmembers"]["k"]
    # a suffix measured (n, p)-extractable at the largest n is one the bound leaves within reach at that n
    reach = -ex.bound_bits * np.log(2) >= np.log(extraction_threshold(1000, 0.9))
    assert reach[ex.extractable == 1].all() and b["rates"][-1]["members"]["k"] == 6
    assert b["suffix_bits"]["members"]["n"] == 6 and b["suffix_bits"]["members"]["min"] == np.nanmin(ex.bound_bits[:6])
    assert (ex.window_bits <= ex.bound_bits).all()
