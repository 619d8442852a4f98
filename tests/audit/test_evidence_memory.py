"""The evidence record of an audit given in memory: digests of canonical forms of the tables and the model, the call
as made, the seed and profile, and what could not be fingerprinted (leakaudit.audit.inputs.digests)."""

import hashlib
import json

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LogisticRegression

import leakaudit
from leakaudit.audit.api import _call_text
from leakaudit.audit.inputs.digests import FRAME_FORM, SKOPS_FORM, memory_entry
from leakaudit.audit.result.evidence import EVIDENCE_VERSION, array_digest, build_evidence, frame_digest, model_digest
from leakaudit.audit.policy import DEFAULT_POLICY
from leakaudit.metrics import min_nonmembers_for_tpr
from test_evidence import WHEN, _results


def _tables(n=150, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(2 * n, 3))
    y = X[:, 0] + 0.5 * rng.normal(size=2 * n) > 0
    df = pd.DataFrame(X, columns=["a", "b", "c"]).assign(colour=rng.choice(["red", "blue"], 2 * n),
                                                         label=np.where(y, "yes", "no"))
    return df.iloc[:n], df.iloc[n:]


def _mixed():
    """A table of every kind of column: numbers, missing values, text, categories, nullable integers, dates."""
    return pd.DataFrame({"age": [30, 41, 52], "income": [1.5, np.nan, -0.0], "city": ["Leeds", None, "Ely"],
                         "grade": pd.Categorical(["a", "b", "a"]), "n": pd.array([1, None, 3], dtype="Int64"),
                         "when": pd.to_datetime(["2020-01-01", "2021-06-30", None]), "flag": [True, False, True]},
                        index=[10, 11, 12])


def test_in_memory_audit_records_digests_call_seed_and_profile(tmp_path):
    mem, non = _tables(100)
    mem, non = mem.drop(columns="colour"), non.drop(columns="colour")
    model = LogisticRegression().fit(mem[["a", "b", "c"]], mem["label"])
    res = leakaudit.audit(model, mem, non, label="label", profile="smoke", seed=3)
    ev = res.evidence
    assert ev["evidence_version"] == EVIDENCE_VERSION == 5
    call = ("leakaudit.audit(<LogisticRegression>, members=<DataFrame 100x4>, nonmembers=<DataFrame 100x4>, "
            "label='label', profile='smoke', seed=3)")
    assert ev["audit"]["command"] == res.command == call
    assert ev["audit"]["seed"] == 3 and ev["audit"]["profile"] == "smoke"
    by = {f["role"]: f for f in ev["files"]}
    assert set(by) == {"model", "members", "non-members"}
    assert all(f["source"] == "memory" for f in ev["files"])
    assert by["members"]["sha256"] == frame_digest(mem) and by["non-members"]["sha256"] == frame_digest(non)
    assert by["members"]["shape"] == [100, 4] and by["members"]["form"] == FRAME_FORM
    assert by["members"]["dtypes"][0] == ["a", "float64"]
    assert by["model"]["sha256"] == model_digest(model) and by["model"]["form"] == SKOPS_FORM
    assert by["model"]["type"] == "sklearn.linear_model._logistic.LogisticRegression"
    assert "No file holds the model, members and non-members (objects in memory)" in ev["limitations"]
    assert "leakaudit.audit.result.evidence.frame_digest (leakaudit-frame-1)" in ev["limitations"]
    assert "Not fingerprinted" not in ev["limitations"]
    saved = json.loads((res.save(tmp_path / "out") / "evidence.json").read_text())
    assert saved["files"] == ev["files"] and saved["audit"]["command"] == call


def test_frame_digest_is_the_values_and_changes_with_one():
    df = _mixed()
    d = frame_digest(df)
    assert len(d) == 64 and d == frame_digest(df.copy()) == frame_digest(df.reset_index(drop=True))  # not the index
    for change in (dict(age=[30, 41, 53]),
                   dict(income=[1.5, np.nan, 0.0]),  # -0.0 is not 0.0
                   dict(city=["Leeds", "", "Ely"]),  # an empty string is not a missing value
                   dict(n=pd.array([1, 2, 3], dtype="Int64")),
                   dict(age=df["age"].astype("float64"))):  # the same numbers in another dtype
        assert frame_digest(df.assign(**change)) != d, change
    assert frame_digest(df.rename(columns={"age": "Age"})) != d
    # a NaN is a NaN whatever its bits; text is text whether pandas holds it as object or string
    nan = np.frombuffer(np.uint64(0x7FF8000000000001).tobytes(), dtype=np.float64)[0]
    assert frame_digest(pd.DataFrame({"x": [nan]})) == frame_digest(pd.DataFrame({"x": [np.nan]}))
    words = pd.Series(["a", "b"], dtype=object)
    assert frame_digest(words.to_frame("w")) == frame_digest(words.astype("string").to_frame("w"))
    assert array_digest(["a", "b"]) == array_digest(np.array(["a", "b"], dtype=object))
    assert array_digest(np.eye(2)) != array_digest(np.eye(2).T.copy()[:, ::-1])


def test_model_digest_is_stable_and_changes_with_a_weight():
    X = np.random.default_rng(0).normal(size=(40, 3))
    model = LogisticRegression().fit(X, X[:, 0] > 0)
    d = model_digest(model)
    assert d == model_digest(model)  # skops' zip differs at every call; its canonical contents do not
    model.coef_[0, 1] += 1e-12
    assert model_digest(model) != d


def test_torch_model_digest_is_the_safetensors_file():
    torch = pytest.importorskip("torch")
    st = pytest.importorskip("safetensors.torch")
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2))
    assert model_digest(net) == hashlib.sha256(st.save(net.state_dict())).hexdigest()
    entry = memory_entry("model", net)
    assert entry["form"] == "safetensors" and entry["type"] == "torch.nn.modules.container.Sequential"
    tied = torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.Linear(3, 3))
    tied[1].weight = tied[0].weight  # shared tensors: written apart, still fingerprinted
    assert len(model_digest(tied)) == 64


class _Streaming:
    """A model holding a generator: skops cannot serialise it."""

    def __init__(self):
        self.batches = (i for i in range(3))

    def predict_proba(self, X):
        return np.full((len(X), 2), 0.5)


def test_a_model_that_cannot_be_serialised_is_named_in_the_limitations():
    mem, _ = _tables(5)
    rec = build_evidence(_results(), files={}, memory={"model": _Streaming(), "members": mem}, recorded=WHEN)
    by = {f["role"]: f for f in rec["files"]}
    assert by["model"]["sha256"] is None and by["model"]["source"] == "memory"
    assert by["model"]["note"].startswith("not fingerprinted: skops cannot serialise it (TypeError")
    assert by["members"]["sha256"] == frame_digest(mem)
    text = rec["limitations"]
    assert f"Not fingerprinted: the model ({__name__}._Streaming), skops cannot serialise it (TypeError" in text
    assert "the record cannot show that a later copy of it is the one audited" in text
    assert "No file holds the members (objects in memory)" in text


def test_demo_records_the_model_it_trained():
    from leakaudit.audit import audit_core, make_config
    from leakaudit.audit.inputs.data import prepare_data
    from leakaudit.audit.pipeline import DEMO_MODEL_ROLE
    from leakaudit.audit.plan import PLAN
    from leakaudit.audit.inputs.target import prepare_target

    cfg = make_config(profile="smoke", n_members=150, n_nonmembers=150, epochs=3, seed=3)
    ev = audit_core(cfg, verbose=False).evidence
    entry = {f["role"]: f for f in ev["files"]}[DEMO_MODEL_ROLE]
    assert entry["source"] == "memory" and entry["type"].endswith("MLPModel")
    # the same seed trains the same network: its digest is the one recorded
    again = prepare_target(cfg, prepare_data(cfg), random_state=PLAN.seeds(cfg.seed)["target"])
    assert entry["sha256"] == model_digest(again.model)
    assert ev["audit"]["command"] == "leakaudit audit" and ev["audit"]["seed"] == 3
    assert any(f["role"] == "demo data set" for f in ev["files"])


def test_the_call_shows_settings_and_summarises_records():
    p = np.full((20, 2), 0.5)
    text = _call_text(None, {"members": ["a text"] * 7, "nonmembers": pd.DataFrame({"t": ["x"]}), "label": None,
                             "predictions": (p, p), "sensitive": ["sex", "race"], "model_input": "auto",
                             "verbose": None, "thresholds": {"max_auc": 0.55}, "cache_dir": "c"})
    assert text == ("leakaudit.audit(members=<list of 7 texts>, nonmembers=<DataFrame 1x1>, "
                    "predictions=(<ndarray 20x2 float64>, <ndarray 20x2 float64>), sensitive=['sex', 'race'], "
                    "thresholds={'max_auc': 0.55}, cache_dir='c')")
    assert "secret" not in _call_text(LogisticRegression(), {"members": ["secret"], "references": ["secret"]})


def test_tpr_threshold_source_counts_the_non_members_this_audit_needs():
    rec = build_evidence(_results(), recorded=WHEN)
    by = {c["id"]: c for c in rec["checks"]}
    need = min_nonmembers_for_tpr(0.01, 0.05, confidence=0.99, n_members=1000)
    strict = min_nonmembers_for_tpr(0.001, 0.05, confidence=0.99, n_members=1000)
    src = by["membership.lira.tpr_at_low_fpr"]["threshold_source"]
    assert (f"at this audit's per-check confidence 0.99 and 1,000 members, a TPR at 1 % FPR can be shown above 0.05 "
            f"only with at least {need:,} non-members ({strict:,} at 0.1 % FPR); the audit had 1,000") in src
    assert "684" not in DEFAULT_POLICY.sources["low_fpr"]
    assert by["membership.lira.auc"]["threshold_source"] == f"max_auc: {DEFAULT_POLICY.sources['max_auc']}"
