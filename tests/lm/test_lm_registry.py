"""Language-model attacks live in the membership attacks' one registry as text attacks: one registered from outside
leakaudit runs in the language-model audit, and neither audit lists the other modality's attacks."""

import numpy as np
import pytest

from leakaudit.exceptions import InvalidParameterError
from leakaudit.membership import ATTACKS, audit_attacks, available_attacks, make_attack, register_attack


@pytest.fixture
def max_logprob():
    """A text attack registered from outside the package: the text's most likely token's log-probability."""
    register_attack("x_max_logprob", lambda ts, texts, refs, k: np.array([lp.max() for lp in ts.logprobs]),
                    description="the highest token log-probability (a test's own attack)", display="max token",
                    modality="text")
    yield "x_max_logprob"
    ATTACKS._entries.pop("x_max_logprob", None)


def test_text_attack_registered_from_outside_runs_in_the_lm_audit(tmp_path, tiny_demo, tiny_texts, max_logprob):
    import leakaudit
    from leakaudit.lm.load import load_causal_lm
    from leakaudit.lm.score import score_texts
    from leakaudit.metrics import auc

    lm = load_causal_lm(tiny_demo.target_dir)
    members, nonmembers = tiny_texts
    res = leakaudit.audit(lm.model, members, nonmembers, tokenizer=lm.tokenizer, profile="smoke", extraction=False)
    ids = [c.id for c in res.checks]
    assert "membership.x_max_logprob.auc" in ids and "membership.lm_loss.auc" in ids
    got = res.membership["x_max_logprob"]
    assert got["display"] == "max token" and got["reference"].startswith("the highest token")
    texts = members + nonmembers
    ts = score_texts(lm.model, lm.tokenizer, texts, max_length=128)
    m = np.r_[np.ones(len(members)), np.zeros(len(nonmembers))]
    assert got["auc"] == pytest.approx(auc(m, np.array([lp.max() for lp in ts.logprobs])), abs=1e-6)
    # what it needs decides when it runs: reference models' scores here, which this audit does not have
    register_attack("x_max_logprob", lambda ts, texts, refs, k: ts.mean_logprob(), description="x", modality="text",
                    needs=["references"], force=True)
    res = leakaudit.audit(lm.model, members, nonmembers, tokenizer=lm.tokenizer, profile="smoke", extraction=False)
    assert "x_max_logprob" not in res.membership and "lm_loss" in res.membership


def test_each_audit_lists_only_its_modality(max_logprob, tmp_path):
    import leakaudit.lm  # noqa: F401  (registers leakaudit's own text attacks)
    from leakaudit.cli.membership import run_membership

    tabular, text = available_attacks(), available_attacks("text")
    assert "loss" in tabular and "lira" in tabular and not any(n.startswith(("lm_", "x_max")) for n in tabular)
    assert text == ["lm_loss", "lm_zlib", "lm_min_k", "lm_min_k_pp", "lm_reference", "lm_lira", "lm_rmia",
                    "lm_window_reference", "lm_window_min_k_pp", max_logprob]
    for retrainable in (True, False):
        for access in ("scores", "labels"):
            assert set(audit_attacks(retrainable, access)) <= set(tabular)
    with pytest.raises(InvalidParameterError, match="text attack"):
        make_attack("lm_loss")
    # the tabular command refuses a text attack's name, listing the tabular ones
    with pytest.raises(InvalidParameterError, match="unknown attack 'lm_loss'; choose from loss, yeom_adv1"):
        run_membership("adult", "mlp", ["lm_loss"], tmp_path, n_members=10, n_nonmembers=10, n_population=0,
                       n_reference=0, n_boot=10, seed=0)


@pytest.mark.parametrize("kw, match", [
    (dict(modality="image"), "modality"),
    (dict(modality="text", needs=["labels"]), "needs"),
    (dict(modality="text", needs="references"), "needs"),
    (dict(needs=["references"]), "text attacks"),
    (dict(modality="text", audit="retrainable"), "audit"),
])
def test_bad_modality_or_needs_is_refused(kw, match):
    with pytest.raises(InvalidParameterError, match=match):
        register_attack("x_bad", lambda ts, texts, refs, k: None, description="x", **kw)
    assert "x_bad" not in ATTACKS.names()


def test_the_built_in_text_attacks_are_listed_before_any_language_model_code_runs():
    """A fresh interpreter that imports only the registry lists leakaudit's text attacks (its own entry point)."""
    import subprocess
    import sys

    code = ("import sys; from leakaudit.membership import available_attacks; t = available_attacks('text'); "
            "print(' '.join(t))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert {"lm_loss", "lm_zlib", "lm_min_k_pp", "lm_window_reference"} <= set(out), out
