"""Set-level audits of a language model on known truth: dataset inference (Maini et al. 2024) with its blind-baseline
guard, and the canary audit of fine-tuning (Panda et al. 2025); their command lines and bad inputs."""

import json

import numpy as np
import pytest

from leakaudit.cli import main
from leakaudit.exceptions import InvalidInputError
from leakaudit.lm.canary import (
    Canaries,
    canary_audit,
    insert_canaries,
    make_canaries,
    read_canaries,
    secret_scores,
)
from leakaudit.lm.dataset_inference import dataset_inference, detection_power, set_test


@pytest.fixture(scope="module")
def lms(tiny_demo):
    from leakaudit.lm.load import load_causal_lm

    return load_causal_lm(tiny_demo.target_dir), load_causal_lm(tiny_demo.base_dir)


def _scores(lm, texts, distribution=True):
    from leakaudit.lm.score import score_texts

    return score_texts(lm.model, lm.tokenizer, texts, max_length=lm.context_length, n_threads=1,
                       distribution=distribution)


# --- dataset inference ---------------------------------------------------------------------------------------------

def test_set_test_detects_a_shift_and_holds_its_level_under_the_null():
    rng = np.random.default_rng(0)
    hits = {"welch": 0, "permutation": 0}
    for i in range(100):
        a, b = rng.normal(size=(40, 3)), rng.normal(size=(40, 3))
        for t in hits:
            hits[t] += set_test(a, b, test=t, n_permutations=199, random_state=i).p_value <= 0.05
    # exchangeable sets: each test rejects about 5% of the time (binomial 100, 0.05: at most 12 with prob 0.998)
    assert hits["welch"] <= 12 and hits["permutation"] <= 12
    shifted = set_test(rng.normal(1.0, 1, size=(60, 3)), rng.normal(size=(60, 3)), feature_names=["a", "b", "c"])
    assert shifted.p_value < 0.01 and shifted.auc > 0.6 and set(shifted.coef) == {"a", "b", "c"}
    assert shifted.n_fit == (30, 30) and shifted.n_test == (30, 30)


def test_fine_tuning_set_is_detected_and_a_random_split_is_not(tiny_demo, tiny_texts, lms):
    mem, non = tiny_texts
    target, base = lms
    ts, ref = _scores(target, mem + non), _scores(base, mem + non, False)
    r = dataset_inference(mem, non, ts, [ref], n_repeats=20, random_state=0)
    assert r.verdict == "used" and r.comparable is True and r.test.p_value < 1e-4
    assert r.features[-1] == "reference-model ratio" and len(r.feature_auc) == 5
    assert r.power.smallest_detected is not None and r.power.smallest_detected <= 20
    # same seed, same result
    again = dataset_inference(mem, non, ts, [ref], n_repeats=20, random_state=0)
    assert again.test.p_value == r.test.p_value and again.power.rate == r.power.rate
    # two halves of the non-members: neither was used
    null = dataset_inference(non[:20], non[20:], ts.subset(np.arange(40, 80)), power=False, random_state=0)
    assert null.verdict == "not detected" and null.test.p_value > 0.05


def test_shifted_unseen_set_is_flagged_not_passed(lms):
    """Spam as the 'suspect' set and easy ham as the 'unseen' one, neither used: the model tells them apart (the
    set-level test alone would say 'used'), and the blind baseline makes the verdict 'not comparable'."""
    from leakaudit.lm.demo import demo_texts

    texts, groups = demo_texts(max_chars=200)
    rng = np.random.default_rng(3)
    pick = lambda g: [texts[i] for i in rng.choice(np.flatnonzero(groups == g), 40, replace=False)]  # noqa: E731
    sus, uns = pick("spam-2"), pick("easy-ham-1")
    r = dataset_inference(sus, uns, _scores(lms[0], sus + uns), power=False, random_state=0)
    assert r.test.p_value <= 0.05  # the shift alone passes the test
    assert r.comparable is False and r.verdict == "not comparable" and "differ by their texts" in r.sentence


def test_power_curve_and_bad_inputs(tiny_texts, lms):
    rng = np.random.default_rng(1)
    pc = detection_power(rng.normal(1, 1, (50, 2)), rng.normal(size=(50, 2)), sizes=[8, 20, 50], n_repeats=30)
    assert pc.sizes == [8, 20, 50] and pc.rate[-1] == 1.0 and pc.smallest_detected in (8, 20, 50)
    assert all(lo <= r <= hi for r, (lo, hi) in zip(pc.rate, pc.interval))
    with pytest.raises(InvalidInputError, match="sizes holds 60"):
        detection_power(rng.normal(size=(50, 2)), rng.normal(size=(50, 2)), sizes=[60])
    with pytest.raises(InvalidInputError, match="at least 8"):
        set_test(np.zeros((5, 2)), np.zeros((20, 2)))
    with pytest.raises(InvalidInputError, match="2 features"):
        set_test(np.zeros((20, 3)), np.zeros((20, 2)))
    mem, non = tiny_texts
    ts = _scores(lms[0], mem[:10] + non[:10])
    with pytest.raises(InvalidInputError, match="token_scores holds 20"):
        dataset_inference(mem[:10], non[:12], ts)
    with pytest.raises(InvalidInputError, match="in both"):
        dataset_inference(mem[:10], mem[:9] + non[:1], ts)


# --- canary audit --------------------------------------------------------------------------------------------------

def test_canaries_design_insertion_and_file(tmp_path, tiny_texts, lms):
    mem, _ = tiny_texts
    tok = lms[1].tokenizer
    c = make_canaries(mem, m=200, design="rare_token", tokenizer=tok, random_state=4)
    assert c.m == 200 and set(np.unique(c.included)) == {-1, 1} and 70 < (c.included == 1).sum() < 130
    flat = [" ".join(t.split()) for t in mem]
    assert all(any(t.startswith(p) for t in flat) for p in c.prompts)
    # secrets come from the tokens rarest in the texts
    counts = np.bincount(np.concatenate(tok(mem, add_special_tokens=False)["input_ids"]), minlength=len(tok))
    used = np.concatenate(tok(c.secrets, add_special_tokens=False)["input_ids"])
    assert np.median(counts[used]) <= np.median(counts[counts > 0])
    aug = insert_canaries(mem, c, random_state=0)
    assert len(aug) == len(mem) + (c.included == 1).sum() and set(c.inserted()) <= set(aug)
    assert not set(np.array(c.texts)[c.included == -1]) & set(aug)
    back = read_canaries(c.to_json(tmp_path / "c.json"))
    assert back.texts == c.texts and (back.included == c.included).all()
    same = make_canaries(mem, m=200, design="rare_token", tokenizer=tok, random_state=4)
    assert same.texts == c.texts and (same.included == c.included).all()
    n = make_canaries(mem, m=30, design="new_token", secret_length=4, random_state=0)
    assert len(n.new_tokens) == 120 and len(set("".join(n.secrets).split("|><|"))) == 120  # each canary its own
    (tmp_path / "bad.json").write_text(json.dumps({"format": "x"}))
    with pytest.raises(InvalidInputError, match="not written by leakaudit"):
        read_canaries(tmp_path / "bad.json")
    with pytest.raises(InvalidInputError, match="needs the tokenizer"):
        make_canaries(mem, m=10)
    with pytest.raises(InvalidInputError, match="lacks 120"):
        secret_scores(lms[1].model, tok, n)
    # a prompt in a script the tokenizer has few merges for is cut to max_prompt_tokens, so canaries fit the context
    cjk = ["垃圾邮件" * 20 + " 第二 第三"] * 3
    long = make_canaries(cjk, m=6, design="new_token", tokenizer=tok, max_prompt_tokens=None, random_state=0)
    cut = make_canaries(cjk, m=6, design="new_token", tokenizer=tok, max_prompt_tokens=40, random_state=0)
    assert max(len(tok(p)["input_ids"]) for p in long.prompts) > 100
    assert all(len(tok(p)["input_ids"]) <= 40 and p and "\ufffd" not in p for p in cut.prompts)
    assert all(cjk[0].startswith(p) for p in cut.prompts)


def test_canary_audit_power_and_soundness(tiny_texts, lms):
    """New-token canaries fine-tuned into the base: the bound is well above 0; the model that never saw them (the
    base with the tokens added) stays below the claim."""
    import copy

    from leakaudit.lm.demo import train_lm

    mem, _ = tiny_texts
    c = make_canaries(mem, m=100, design="new_token", secret_length=4, random_state=2)
    base = lms[1]
    tok = copy.deepcopy(base.tokenizer)
    tok.add_tokens(c.new_tokens)
    model = copy.deepcopy(base.model)
    model.resize_token_embeddings(len(tok), mean_resizing=False)
    untrained = copy.deepcopy(model)
    train_lm(model, tok, insert_canaries(mem, c), epochs=6, seed=0, lr=2e-3, n_threads=1)
    a = canary_audit(c, secret_scores(model, tok, c, max_length=128, n_threads=1), claimed_epsilon=1.0, delta=1e-5)
    assert a.auc > 0.9 and a.epsilon_lower_bound > 1.0 and a.violated
    z = canary_audit(c, secret_scores(untrained, tok, c, max_length=128, n_threads=1), claimed_epsilon=1.0, delta=1e-5)
    assert z.epsilon_lower_bound <= 1.0 and not z.violated
    with pytest.raises(InvalidInputError, match="scores has 3 values"):
        canary_audit(c, [1, 2, 3], claimed_epsilon=1.0, delta=1e-5)


# --- command line --------------------------------------------------------------------------------------------------

def test_cli_dataset_inference_and_canaries(tmp_path, tiny_demo, capsys):
    out = tmp_path / "di"
    assert main(["lm-dataset-inference", "--model-dir", str(tiny_demo.target_dir), "--suspect",
                 str(tiny_demo.members), "--unseen", str(tiny_demo.nonmembers), "--reference-dir",
                 str(tiny_demo.base_dir), "--power-repeats", "10", "--out", str(out)]) == 0
    res = json.loads((out / "dataset_inference.json").read_text())
    assert res["verdict"] == "used" and res["power"]["sizes"][-1] == 40
    assert "verdict: used" in capsys.readouterr().out
    cdir = tmp_path / "can"
    assert main(["lm-canary-audit", "insert", "--data", str(tiny_demo.members), "--tokenizer",
                 str(tiny_demo.base_dir), "--m", "40", "--out", str(cdir)]) == 0
    aug = [json.loads(line)["text"] for line in open(cdir / "train_with_canaries.jsonl")]
    c = read_canaries(cdir / "canaries.json")
    assert len(aug) == 40 + (c.included == 1).sum()
    # the base never saw the canaries: scored, bounded, consistent with a claim of 2
    assert main(["lm-canary-audit", "score", "--canaries", str(cdir / "canaries.json"), "--model-dir",
                 str(tiny_demo.base_dir), "--epsilon", "2", "--out", str(cdir)]) == 0
    res = json.loads((cdir / "canary_audit.json").read_text())
    assert res["m"] == 40 and not res["violated"] and len(res["scores"]) == 40
    # bad inputs: one line, exit status 2
    assert main(["lm-canary-audit", "insert", "--data", str(tiny_demo.members), "--out", str(cdir)]) == 2
    assert main(["lm-canary-audit", "insert", "--data", str(tiny_demo.members), "--design", "odd",
                 "--out", str(cdir)]) == 2
    assert main(["lm-canary-audit", "score", "--canaries", str(tmp_path / "none.json"), "--model-dir",
                 str(tiny_demo.base_dir), "--epsilon", "2"]) == 2
    assert main(["lm-dataset-inference", "--model-dir", str(tiny_demo.target_dir), "--suspect",
                 str(tiny_demo.members), "--unseen", str(tiny_demo.members), "--out", str(out)]) == 2
    assert main(["lm-dataset-inference", "--model-dir", str(tiny_demo.target_dir), "--suspect",
                 str(tiny_demo.members), "--unseen", str(tiny_demo.nonmembers), "--test", "z", "--out", str(out)]) == 2
    assert main(["lm-canary-audit", "score", "--canaries", str(cdir / "canaries.json"), "--model-dir",
                 str(tiny_demo.base_dir), "--epsilon", "2", "--device", "gpu0", "--out", str(cdir)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 6 and all(line.startswith("leakaudit: error:") for line in err)
    assert "gpu0" in err[-1]


def test_canaries_dataclass_is_frozen():
    c = Canaries(prompts=["a"], secrets=["b"], included=np.array([1], np.int8), design="rare_token", new_tokens=[])
    assert c.texts == ["a b"] and c.m == 1


def test_dataset_inference_from_scores_already_computed_is_the_same(tiny_demo):
    """The audit passes its membership step's attack scores: the same features, so the same result as computing
    them from the token scores; scores of another length are refused."""
    import json

    from leakaudit.lm.attacks import run_lm_attacks
    from leakaudit.lm.dataset_inference import dataset_inference
    from leakaudit.lm.load import load_causal_lm
    from leakaudit.lm.score import score_texts

    lm = load_causal_lm(tiny_demo.target_dir)
    read = lambda p: [json.loads(line)["text"] for line in open(p, encoding="utf-8")]  # noqa: E731
    sus, uns = read(tiny_demo.members)[:20], read(tiny_demo.nonmembers)[:20]
    ts = score_texts(lm.model, lm.tokenizer, sus + uns, max_length=lm.context_length)
    a = dataset_inference(sus, uns, ts, power=False, guard=False, random_state=3)
    b = dataset_inference(sus, uns, ts, power=False, guard=False, random_state=3,
                          scores=run_lm_attacks(ts, sus + uns))
    same = lambda d: json.dumps(d, sort_keys=True, default=str)  # noqa: E731  (the guard's NaNs compare equal)
    assert same(a.to_dict()) == same(b.to_dict()) and a.verdict in ("used", "not detected")
    with pytest.raises(InvalidInputError, match="scores hold 39 texts"):
        dataset_inference(sus, uns, ts, power=False, guard=False,
                          scores={k: v[:-1] for k, v in run_lm_attacks(ts, sus + uns).items()})
