"""The privacy unit (``unit=``, ``--unit``; leakaudit.audit.inputs.units): units are scored, left out and counted as units,
on data where the truth is known (planted repeated people)."""

import json

import numpy as np
import pandas as pd
import pytest

from leakaudit.audit.inputs.data import data_from_frames
from leakaudit.audit.inputs.units import rows_of_units, unit_membership, unit_scores
from leakaudit.exceptions import InvalidInputError, InvalidParameterError

FEATURES = ["x0", "x1", "x2", "x3"]


def _people(n_people, k, seed, *, noise=0.05, prefix="p"):
    """``n_people`` persons of ``k`` rows each: near-copies (``noise``) of the person's own point, one label per
    person drawn at random (so nothing but memorisation predicts a person's label)."""
    rng = np.random.default_rng(seed)
    centre = rng.normal(size=(n_people, len(FEATURES)))
    y = rng.integers(0, 2, n_people)
    person = np.repeat(np.arange(n_people), k)
    X = centre[person] + noise * rng.normal(size=(len(person), len(FEATURES)))
    return pd.DataFrame({"person": [f"{prefix}{seed}_{p}" for p in person], **dict(zip(FEATURES, X.T)),
                         "y": y[person]})


def _split_by_person(d, seed):
    """Members and non-members: half of the persons each, all of a person's rows on one side."""
    persons = d["person"].unique()
    mem = set(np.random.default_rng(seed).permutation(persons)[:len(persons) // 2])
    m = d["person"].isin(mem)
    return d[m].reset_index(drop=True), d[~m].reset_index(drop=True)


# -- the arithmetic on units ------------------------------------------------------------------------------------


def test_unit_scores_are_the_mean_of_the_rows_and_rows_of_units_cover_whole_units():
    g = np.array([0, 0, 1, 2, 2, 2])
    s = np.array([1.0, 3.0, 5.0, np.nan, 4.0, 6.0])
    assert unit_scores(s, g).tolist() == [2.0, 5.0, 5.0]  # a NaN row is left out of its unit's mean
    assert unit_scores(np.array([1.0, np.inf, 0.0, 1.0, 2.0, -np.inf]), g).tolist() == [np.inf, 0.0, -np.inf]
    assert unit_membership(g, 3).tolist() == [1, 1, 0]
    assert rows_of_units(g, [1, 4]).tolist() == [0, 1, 3, 4, 5]


# -- refusals at the boundary -------------------------------------------------------------------------------------


def test_a_unit_among_both_members_and_nonmembers_is_refused_naming_it():
    d = _people(20, 3, 0)
    mem, non = d.iloc[::2].reset_index(drop=True), d.iloc[1::2].reset_index(drop=True)  # a row-level split
    with pytest.raises(InvalidInputError, match=r"unit column 'person': \d+ unit\(s\) occur among both"):
        data_from_frames(mem, non, label="y", unit="person")
    mem, non = _split_by_person(d, 0)
    data = data_from_frames(mem, non, label="y", unit="person")  # the person-level split is taken
    assert "person" not in data.frame_mem.columns and data.X_mem.shape[1] == len(FEATURES)  # not a feature
    assert data.unit_summary()["n_member_units"] == 10 and data.unit_summary()["largest_unit"] == 3
    g = data.unit_groups
    assert g[:len(mem)].max() < g[len(mem):].min()  # the members' units first, none on both sides


def test_files_are_read_by_person_from_train_and_test_or_one_data_file(tmp_path):
    from leakaudit.audit import make_config
    from leakaudit.audit.inputs.data import prepare_data

    mem, non = _split_by_person(_people(20, 3, 4), 4)
    mem.to_csv(tmp_path / "train.csv", index=False)
    non.to_csv(tmp_path / "test.csv", index=False)
    pd.concat([mem.assign(member=1), non.assign(member=0)]).to_csv(tmp_path / "all.csv", index=False)
    for files in ({"train": tmp_path / "train.csv", "test": tmp_path / "test.csv"},
                  {"data": tmp_path / "all.csv", "membership_column": "member"}):
        data = prepare_data(make_config(label="y", unit="person", **files))
        assert data.unit_summary()["n_member_units"] == 10 and data.unit_summary()["n_nonmember_units"] == 10
        assert list(data.frame_mem.columns) == FEATURES  # neither the unit nor the membership column is a feature
    with pytest.raises(InvalidParameterError, match="the bundled demo's records have no unit column"):
        prepare_data(make_config(unit="person"))


@pytest.mark.parametrize("change, error, words", [
    (lambda m, n: (m.drop(columns="person"), n), InvalidParameterError, "is not a column of the members"),
    (lambda m, n: (m.assign(person=m["person"].where(m.index != 4)), n), InvalidInputError,
     "missing value.*row 5"),
    (lambda m, n: (m.assign(person=n["person"].iloc[0]), n), InvalidInputError, "occur among both"),
])
def test_missing_or_incomplete_unit_column_is_refused(change, error, words):
    mem, non = change(*_split_by_person(_people(20, 2, 1), 1))
    with pytest.raises(error, match=words):
        data_from_frames(mem, non, label="y", unit="person")
    with pytest.raises(InvalidParameterError, match="is the label column"):
        data_from_frames(mem, non, label="y", unit="y")


def test_cli_refuses_a_row_level_split_in_one_line_with_exit_2(tmp_path, capsys):
    from leakaudit.cli import main

    d = _people(20, 3, 2)
    d.iloc[::2].to_csv(tmp_path / "train.csv", index=False)
    d.iloc[1::2].to_csv(tmp_path / "test.csv", index=False)
    rc = main(["audit", "--train", str(tmp_path / "train.csv"), "--test", str(tmp_path / "test.csv"), "--label", "y",
               "--unit", "person", "--profile", "smoke", "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and len(err.splitlines()) == 1 and "Traceback" not in err and "occur among both" in err
    assert not (tmp_path / "out").exists()


# -- leave-one-unit-out: planted twins hide a row from leave-one-out, not from leaving out its unit -----------------


def test_pdtp_with_groups_leaves_out_the_whole_unit():
    from sklearn.neighbors import KNeighborsClassifier

    from leakaudit.dtp import pdtp
    from leakaudit.learners import SklearnLearner

    d = _people(12, 2, 3, noise=0.0)  # each person twice, exactly: a 1-NN model answers from the twin
    X, y = d[FEATURES].to_numpy(), d["y"].to_numpy()
    groups = pd.factorize(d["person"])[0]
    learner = SklearnLearner(estimator=KNeighborsClassifier(n_neighbors=1))
    rows = np.asarray(pdtp(learner, X, y, n_classes=2, random_state=0).values)
    units = np.asarray(pdtp(learner, X, y, n_classes=2, random_state=0, groups=groups).values)
    assert np.all(rows == 0.0)  # leaving one row out leaves its twin: the output does not move
    # leaving the person out, the nearest other person answers: the output flips wherever that person's label differs
    nearest = [int(np.argmin(np.where(groups != groups[i], ((X - X[i]) ** 2).sum(1), np.inf))) for i in range(len(X))]
    flips = y[nearest] != y
    assert flips.any() and np.all(units[flips] > 1.0) and np.all(units[~flips] == 0.0)


def test_leave_unit_out_trains_one_model_per_unit_and_seed():
    """Under one seed the rows of a unit share their leave-out model (same rows, same seed): it is trained once, and
    its outputs are each row's own (as training it per row gives)."""
    from sklearn.neighbors import KNeighborsClassifier

    from leakaudit.dtp.pdtp import loo_probabilities
    from leakaudit.engine import default_engine
    from leakaudit.learners import SklearnLearner

    d = _people(12, 2, 3, noise=0.0)
    X, y = d[FEATURES].to_numpy(), d["y"].to_numpy()
    groups = pd.factorize(d["person"])[0]
    learner, engine = SklearnLearner(estimator=KNeighborsClassifier(n_neighbors=1)), default_engine()
    sizes = []
    real = engine.predict_many
    engine.predict_many = lambda lr, X_, y_, subsets, *a, **k: (sizes.append(len(subsets)), real(lr, X_, y_, subsets,
                                                                                                  *a, **k))[1]
    records = np.arange(len(X))
    _, p_loo, _ = loo_probabilities(learner, X, y, records, n_classes=2, seed=3, loo_seeds=[5] * len(X),
                                    engine=engine, groups=groups, batch_size=4)
    assert sum(sizes) == 1 + len(np.unique(groups))  # the full model and one per unit, not one per row
    one_by_one = [real(learner, X, y, [np.flatnonzero(groups != groups[t])], [5], X[[t]], n_classes=2)[0, 0]
                  for t in records]
    assert np.array_equal(p_loo, np.asarray(one_by_one))
    sizes.clear()
    loo_probabilities(learner, X, y, records, n_classes=2, seed=3, loo_seeds=list(range(len(X))), engine=engine,
                      groups=groups, batch_size=4)
    assert sum(sizes) == 1 + len(X)  # a seed per row: every row's model is its own


def test_removal_with_groups_removes_and_remeasures_by_unit():
    """Removing a person's two rows and re-measuring the others leaving out units: the twins of the other persons
    still move when their unit goes (and do not when only a row does)."""
    from sklearn.neighbors import KNeighborsClassifier

    from leakaudit.dtp import removal_effect
    from leakaudit.learners import SklearnLearner

    d = _people(12, 2, 3, noise=0.0)
    X, y = d[FEATURES].to_numpy(), d["y"].to_numpy()
    groups = pd.factorize(d["person"])[0]
    learner = SklearnLearner(estimator=KNeighborsClassifier(n_neighbors=1))
    kw = dict(X_eval=X, y_eval=y, n_classes=2, random_state=0, statistical=False, n_seeds=2)
    by_row = removal_effect(learner, X, y, [0, 1], **kw)
    by_unit = removal_effect(learner, X, y, [0, 1], groups=groups, **kw)
    assert by_row.removed == by_unit.removed == [0, 1] and by_unit.records_measured == len(X) - 2
    assert by_row.records_above_after == [] and len(by_unit.records_above_after) > 0


def test_unit_scores_separate_people_at_least_as_well_as_rows_on_a_memorising_model():
    """The audit's combination (the mean of a person's rows' loss scores) on a forest that memorises its members'
    persons: the unit-level advantage is at least the row-level one (averaging a person's near-copies removes
    row noise, never adds any), for each of 5 splits."""
    from sklearn.ensemble import RandomForestClassifier

    from leakaudit.metrics import membership_advantage
    from leakaudit.membership import cross_entropy_loss

    for seed in range(5):
        mem, non = _split_by_person(_people(60, 4, seed, noise=0.5), seed)
        model = RandomForestClassifier(n_estimators=10, random_state=seed).fit(mem[FEATURES], mem["y"])
        data = data_from_frames(mem, non, label="y", unit="person")
        probs = model.predict_proba(pd.concat([mem, non])[FEATURES])
        s = -cross_entropy_loss(probs, data.y_audit)
        g = data.unit_groups
        row_adv = membership_advantage(data.is_member, s)
        unit_adv = membership_advantage(unit_membership(g, len(mem)), unit_scores(s, g))
        assert unit_adv >= row_adv > 0.2, (seed, row_adv, unit_adv)


# -- the audit with a unit (slow: whole smoke audits) -------------------------------------------------------------


@pytest.mark.slow
def test_audit_by_person_on_a_memorising_model(tmp_path):
    """A person-level split and a model that memorises (a forest): the audit with the unit counts units in every
    attack, its advantage at least the row audit's for the loss attack, PDTP leaves out units, and records.csv,
    results.json and evidence.json say so."""
    import leakaudit
    from sklearn.ensemble import RandomForestClassifier

    mem, non = _split_by_person(_people(60, 4, 7, noise=0.5), 7)
    model = RandomForestClassifier(n_estimators=20, random_state=0).fit(mem[FEATURES], mem["y"])
    by_row = leakaudit.audit(model, mem.drop(columns="person"), non.drop(columns="person"), label="y",
                             profile="smoke", random_state=0, removal=False)
    by_unit = leakaudit.audit(model, mem, non, label="y", unit="person", profile="smoke", random_state=0,
                              removal=False)
    for name, m in by_unit.membership.items():
        assert m.counts == "units" and (m.n_members, m.n_nonmembers) == (30, 30), name
    assert by_unit.membership["loss"].advantage >= by_row.membership["loss"].advantage
    assert by_unit.membership["loss"].auc_ci[0] > 0.5
    assert by_unit.dtp.leave_out == "unit" and by_unit.dtp.n_units >= 1
    by_unit.save(tmp_path)
    records = pd.read_csv(tmp_path / "records.csv")
    assert records["unit"].tolist() == mem["person"].tolist() + non["person"].tolist()
    results = json.loads((tmp_path / "results.json").read_text())
    assert results["data"]["unit"]["column"] == "person" and results["data"]["unit"]["n_member_rows"] == 120
    evidence = json.loads((tmp_path / "evidence.json").read_text())
    assert evidence["unit"].startswith("unit column 'person'")
    report = (tmp_path / "report.html").read_text()
    assert 'id="unit"' in report and "120 rows, 30 units" in report


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(5))
def test_null_model_gives_unit_level_intervals_that_contain_no_leak(seed):
    """A model trained on other persons (never on the members) over 5 seeds: every attack's unit-level AUC
    interval holds 0.5 (advantage 0)."""
    import leakaudit
    from sklearn.ensemble import RandomForestClassifier

    mem, non = _split_by_person(_people(60, 3, 100 + seed, noise=0.5), seed)
    other = _people(60, 3, 200 + seed, noise=0.5, prefix="q")
    model = RandomForestClassifier(n_estimators=20, random_state=seed).fit(other[FEATURES], other["y"])
    res = leakaudit.audit(model, mem, non, label="y", unit="person", profile="smoke", random_state=seed,
                          removal=False)
    for name, m in res.membership.items():
        lo, hi = m.auc_ci
        assert lo <= 0.5 <= hi, (seed, name, m.auc, m.auc_ci, m.advantage)
