"""Input integrity (issue 28): a wrong input gets a clear one-line refusal, never a wrong answer.

Each failure below once gave a silent wrong answer or a traceback; the refusals come from
prepare_data, before any model is trained, so these tests are fast. See docs/input.md.
"""

import numpy as np
import pandas as pd
import pytest

from leakaudit.audit import make_config
from leakaudit.audit.inputs.data import prepare_data
from leakaudit.cli import main
from leakaudit.exceptions import InvalidInputError, InvalidParameterError


@pytest.fixture(scope="module")
def tables():
    from leakaudit.data import load_adult

    df = load_adult().to_frame().sample(400, random_state=0).reset_index(drop=True)
    return df.iloc[:200].reset_index(drop=True), df.iloc[200:].reset_index(drop=True)


def _write(tmp_path, train, test, pop=None):
    paths = {"train": tmp_path / "train.csv", "test": tmp_path / "test.csv"}
    train.to_csv(paths["train"], index=False)
    test.to_csv(paths["test"], index=False)
    if pop is not None:
        paths["population"] = tmp_path / "pop.csv"
        pop.to_csv(paths["population"], index=False)
    return paths


def _prepare(paths, label="income", **kw):
    return prepare_data(make_config(label=label, profile="smoke", **paths, **kw))


def _one_line(err):
    msg = str(err.value)
    assert "\n" not in msg and msg
    return msg


def test_clean_tables_pass_and_column_order_does_not_matter(tables, tmp_path):
    train, test = tables
    ref = _prepare(_write(tmp_path, train, test))
    assert ref.class_names == ["<=50K", ">50K"] and ref.X_mem.shape == (200, 81)
    shuffled = test[list(reversed(test.columns))]  # was: "different columns: " with an empty list
    got = _prepare(_write(tmp_path, train, shuffled, pop=test.sample(frac=1.0, axis=1, random_state=1)))
    np.testing.assert_array_equal(got.X_mem, ref.X_mem)
    np.testing.assert_array_equal(got.X_non, ref.X_non)
    assert list(got.frame_non.columns) == list(ref.frame_non.columns)


def test_stray_text_in_numeric_column_is_refused_naming_file_column_value_and_row(tables, tmp_path):
    train, test = tables
    bad = test.astype({"age": object})
    bad.loc[6, "age"] = "abc"  # was: 'age' silently became a categorical of every age seen
    with pytest.raises(InvalidInputError) as err:
        _prepare(_write(tmp_path, train, bad))
    msg = _one_line(err)
    assert "column 'age'" in msg and "test.csv" in msg and "'abc'" in msg and "row 7" in msg


def test_numbers_written_as_text_are_parsed_jointly(tables, tmp_path):
    train, test = tables
    p = _write(tmp_path, train, test)
    ref = _prepare(p)
    as_text = test.astype({"age": str})  # a parquet file that stores the ages as text
    as_text.to_parquet(tmp_path / "test.parquet", index=False)
    got = _prepare({"train": p["train"], "test": tmp_path / "test.parquet"})
    assert got.encoder.groups["age"].stop - got.encoder.groups["age"].start == 1  # still one numeric column
    np.testing.assert_array_equal(got.X_mem, ref.X_mem)
    np.testing.assert_array_equal(got.X_non, ref.X_non)
    as_text.loc[4, "age"] = None  # a numeric column with an empty cell: refused naming the file and the row
    as_text.to_parquet(tmp_path / "test.parquet", index=False)
    with pytest.raises(InvalidInputError, match=r"numeric column 'age' has 1 missing value\(s\) in the non-members "
                                                r"\(.*test\.parquet\) \(row 5\)"):
        _prepare({"train": p["train"], "test": tmp_path / "test.parquet"})


def test_stray_label_value_is_refused_not_a_new_class(tables, tmp_path):
    train, test = tables
    bad = test.copy()
    bad.loc[3, "income"] = "yes"  # was: a third class and test accuracy 0.0
    with pytest.raises(InvalidInputError) as err:
        _prepare(_write(tmp_path, train, bad))
    msg = _one_line(err)
    assert "label column 'income'" in msg and "'yes'" in msg and "only in the non-members" in msg
    assert "test.csv" in msg and "row 4" in msg
    # a numeric label with one word in the other file: refused as a type clash on the label
    tr, te = train.copy(), test.copy()
    tr["income"] = (tr["income"] == ">50K").astype(int)
    te["income"] = (te["income"] == ">50K").astype(int).astype(object)
    te.loc[0, "income"] = "yes"
    with pytest.raises(InvalidInputError, match="label column 'income' holds numbers in the members"):
        _prepare(_write(tmp_path, tr, te))


def test_members_only_class_is_refused(tables, tmp_path):
    train, test = tables
    tr = train.copy()
    tr.loc[:4, "income"] = "unknown"
    with pytest.raises(InvalidInputError) as err:
        _prepare(_write(tmp_path, tr, test))
    msg = _one_line(err)
    assert "'unknown'" in msg and "only in the members" in msg and "rows 1, 2, 3 and 2 more" in msg


@pytest.mark.parametrize("change", ["missing", "extra"])
def test_population_with_other_columns_is_refused(tables, tmp_path, change):
    train, test = tables
    pop = test.drop(columns=["workclass"]) if change == "missing" else test.assign(zip_code="x")
    with pytest.raises(InvalidInputError) as err:  # was: accepted and NaN-filled
        _prepare(_write(tmp_path, train, test, pop=pop))
    msg = _one_line(err)
    assert "pop.csv" in msg and ("lacks 'workclass'" if change == "missing" else "has extra 'zip_code'") in msg
    # the same refusal as a train/test mismatch
    with pytest.raises(InvalidInputError, match="test.csv.*does not have the same columns"):
        _prepare(_write(tmp_path, train, pop))


def test_population_only_class_is_refused(tables, tmp_path):
    train, test = tables
    pop = test.copy()
    pop.loc[0, "income"] = ">50K."
    with pytest.raises(InvalidInputError, match=r"'>50K\.' of the population .*pop\.csv.*neither"):
        _prepare(_write(tmp_path, train, test, pop=pop))


def test_duplicate_column_names_are_refused(tables, tmp_path):
    train, test = tables
    p = _write(tmp_path, train, test)
    for f in (p["train"], p["test"]):  # a second 'income' column: pandas renamed it 'income.1', a feature
        lines = f.read_text().splitlines()
        f.write_text("\n".join([lines[0] + ",income"] + [ln + "," + ln.rsplit(",", 1)[1] for ln in lines[1:]]) + "\n")
    with pytest.raises(InvalidInputError) as err:
        _prepare(p)
    msg = _one_line(err)
    assert "train.csv" in msg and "repeats column name(s) 'income'" in msg


def test_continuous_label_is_refused_in_one_line(tables, tmp_path):
    train, test = tables
    rng = np.random.default_rng(0)
    tr, te = train.assign(score=rng.normal(size=200)), test.assign(score=rng.normal(size=200))
    with pytest.raises(InvalidInputError) as err:  # was: TypeError 'NoneType' object is not iterable
        _prepare(_write(tmp_path, tr, te), label="score")
    msg = _one_line(err)
    assert "label column 'score' holds 400 distinct numeric values" in msg and "classification label" in msg


def test_constant_and_unknown_sensitive_columns_are_refused_by_name(tables, tmp_path):
    train, test = tables
    p = _write(tmp_path, train.assign(country="US"), test.assign(country="US"))
    with pytest.raises(InvalidInputError) as err:  # was: the attribute stage aborted the audit
        _prepare(p, sensitive=["sex", "country"])
    msg = _one_line(err)
    assert "sensitive column 'country' holds only the value 'US'" in msg
    with pytest.raises(InvalidParameterError, match="sensitive column 'religion' is not a column of the members"):
        _prepare(p, sensitive=["religion"])
    assert _prepare(p, sensitive=["sex", "race"]).sensitive == ["sex", "race"]


def test_membership_column_must_be_0_or_1(tables, tmp_path):
    train, test = tables
    df = pd.concat([train.assign(member=1), test.assign(member=0)], ignore_index=True).astype({"member": object})
    df.loc[10, "member"] = "yes"
    df.to_csv(tmp_path / "all.csv", index=False)
    with pytest.raises(InvalidInputError) as err:
        prepare_data(make_config(data=tmp_path / "all.csv", membership_column="member", label="income",
                                 profile="smoke"))
    msg = _one_line(err)
    assert "column 'member'" in msg and "all.csv" in msg and "'yes'" in msg and "row 11" in msg


def test_cli_refusal_is_one_line_and_exit_2(tables, tmp_path, capsys):
    train, test = tables
    bad = test.copy()
    bad.loc[0, "income"] = "yes"
    p = _write(tmp_path, train, bad)
    rc = main(["audit", "--train", str(p["train"]), "--test", str(p["test"]), "--label", "income",
               "--profile", "smoke", "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err.strip()
    assert rc == 2
    assert len(err.splitlines()) == 1 and "Traceback" not in err and "'yes'" in err
    assert not (tmp_path / "out").exists()


def test_parquet_nullable_types_are_read_as_csv_would_be(tmp_path, capsys):
    """Found by tests/reliability/test_fuzz_audit.py. Was: members in CSV (a missing text cell is NaN) and
    non-members in a Parquet file of pandas' nullable types (missing is ``pd.NA``) were joined into a ``string``
    column whose missing members were ``pd.NA``, a value a OneHotEncoder fitted on the CSV's NaN does not know:
    leakaudit exited 0 with a members' accuracy that was not the model's (0.75 against its own 0.875)."""
    import json

    import skops.io as sio
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import OneHotEncoder
    from sklearn.tree import DecisionTreeClassifier

    rng = np.random.default_rng(0)
    colour = rng.choice(["red", "blue", None], size=60)
    y = np.where(colour == None, 0, np.where(colour == "red", 1, rng.integers(0, 2, 60)))  # noqa: E711
    df = pd.DataFrame({"colour": colour, "n": rng.integers(0, 9, 60), "label": y})
    df.iloc[:30].to_csv(tmp_path / "train.csv", index=False)
    df.iloc[30:].reset_index(drop=True).convert_dtypes().to_parquet(tmp_path / "test.parquet", index=False)
    train = pd.read_csv(tmp_path / "train.csv")
    est = Pipeline([("prep", ColumnTransformer([("oh", OneHotEncoder(handle_unknown="ignore"), ["colour"])],
                                               remainder="passthrough")),
                    ("clf", DecisionTreeClassifier(random_state=0))]).fit(train[["colour", "n"]], train["label"])
    sio.dump(est, tmp_path / "model.skops")
    rc = main(["audit", "--check-inputs", "--train", str(tmp_path / "train.csv"), "--test",
               str(tmp_path / "test.parquet"), "--label", "label", "--model", str(tmp_path / "model.skops"),
               "--out", str(tmp_path / "out")])
    assert rc == 0, capsys.readouterr().err
    t = json.loads((tmp_path / "out" / "inputs.json").read_text())["target"]
    assert t["train_accuracy"] == pytest.approx(est.score(train[["colour", "n"]], train["label"]))
    test = df.iloc[30:]  # the non-members as pandas holds them, missing as None
    assert t["test_accuracy"] == pytest.approx(est.score(test[["colour", "n"]], test["label"]))
    paths = {"train": tmp_path / "train.csv", "test": tmp_path / "test.parquet"}
    data = prepare_data(make_config(**paths, label="label"))
    assert data.frame_non["colour"].isna().sum() == (test["colour"].isna()).sum()
    assert not any(v is pd.NA for v in data.frame_mem["colour"].tolist() + data.frame_non["colour"].tolist())
