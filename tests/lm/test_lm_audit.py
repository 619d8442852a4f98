"""``leakaudit audit --model-dir``: the verdict on known truth, the blind-baseline guard, and every bad input as one
line and exit status 2."""

import json
import shutil
from html import escape as html_escape

import numpy as np
import pandas as pd
import pytest

from leakaudit.audit.result.output import read_records_csv
from leakaudit.cli import main


def _audit(tmp_path, model_dir, members, nonmembers, *extra):
    out = tmp_path / "out"
    code = main(["audit", "--model-dir", str(model_dir), "--members", str(members), "--nonmembers", str(nonmembers),
                 "--text-column", "text", "--out", str(out), "--profile", "smoke", "--quiet", *extra])
    return code, out


def _results(out):
    return json.loads((out / "results.json").read_text())


def test_fine_tuned_model_leaks(tmp_path, tiny_demo, capsys):
    code, out = _audit(tmp_path, tiny_demo.target_dir, tiny_demo.members, tiny_demo.nonmembers,
                       "--reference-dir", str(tiny_demo.base_dir))
    assert code == 0
    res = _results(out)
    v = res["verdict"]
    assert v["outcome"] == "do not publish", v["headline"]
    ids = {c["id"]: c for c in v["checks"]}
    assert ids["membership.lm_reference.auc"]["status"] == "exceeded"
    assert ids["membership.blind_baseline.auc"]["status"] in ("shown below", "undecided")
    assert res["membership"]["lm_min_k_pp"]["auc"] > 0.8
    # the correction comes from the plan: every attack the scores allow (9 with a reference) x 2 checks + the blind
    # baseline's, and each check is named by its own attack's display name
    # ... and extraction's one check
    assert len(v["checks"]) == 9 * 2 + 1 + 1 and v["check_confidence"] == pytest.approx(1 - 0.05 / 20)
    assert ids["membership.lm_loss.auc"]["name"] == "loss: AUC"
    # extraction ran under the default sampler; this model gives out no 32-token suffix, so its check is not exceeded
    ex, xc = res["extraction"], ids["extraction.suffixes.rate_difference"]
    assert ex["sampler"] == "sampling at temperature 1, top-40" and ex["n_values"] == [1, 10, 100, 1000]
    assert ex["any_prefix"][-1]["members"]["n"] == ex["n_eligible_members"] > 30
    assert xc["status"] in ("shown below", "undecided") and xc["interval"][0] <= xc["value"] <= xc["interval"][1]
    assert ex["spans"] and ex["reference"] and ex["spans"][0]["record"].startswith("members.jsonl, row ")
    ev = json.loads((out / "evidence.json").read_text())
    regurgitation = next(c for c in ev["attack_classes"] if c["class"] == "reconstruction and regurgitation")
    assert regurgitation["status"] == "tested" and regurgitation["checks"] == [xc["id"]]
    assert res["target"]["train_accuracy"] > res["target"]["test_accuracy"]
    rec = read_records_csv(out / "records.csv")  # without the quote before a text a spreadsheet would run
    assert len(rec) == 80 and rec["is_member"].sum() == 40
    assert rec["text"].str.len().max() <= 100 and rec["risk_rank"].notna().sum() == 40
    assert {"score_lm_loss", "score_lm_lira", "score_lm_rmia", "blind_baseline"} <= set(rec.columns)
    html = (out / "report.html").read_text()
    assert "Min-K%++" in html and "blind baseline" in html and "Zhang et al." in html
    # the windows that carry the signal in the most exposed members (issue 89), in results.json and the report
    lw = res["leaked_windows"]
    assert lw["attack"] in res["membership"]["blind_baseline"]["attacks_standing"] and len(lw["texts"]) == 5
    assert lw["texts"][0]["record"].startswith("members.jsonl, row ") and lw["texts"][0]["windows"]
    assert 'id="leaked-windows-table"' in html and "Where the most exposed texts leak" in html
    assert "Extraction: can the training text be drawn out?" in html and "max_extraction_rate_difference =" in html
    assert "recognises its fine-tuning texts" in html and "MIP noise" not in html  # what to do next, for texts
    assert "lm_min_k" not in html and "lm_loss" not in html  # attacks named in words, "flagged by" too
    # only what applies to a language model: its outputs are token log-probabilities, and no threshold or setting of
    # PDTP, the structural checks, attribute inference or retraining is listed
    assert "log-probabilities of each text's tokens" in v["threat_model"] and "class scores" not in html
    for key in ("max_dtp", "min_leaf_records", "max_attribute_advantage", "max_parameters_per_record"):
        assert f"{key} =" not in html, key
    assert "max_auc = 0.6" in html and "low_fpr = 0.01" in html
    for words in ("DTP-1 rule", "where models train", "model input", "<th>removal</th>"):
        assert words not in html, words
    assert "verdict: DO NOT PUBLISH" in capsys.readouterr().out


def test_dataset_inference_is_one_more_step_of_the_audit(tmp_path, tiny_demo):
    """--dataset-inference adds the members-as-a-set test as one planned check (the correction counts it), its
    section of results.json and of the report; the fine-tuned demo's members are detected as a set."""
    code, out = _audit(tmp_path, tiny_demo.target_dir, tiny_demo.members, tiny_demo.nonmembers,
                       "--reference-dir", str(tiny_demo.base_dir), "--dataset-inference", "--no-extraction")
    assert code == 0
    res = _results(out)
    v, di = res["verdict"], res["dataset_inference"]
    assert res["extraction"] is None and "extraction" not in res["timings"]
    ids = {c["id"]: c for c in v["checks"]}
    assert len(v["checks"]) == 9 * 2 + 1 + 1 and v["check_confidence"] == pytest.approx(1 - 0.05 / 20)
    check = ids["dataset_inference.set_test"]
    assert di["comparable"] and di["alpha"] == pytest.approx(1 - v["check_confidence"])
    assert (check["status"] == "exceeded") == (di["verdict"] == "used") and check["shows"] == "leakage only"
    assert di["verdict"] == "used" and di["test"]["p_value"] <= di["alpha"]
    assert di["power"]["sizes"] and "dataset inference" in res["timings"]
    assert "Dataset inference: the members as a set" in (out / "report.html").read_text()


def test_dataset_inference_needs_a_language_model():
    from leakaudit.audit import make_config
    from leakaudit.exceptions import InvalidParameterError

    with pytest.raises(InvalidParameterError, match="dataset_inference needs model_dir"):
        make_config(dataset_inference=True)


def test_model_that_never_saw_the_texts_is_not_reported(tmp_path, tiny_demo):
    """The base model never saw members or non-members (one random split of one pool): no leakage is reported."""
    code, out = _audit(tmp_path, tiny_demo.base_dir, tiny_demo.members, tiny_demo.nonmembers)
    assert code == 0
    v = _results(out)["verdict"]
    assert v["outcome"] != "do not publish", v["headline"]
    assert not [c for c in v["checks"] if c["status"] == "exceeded"]
    assert any(s["name"].startswith("reference-model ratio") for s in _results(out)["skipped"])
    # the null case of extraction: the base model's members are no more extractable than its non-members
    xc = next(c for c in v["checks"] if c["id"] == "extraction.suffixes.rate_difference")
    assert xc["status"] in ("shown below", "undecided") and abs(xc["value"]) < 0.05


def test_split_that_differs_in_style_is_not_comparable(tmp_path, tiny_demo):
    """Members all spam, non-members all easy ham: the blind baseline tells them apart, so the verdict says the
    split is not comparable instead of reporting the difference as leakage."""
    from leakaudit.lm.demo import demo_texts, write_jsonl

    texts, groups = demo_texts(max_chars=200)
    rng = np.random.default_rng(1)
    pick = lambda g: [texts[i] for i in rng.choice(np.flatnonzero(groups == g), 50, replace=False)]
    mem, non = write_jsonl(tmp_path / "m.jsonl", pick("spam-2")), write_jsonl(tmp_path / "n.jsonl", pick("easy-ham-1"))
    code, out = _audit(tmp_path, tiny_demo.base_dir, mem, non, "--exit-code")
    res = _results(out)
    v = res["verdict"]
    assert code == 4 and v["outcome"] == "inconclusive"
    assert "not comparable" in v["headline"]
    assert res["membership"]["blind_baseline"]["comparable"] is False
    assert all(c["status"] == "not measurable" for c in v["checks"])  # extraction's among them: the guard covers it
    assert "extraction.suffixes.rate_difference" in {c["id"] for c in v["checks"]}
    # no attack stands, so no text's rank is the model's: no leaked windows, and the report says why (issue 89)
    assert res["leaked_windows"]["reason"].startswith("no attack stands") and not res["leaked_windows"]["texts"]
    assert "The windows that carry the signal are not shown: no attack stands" in (out / "report.html").read_text()


@pytest.mark.slow
def test_texts_from_one_csv_with_a_membership_column(tmp_path, tiny_demo, tiny_texts):
    mem, non = tiny_texts
    df = pd.DataFrame({"body": mem + non, "member": [1] * len(mem) + [0] * len(non)})
    df.to_csv(tmp_path / "all.csv", index=False)
    out = tmp_path / "out"
    code = main(["audit", "--model-dir", str(tiny_demo.target_dir), "--data", str(tmp_path / "all.csv"),
                 "--membership-column", "member", "--text-column", "body", "--out", str(out), "--quiet",
                 "--profile", "smoke"])
    assert code == 0
    assert _results(out)["data"]["n_members"] == len(mem)


def _one_line_exit_2(capsys, args, match):
    code = main(["audit", "--quiet", "--profile", "smoke", *args])
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert match in err, err
    return err


@pytest.fixture()
def texts_args(tiny_demo):
    return ["--members", str(tiny_demo.members), "--nonmembers", str(tiny_demo.nonmembers), "--text-column", "text"]


def test_dir_without_config(tmp_path, capsys, texts_args):
    (tmp_path / "m").mkdir()
    _one_line_exit_2(capsys, ["--model-dir", str(tmp_path / "m"), *texts_args, "--out", str(tmp_path / "o")],
                     "has no config.json")


def test_dir_without_weights(tmp_path, capsys, texts_args, tiny_demo):
    d = tmp_path / "m"
    shutil.copytree(tiny_demo.target_dir, d)
    (d / "model.safetensors").unlink()
    _one_line_exit_2(capsys, ["--model-dir", str(d), *texts_args, "--out", str(tmp_path / "o")],
                     "has no *.safetensors weights")


def test_pickle_checkpoint_is_refused_unopened(tmp_path, capsys, texts_args, tiny_demo):
    d = tmp_path / "m"
    shutil.copytree(tiny_demo.target_dir, d)
    (d / "model.safetensors").unlink()
    (d / "pytorch_model.bin").write_bytes(b"\x80\x04 not even a valid pickle: it must never be opened")
    _one_line_exit_2(capsys, ["--model-dir", str(d), *texts_args, "--out", str(tmp_path / "o")],
                     "pickle checkpoint (pytorch_model.bin)")


def test_missing_model_dir(tmp_path, capsys, texts_args):
    _one_line_exit_2(capsys, ["--model-dir", str(tmp_path / "nope"), *texts_args, "--out", str(tmp_path / "o")],
                     "does not exist")


def test_tokenizer_larger_than_the_vocabulary(tmp_path, capsys, texts_args, tiny_demo, tiny_texts):
    from leakaudit.lm.demo import train_tokenizer

    tok = train_tokenizer(tiny_texts[0] * 3 + tiny_texts[1] * 3, vocab_size=2000)
    assert len(tok) > 512
    tok.save_pretrained(str(tmp_path / "tok"))
    _one_line_exit_2(capsys, ["--model-dir", str(tiny_demo.target_dir), "--tokenizer", str(tmp_path / "tok"),
                              *texts_args, "--out", str(tmp_path / "o")], "they do not belong together")


def test_empty_text(tmp_path, capsys, tiny_demo):
    (tmp_path / "m.jsonl").write_text('{"text": "hello there"}\n{"text": ""}\n{"text": "third"}\n')
    _one_line_exit_2(capsys, ["--model-dir", str(tiny_demo.target_dir), "--members", str(tmp_path / "m.jsonl"),
                              "--nonmembers", str(tiny_demo.nonmembers), "--text-column", "text",
                              "--out", str(tmp_path / "o")], "row 2: 'text' is an empty text")


def test_missing_text_column(tmp_path, capsys, tiny_demo):
    _one_line_exit_2(capsys, ["--model-dir", str(tiny_demo.target_dir), "--members", str(tiny_demo.members),
                              "--nonmembers", str(tiny_demo.nonmembers), "--text-column", "body",
                              "--out", str(tmp_path / "o")], "--text-column 'body' is not a column")


def test_text_column_without_model_dir(tmp_path, capsys, tiny_demo):
    _one_line_exit_2(capsys, ["--members", str(tiny_demo.members), "--nonmembers", str(tiny_demo.nonmembers),
                              "--text-column", "text", "--out", str(tmp_path / "o")], "text_column needs model_dir")


def test_check_inputs_loads_without_scoring(tmp_path, capsys, tiny_demo, texts_args):
    code = main(["audit", "--model-dir", str(tiny_demo.target_dir), *texts_args, "--check-inputs",
                 "--out", str(tmp_path / "o")])
    assert code == 0
    out = capsys.readouterr().out
    assert "40 member and 40 non-member texts" in out and "GPT2LMHeadModel" in out
    assert json.loads((tmp_path / "o" / "inputs.json").read_text())["data"]["kind"] == "text"


@pytest.mark.slow
def test_lora_adapter_is_loaded_onto_its_base(tmp_path, tiny_demo, tiny_texts):
    """A peft LoRA adapter saved as safetensors scores like its merged model."""
    import torch
    from peft import LoraConfig, get_peft_model

    from leakaudit.lm.load import load_causal_lm
    from leakaudit.lm.score import score_texts

    base = load_causal_lm(tiny_demo.base_dir)
    peft_model = get_peft_model(base.model, LoraConfig(r=4, target_modules=["c_attn"], fan_in_fan_out=True,
                                                       init_lora_weights=False))
    peft_model.save_pretrained(str(tmp_path / "adapter"), safe_serialization=True)
    cfg = json.loads((tmp_path / "adapter" / "adapter_config.json").read_text())
    cfg["base_model_name_or_path"] = str(tiny_demo.base_dir)
    (tmp_path / "adapter" / "adapter_config.json").write_text(json.dumps(cfg))
    loaded = load_causal_lm(tmp_path / "adapter")
    assert "LoRA adapter" in loaded.description
    texts = tiny_texts[0][:3]
    with torch.inference_mode():
        want = score_texts(peft_model, base.tokenizer, texts).mean_logprob()
    got = score_texts(loaded.model, loaded.tokenizer, texts).mean_logprob()
    np.testing.assert_allclose(got, want, atol=1e-4)
    plain = score_texts(load_causal_lm(tiny_demo.base_dir).model, base.tokenizer, texts).mean_logprob()
    assert np.abs(got - plain).max() > 1e-3  # the adapter changed the model


def test_scores_only_audit_matches_the_model_audit(tmp_path, tiny_demo, tiny_texts, capsys):
    """Per-token log-probabilities computed elsewhere (here by the model itself, written to JSONL and CSV) give the
    same loss, Min-K% and zlib AUCs as the model's own scores; Min-K%++ is reported as not run."""
    from leakaudit.lm.demo import write_jsonl
    from leakaudit.lm.load import load_causal_lm
    from leakaudit.lm.score import score_texts

    lm = load_causal_lm(tiny_demo.target_dir)
    mem, non = tiny_texts
    lp = lambda ts: [a.round(6).tolist() for a in ts.logprobs]
    write_jsonl(tmp_path / "m.jsonl", mem, lp=lp(score_texts(lm.model, lm.tokenizer, mem, max_length=128)))
    non_lp = lp(score_texts(lm.model, lm.tokenizer, non, max_length=128))
    pd.DataFrame({"text": non, "lp": [json.dumps(v) for v in non_lp]}).to_csv(tmp_path / "n.csv", index=False)
    out = tmp_path / "scores"
    assert main(["audit", "--logprobs-column", "lp", "--text-column", "text", "--members", str(tmp_path / "m.jsonl"),
                 "--nonmembers", str(tmp_path / "n.csv"), "--out", str(out), "--quiet", "--profile", "smoke"]) == 0
    res = _results(out)
    # the model's own scores, computed here, give the same AUCs
    from leakaudit.lm.attacks import run_lm_attacks
    from leakaudit.metrics import auc

    texts = mem + non
    own = run_lm_attacks(score_texts(lm.model, lm.tokenizer, texts, max_length=128), texts)
    m = np.r_[np.ones(len(mem)), np.zeros(len(non))]
    for name in ("lm_loss", "lm_min_k", "lm_zlib"):
        assert res["membership"][name]["auc"] == pytest.approx(auc(m, own[name]), abs=1e-6)
    assert "lm_min_k_pp" not in res["membership"]
    assert any(s["name"] == "Min-K%++, window Min-K%++ votes" for s in res["skipped"])
    assert "scores only" in res["target"]["description"]
    # no model, no tokens to decode: the report says why the leaked windows are not shown (issue 89)
    assert "no tokens to decode" in res["leaked_windows"]["reason"] and not res["leaked_windows"]["texts"]
    html = (out / "report.html").read_text()
    assert "windows that carry the signal are not shown: the per-token scores were given without the model" in html
    assert "leaked-windows-table" not in html
    # a malformed list is one line, exit 2
    pd.DataFrame({"text": non, "lp": ["[0.1, oops"] * len(non)}).to_csv(tmp_path / "bad.csv", index=False)
    capsys.readouterr()
    _one_line_exit_2(capsys, ["--logprobs-column", "lp", "--text-column", "text", "--members",
                              str(tmp_path / "m.jsonl"), "--nonmembers", str(tmp_path / "bad.csv"),
                              "--out", str(tmp_path / "o")], "is not a JSON list of numbers")


def test_language_model_audited_in_memory_as_from_its_directory(tmp_path, tiny_demo, tiny_texts):
    """leakaudit.audit() takes a transformers model, its tokenizer and reference models as objects, with the texts as
    DataFrames or lists: the same checks, values and verdict as the command line on the same model's directory."""
    import leakaudit
    from leakaudit.exceptions import InvalidParameterError
    from leakaudit.lm.load import load_causal_lm

    code, out = _audit(tmp_path, tiny_demo.target_dir, tiny_demo.members, tiny_demo.nonmembers,
                       "--reference-dir", str(tiny_demo.base_dir), "--dataset-inference", "--no-extraction")
    assert code == 0
    on_disk = _results(out)
    lm, base = load_causal_lm(tiny_demo.target_dir), load_causal_lm(tiny_demo.base_dir)
    members, nonmembers = tiny_texts
    res = leakaudit.audit(lm.model, pd.DataFrame({"text": members, "n": 1}), nonmembers, text_column="text",
                          tokenizer=lm.tokenizer, references=[base.model], profile="smoke", dataset_inference=True,
                          extraction=False)
    assert res.outcome == on_disk["verdict"]["outcome"] == "do not publish"
    got = {c.id: (c.status, c.value) for c in res.checks}
    want = {c["id"]: (c["status"], c["value"]) for c in on_disk["verdict"]["checks"]}
    assert got.keys() == want.keys()
    for k in want:
        assert got[k][0] == want[k][0], k
        if want[k][1] is None:  # not measurable: null in the file
            assert got[k][1] is None or np.isnan(got[k][1]), k
        else:
            assert got[k][1] == pytest.approx(want[k][1], rel=1e-9), k
    assert res.dataset_inference.verdict == on_disk["dataset_inference"]["verdict"]
    assert "from memory" in res.target.description and res.records["text"].notna().all()
    # the settings given, with no file behind the model (results.json's config says so for an in-memory audit)
    assert res.config["model_dir"] is None and res.config["train"] is None and res.config["test"] is None
    assert res.config["text_column"] == "text" and res.config["dataset_inference"] is True
    res.save(tmp_path / "mem")
    assert (tmp_path / "mem" / "report.html").is_file()
    # the evidence record fingerprints the objects as given and records the call; the tokenizer is named as not
    from leakaudit.audit.result.evidence import array_digest, frame_digest, model_digest

    ev = res.evidence
    assert ev["audit"]["command"] == (
        f"leakaudit.audit(<{type(lm.model).__name__}>, members=<DataFrame {len(members)}x2>, nonmembers=<list of "
        f"{len(nonmembers)} texts>, text_column='text', tokenizer=<{type(lm.tokenizer).__name__}>, "
        f"references=[<{type(base.model).__name__}>], profile='smoke', dataset_inference=True, extraction=False)")
    by = {f["role"]: f for f in ev["files"]}
    assert by["members"]["sha256"] == frame_digest(pd.DataFrame({"text": members, "n": 1}))
    assert by["non-members"]["sha256"] == array_digest(nonmembers)
    assert by["model"]["sha256"] == model_digest(lm.model) and by["model"]["form"] == "safetensors"
    assert by["reference model 1"]["sha256"] == model_digest(base.model)
    assert by["tokenizer"]["sha256"] is None and "Not fingerprinted: the tokenizer" in ev["limitations"]
    # what a language model's audit cannot take is refused by argument name
    with pytest.raises(InvalidParameterError, match="tokenizer is required"):
        leakaudit.audit(lm.model, members, nonmembers)
    with pytest.raises(InvalidParameterError, match="label"):
        leakaudit.audit(lm.model, members, nonmembers, tokenizer=lm.tokenizer, label="y")
    with pytest.raises(InvalidParameterError, match="text_column"):
        leakaudit.audit(lm.model, pd.DataFrame({"text": members}), nonmembers, tokenizer=lm.tokenizer)
    with pytest.raises(leakaudit.LeakauditError, match="text_column 'body' is not a column of members"):
        leakaudit.audit(lm.model, pd.DataFrame({"text": members}), nonmembers, tokenizer=lm.tokenizer,
                        text_column="body")
    with pytest.raises(InvalidParameterError, match="references\\[0\\]"):
        leakaudit.audit(lm.model, members, nonmembers, tokenizer=lm.tokenizer, references=["base"])


def test_redacted_report_shows_no_extracted_span(tmp_path, tiny_demo):
    """--redact: the report's extraction table says "redacted" where the members' spans, the text before them and
    the tokens the model raised were, results.json leaves them out too (their numbers kept), evidence.json says no
    member text is quoted; the records table holds no text either."""
    args = (tiny_demo.target_dir, tiny_demo.members, tiny_demo.nonmembers, "--reference-dir", str(tiny_demo.base_dir))
    code, plain = _audit(tmp_path / "plain", *args)
    assert code == 0
    spans = _results(plain)["extraction"]["spans"]
    assert spans and "quotes the members' texts" in json.loads((plain / "evidence.json").read_text())["personal_data"]
    code, out = _audit(tmp_path / "red", *args, "--redact")
    assert code == 0
    html, written = (out / "report.html").read_text(), (out / "results.json").read_text()
    assert "<td>…redacted</td><td><b>redacted</b></td>" in html and "Written redacted" in html
    red = _results(out)["extraction"]
    assert red["redacted"] is True and [s["log_p"] for s in red["spans"]] == [s["log_p"] for s in spans]
    assert all(s["span"] is None and s["context"] is None for s in red["spans"])
    for sp in spans:
        for text in (sp["span"], sp["context"], *(t["token"] for t in sp["raised"] or [])):
            if len(text.strip()) > 3:
                assert html_escape(text) not in html, text
                assert json.dumps(text)[1:-1] not in written, text
    assert "quotes the members' texts" not in json.loads((out / "evidence.json").read_text())["personal_data"]
    assert "text" not in read_records_csv(out / "records.csv").columns


def test_extraction_not_asked_for_is_said_not_implied(tiny_demo, tiny_texts):
    """An LM audit without extraction lists it as not run, saying no membership result bounds it (issue 89)."""
    import leakaudit

    from leakaudit.lm.load import load_causal_lm

    lm = load_causal_lm(tiny_demo.target_dir)
    res = leakaudit.audit(lm.model, *tiny_texts, tokenizer=lm.tokenizer, profile="smoke", extraction=False,
                          verbose=False)
    (sk,) = [s for s in res.skipped if s.name == "extraction"]
    assert "no membership result bounds extraction" in sk.reason and "extraction=True" in sk.fix
    assert res.extraction is None
