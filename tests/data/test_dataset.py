import numpy as np
import pandas as pd
import pytest

from leakaudit.data import Dataset, Feature, from_frame, read_table
from leakaudit.exceptions import DataFileError, InvalidInputError


def _df():
    return pd.DataFrame(
        {
            "age": [30, 40, 50, 60, 35],
            "sex": ["F", "M", "F", "M", "F"],
            "zip": ["a", "b", None, "a", "c"],
            "smoker": [True, False, False, True, True],
            "income": ["low", "high", "low", "high", "low"],
            "weight": [1.0, 2.0, 1.5, 1.0, 1.0],
        }
    )


def test_from_frame_basic():
    ds = from_frame(_df(), label="income", sensitive=["sex"], extras="weight", name="toy")
    assert len(ds) == 5
    assert ds.feature_names == ("age", "sex", "zip", "smoker")
    assert [f.kind for f in ds.features] == ["numeric", "categorical", "categorical", "binary"]
    assert ds.class_names == ("high", "low")
    np.testing.assert_array_equal(ds.y, [1, 0, 1, 0, 1])
    assert ds.task == "classification" and ds.n_classes == 2
    assert ds.sensitive == ("sex",)
    assert list(ds.extras.columns) == ["weight"]
    assert ds.labels().tolist() == _df()["income"].tolist()


def test_from_frame_regression_inferred():
    df = _df().assign(target=[0.5, 1.25, 2.0, 3.5, 1.0])
    ds = from_frame(df.drop(columns="income"), label="target")
    assert ds.task == "regression" and ds.class_names is None and ds.y.dtype == np.float64


def test_from_frame_errors():
    with pytest.raises(InvalidInputError, match="label column 'nope'"):
        from_frame(_df(), label="nope")
    with pytest.raises(InvalidInputError, match="single class"):
        from_frame(_df().assign(income="low"), label="income")
    with pytest.raises(InvalidInputError, match="empty"):
        from_frame(_df().iloc[:0], label="income")
    with pytest.raises(InvalidInputError, match="unknown column 'race'"):
        from_frame(_df(), label="income", sensitive="race")
    with pytest.raises(InvalidInputError, match="missing value"):
        from_frame(_df().assign(income=["low", None, "high", "low", "high"]), label="income")


def test_subset_and_select():
    ds = from_frame(_df(), label="income", sensitive=["sex", "zip"], extras="weight")
    sub = ds.subset([4, 0])
    assert sub.frame["age"].tolist() == [35, 30]
    np.testing.assert_array_equal(sub.y, ds.y[[4, 0]])
    assert sub.extras["weight"].tolist() == [1.0, 1.0]
    assert sub.features == ds.features  # categories kept from the full table
    mask = np.array([True, False, True, False, False])
    assert len(ds.subset(mask)) == 2
    with pytest.raises(InvalidInputError, match="out of range"):
        ds.subset([7])
    sel = ds.select(["age", "sex"])
    assert sel.feature_names == ("age", "sex") and sel.sensitive == ("sex",)
    assert ds.drop("zip").feature_names == ("age", "sex", "smoker")
    with pytest.raises(InvalidInputError, match="no feature 'foo'"):
        ds.select(["foo"])


def test_with_feature():
    ds = from_frame(_df(), label="income")
    bit = np.array([0, 1, 1, 0, 1])
    ds2 = ds.with_feature("random_bit", bit, sensitive=True)
    assert ds2.feature("random_bit").kind == "binary"
    assert ds2.sensitive == ("random_bit",)
    X, enc = ds2.encode()
    np.testing.assert_array_equal(X[:, enc.groups["random_bit"]].ravel(), bit)
    with pytest.raises(InvalidInputError, match="one entry per row"):
        ds.with_feature("b", [1, 0])


def test_dataset_validation():
    df = pd.DataFrame({"a": [1.0, 2.0]})
    with pytest.raises(InvalidInputError, match="do not match"):
        Dataset("x", df, np.array([0, 1]), (Feature("b", "numeric"),), "y", ("n", "p"))
    with pytest.raises(InvalidInputError, match="0..1"):
        Dataset("x", df, np.array([0, 2]), (Feature("a", "numeric"),), "y", ("n", "p"))
    with pytest.raises(InvalidInputError, match="shape"):
        Dataset("x", df, np.array([0]), (Feature("a", "numeric"),), "y", ("n", "p"))


def test_read_table_csv_parquet(tmp_path):
    df = _df()
    df.to_csv(tmp_path / "t.csv", index=False)
    df.to_csv(tmp_path / "t.csv.gz", index=False)
    df.to_parquet(tmp_path / "t.parquet")
    for name in ("t.csv", "t.csv.gz", "t.parquet"):
        back = read_table(tmp_path / name)
        assert back.shape == df.shape and list(back.columns) == list(df.columns)


def test_read_table_errors(tmp_path):
    with pytest.raises(DataFileError, match="does not exist"):
        read_table(tmp_path / "missing.csv")
    (tmp_path / "bad.parquet").write_bytes(b"not a parquet file")
    with pytest.raises(DataFileError, match="could not read"):
        read_table(tmp_path / "bad.parquet")
    (tmp_path / "x.xlsx").write_bytes(b"")
    with pytest.raises(DataFileError, match="format"):
        read_table(tmp_path / "x.xlsx")
    (tmp_path / "empty.csv").write_text("")
    with pytest.raises(InvalidInputError, match="empty"):
        read_table(tmp_path / "empty.csv")
    (tmp_path / "ragged.csv").write_text("a,b\n1,2\n3,4,5,6\n")
    with pytest.raises(DataFileError, match="could not read"):
        read_table(tmp_path / "ragged.csv")
    (tmp_path / "header.csv").write_text("a,b\n")
    with pytest.raises(InvalidInputError, match="no data rows"):
        read_table(tmp_path / "header.csv")
