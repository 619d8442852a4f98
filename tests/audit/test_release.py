"""The release context selects the analyses an adversary with that access could run (issue 47), and the structural
checks judge a released model file before any training."""

import json

import numpy as np
import pandas as pd
import pytest
from sklearn.neighbors import KNeighborsClassifier

import leakaudit
from leakaudit.audit import make_config, run_audit
from leakaudit.exceptions import InvalidParameterError
from leakaudit.membership import audit_attacks, register_attack

SMALL = dict(profile="smoke", n_members=150, n_nonmembers=150, epochs=3, seed=3)


@pytest.fixture(scope="module")
def labels_demo(tmp_path_factory):
    out = tmp_path_factory.mktemp("labels") / "run"
    return out, run_audit(make_config(**SMALL, release="labels"), out, verbose=False)


def test_a_labels_release_runs_the_label_only_attacks_and_nothing_that_reads_scores(labels_demo):
    out, res = labels_demo
    assert set(res.membership) == {"label_only", "label_gap"}
    assert res.dtp is None and res.attribute == {}
    assert {s["name"] for s in res.skipped} >= {"PDTP / DTP-1", "attribute inference"}
    assert {c.id for c in res.checks} == {"membership.label_only.auc", "membership.label_only.tpr_at_low_fpr",
                                          "membership.label_gap.auc", "membership.label_gap.tpr_at_low_fpr"}
    # the correction covers the four checks it made, not the scores audit's
    assert res.verdict.check_confidence == pytest.approx(1 - 0.05 / 4)
    assert res.verdict.release == "labels" and "only the predicted label" in res.verdict.threat_model
    assert "only the predicted label" in (out / "report.html").read_text()
    ev = json.loads((out / "evidence.json").read_text())
    assert ev["release"]["context"] == "labels"
    rec = pd.read_csv(out / "records.csv")
    # the perturbed-copies score is a share of 65 answers; the gap attack's is 0 or 1
    assert set(np.unique(rec["score_label_gap"])) <= {0.0, 1.0}
    assert len(np.unique(rec["score_label_only"])) > 2


def test_only_label_attacks_have_labels_access():
    assert audit_attacks(True, "labels") == ["label_only", "label_gap"]
    assert not {"label_only", "label_gap"} & set(audit_attacks(True)) and "lira" in audit_attacks(True)
    with pytest.raises(InvalidParameterError, match="access must be one of 'scores', 'labels'; got 'weights'"):
        register_attack("x_test_access", KNeighborsClassifier, description="x", access="weights")


def _tables(n=200, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(2 * n, 3))
    y = X[:, 0] + 0.8 * rng.normal(size=2 * n) > 0
    df = pd.DataFrame(X, columns=["a", "b", "c"]).assign(label=np.where(y, "yes", "no"))
    return df.iloc[:n], df.iloc[n:]


def test_a_weights_release_adds_the_structural_checks(tmp_path):
    """A 1-nearest-neighbour model stores its training records verbatim: released as weights it is withheld by its
    structure alone; released as a scores service, the structural checks do not apply."""
    mem, non = _tables()
    knn = KNeighborsClassifier(n_neighbors=1).fit(mem[["a", "b", "c"]], mem["label"])
    kw = dict(label="label", profile="smoke", cache_dir=str(tmp_path / "c"))
    res = leakaudit.audit(knn, mem, non, release="weights", **kw)
    structural = {c.id: c for c in res.checks if c.analysis == "structural"}
    assert structural["structural.instance_based"].status == "exceeded"
    assert res.outcome == "do not publish" and res.verdict.release == "weights"
    assert res.evidence["release"]["context"] == "weights"
    scores = leakaudit.audit(knn, mem, non, release="scores", **kw)
    assert not [c for c in scores.checks if c.analysis == "structural"]


def _mixed_tables(n=200, seed=0):
    """Numeric and categorical columns (one category, "violet", held by one non-member only)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(2 * n, 2))
    colour = rng.choice(["red", "green", "blue"], size=2 * n).astype(object)
    colour[n + 3] = "violet"
    y = X[:, 0] + (colour == "red") + 0.8 * rng.normal(size=2 * n) > 0.3
    df = pd.DataFrame(X, columns=["a", "b"]).assign(colour=colour, label=np.where(y, "yes", "no"))
    return df.iloc[:n], df.iloc[n:]


@pytest.mark.parametrize("leaky", [True, False])
def test_a_labels_release_of_a_pipeline_on_the_tables_own_columns_is_queried_through_decoded_copies(tmp_path, leaky):
    """A Pipeline on the table's own columns answers the label-only attack's perturbed copies, made in leakaudit's
    encoding and decoded to the columns (categories only those some audited record holds, so the model is never
    asked about one it may refuse): a 1-nearest-neighbour rule on its members is found by them; the same rule on
    other records is not."""
    from sklearn.compose import make_column_transformer
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    mem, non = _mixed_tables(300, seed=4)
    fit_on = mem if leaky else _mixed_tables(300, seed=5)[0]
    cols = ["a", "b", "colour"]
    model = make_pipeline(make_column_transformer((StandardScaler(), ["a", "b"]),
                                                  (OneHotEncoder(handle_unknown="error"), ["colour"])),
                          KNeighborsClassifier(n_neighbors=1))
    model.fit(fit_on[cols], fit_on["label"])
    non = non.replace("violet", "red")  # a category the model never saw: scoring the non-members would refuse it
    res = leakaudit.audit(model, mem, non, label="label", profile="smoke", release="labels",
                          cache_dir=str(tmp_path / "c"))
    assert set(res.membership) == {"label_only", "label_gap"}
    auc = res.membership["label_only"]["auc"]
    lo, hi = res.membership["label_only"]["auc_ci"]
    if leaky:
        assert lo > 0.5 and res.outcome == "do not publish"
    else:
        assert lo < 0.5 < hi and res.outcome != "do not publish"
    assert 0 <= auc <= 1


def test_decoded_copies_hold_only_categories_the_audited_records_hold():
    from leakaudit.audit.inputs.target import _decoder
    from leakaudit.data import TabularEncoder

    mem, non = _mixed_tables(50)
    frame = pd.concat([mem, non], ignore_index=True).drop(columns="label")
    enc = TabularEncoder().fit(frame)
    X = enc.transform(frame)
    data = type("D", (), {"encoder": enc})()
    decode, groups = _decoder(data, frame[frame["colour"] != "violet"])
    assert [g.size for g in groups] == [3]
    back = decode(X)
    assert back.loc[frame["colour"] != "violet", "colour"].tolist() == frame.loc[
        frame["colour"] != "violet", "colour"].tolist()
    assert "violet" not in set(back["colour"])  # a category the model was never asked about is never decoded
    np.testing.assert_allclose(back[["a", "b"]].to_numpy(float), frame[["a", "b"]].to_numpy(float), atol=1e-12)


def test_release_is_checked_at_the_boundary():
    with pytest.raises(InvalidParameterError, match="release"):
        make_config(release="api")


def test_check_inputs_says_when_the_model_was_not_trained_on_the_members(tmp_path):
    """--check-inputs retrains the recipe a few times (seconds): a 1-nearest-neighbour model trained on other records
    than the stated members does not show the membership signal its recipe gives."""
    import skops.io as sio

    from leakaudit.audit.pipeline import check_inputs

    mem, non = _tables(300, seed=1)
    other, _ = _tables(300, seed=2)
    mem.to_csv(tmp_path / "m.csv", index=False)
    non.to_csv(tmp_path / "n.csv", index=False)
    found = {}
    for name, fit_on in (("right", mem), ("wrong", other)):
        knn = KNeighborsClassifier(n_neighbors=1, algorithm="brute").fit(fit_on[["a", "b", "c"]], fit_on["label"])
        sio.dump(knn, tmp_path / f"{name}.skops")
        cfg = make_config(train=tmp_path / "m.csv", test=tmp_path / "n.csv", label="label",
                          model=tmp_path / f"{name}.skops", cache_dir=str(tmp_path / "cache"))
        found[name] = check_inputs(cfg, tmp_path / name)["recipe"]
    assert found["right"]["reproduces"] is True
    assert found["wrong"]["reproduces"] is False and "not trained on exactly these members" in found["wrong"]["sentence"]
    assert json.loads((tmp_path / "wrong" / "inputs.json").read_text())["recipe"]["n_reference"] == 8


def test_a_language_model_audit_is_a_scores_release_only():
    with pytest.raises(InvalidParameterError, match="release 'labels': a language model's audit reads its token"):
        make_config(model_dir="lm", text_column="text", train="m.jsonl", test="n.jsonl", release="labels")
