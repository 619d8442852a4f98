import numpy as np
import pandas as pd
import pytest

from leakaudit.data import Dataset, Feature, TabularEncoder, from_frame, infer_features
from leakaudit.exceptions import InvalidInputError, InvalidParameterError, UnsupportedError


def _frame():
    return pd.DataFrame(
        {
            "x": [1.0, 2.0, 3.0, 10.0],
            "color": ["red", None, "blue", "red"],
            "flag": [0, 1, 1, 0],
            "n": [4, 4, 5, 7],
        }
    )


def test_inferred_kinds_and_layout():
    feats = infer_features(_frame())
    kinds = {f.name: f.kind for f in feats}
    assert kinds == {"x": "numeric", "color": "categorical", "flag": "binary", "n": "numeric"}
    color = feats[1]
    assert color.categories == ("blue", "red") and color.missing
    enc = TabularEncoder(feats).fit(_frame())
    # numeric (x, n), then binary (flag), then the one-hot group (blue, red, <missing>)
    assert enc.feature_names_out == ("x", "n", "flag", "color=blue", "color=red", "color=<missing>")
    assert enc.groups == {"x": slice(0, 1), "n": slice(1, 2), "flag": slice(2, 3), "color": slice(3, 6)}
    assert enc.n_dense_ == 3 and enc.onehot_groups == [slice(3, 6)]


def test_exact_values_hand_computed():
    df = _frame()
    X = TabularEncoder().fit(df).transform(df)
    # x: mean 4, population sd sqrt(((9+4+1+36)/4)) = sqrt(12.5)
    sd = np.sqrt(12.5)
    np.testing.assert_allclose(X[:, 0], (np.array([1, 2, 3, 10]) - 4) / sd)
    # n: mean 5, sd sqrt((1+1+0+4)/4) = sqrt(1.5)
    np.testing.assert_allclose(X[:, 1], (np.array([4, 4, 5, 7]) - 5) / np.sqrt(1.5))
    np.testing.assert_array_equal(X[:, 2], [0, 1, 1, 0])
    np.testing.assert_array_equal(X[:, 3:], [[0, 1, 0], [0, 0, 1], [1, 0, 0], [0, 1, 0]])


def test_zscore_statistics_from_fit_rows_only():
    df = _frame()
    ds = from_frame(df.assign(lab=[0, 1, 0, 1]), label="lab")
    X, enc = ds.encode(fit_idx=[0, 1])
    # fit rows x = 1, 2: mean 1.5, sd 0.5; row 3 (x = 10) is scaled with those statistics
    np.testing.assert_allclose(enc.mean_[0], 1.5)
    np.testing.assert_allclose(enc.scale_[0], 0.5)
    np.testing.assert_allclose(X[:, 0], [-1, 1, 3, 17])
    # n is constant (4) on the fit rows: scale 1
    np.testing.assert_allclose(enc.scale_[1], 1.0)
    np.testing.assert_allclose(X[:, 1], [0, 0, 1, 3])
    # the categories still come from all rows: width unchanged
    assert X.shape == (4, 6)


def test_scale_numeric_false_passes_through():
    df = _frame()
    X = TabularEncoder(scale_numeric=False).fit_transform(df)
    np.testing.assert_array_equal(X[:, 0], df["x"])


def test_unknown_and_missing_columns_are_clear_errors():
    enc = TabularEncoder().fit(_frame())
    with pytest.raises(InvalidInputError, match=r"unknown column\(s\) \['extra'\]"):
        enc.transform(_frame().assign(extra=1))
    with pytest.raises(InvalidInputError, match=r"lacks column\(s\) \['x'\]"):
        enc.transform(_frame().drop(columns="x"))


def test_unknown_category():
    enc = TabularEncoder().fit(_frame())
    bad = _frame().assign(color=["red", "green", "blue", "red"])
    with pytest.raises(InvalidInputError, match="'green'"):
        enc.transform(bad)
    X = TabularEncoder(handle_unknown="ignore").fit(_frame()).transform(bad)
    np.testing.assert_array_equal(X[1, 3:], [0, 0, 0])


def test_numeric_nan_and_text_rejected():
    df = _frame()
    df.loc[1, "x"] = np.nan
    with pytest.raises(InvalidInputError, match="numeric column 'x'.*1 missing"):
        TabularEncoder().fit(df)
    feats = (Feature("t", "text"),)
    with pytest.raises(UnsupportedError, match="bag_of_words"):
        TabularEncoder(feats).fit(pd.DataFrame({"t": ["a b", "c"]}))


def test_empty_frame_and_unfitted():
    with pytest.raises(InvalidInputError, match="empty"):
        TabularEncoder().fit(_frame().iloc[:0])
    with pytest.raises(InvalidInputError, match="not fitted"):
        TabularEncoder().transform(_frame())


def test_feature_validation():
    with pytest.raises(InvalidParameterError, match="kind"):
        Feature("a", "ordinal")
    with pytest.raises(InvalidParameterError, match="exactly 2"):
        Feature("a", "binary", ("x", "y", "z"))
    with pytest.raises(InvalidParameterError, match="categories"):
        Feature("a", "categorical")


def test_every_row_has_one_one_per_group():
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"a": rng.choice(["p", "q", "r"], 50), "b": rng.normal(size=50)})
    df.loc[::7, "a"] = None
    enc = TabularEncoder().fit(df)
    X = enc.transform(df)
    for g in enc.onehot_groups:
        np.testing.assert_array_equal(X[:, g].sum(1), 1.0)


def test_dataset_encode_subset_same_width():
    df = _frame().assign(lab=["a", "b", "a", "b"])
    ds = from_frame(df, label="lab")
    sub = ds.subset([0, 2])  # no missing color, no "flag=1" among these rows
    Xs, enc = sub.encode()
    assert Xs.shape == (2, 6)
    assert isinstance(ds, Dataset)


def test_matches_sklearn_reference_on_adult():
    from sklearn.compose import ColumnTransformer
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    from leakaudit.data import MISSING_LABEL, load_adult

    full = load_adult(columns="long")
    ds = full.subset(np.arange(0, len(full), 10))  # 4,885 rows; categories still from all rows
    fit = np.arange(0, len(ds), 3)
    X, enc = ds.encode(fit_idx=fit)
    num = [f.name for f in ds.features if f.kind == "numeric"]
    cat = [f for f in ds.features if f.kind == "categorical"]
    filled = ds.frame.copy()
    for f in cat:
        filled[f.name] = filled[f.name].astype(object).where(filled[f.name].notna(), MISSING_LABEL)
    ref = ColumnTransformer([
        ("num", StandardScaler(), num),
        ("cat", OneHotEncoder(categories=[list(f.categories) + ([MISSING_LABEL] if f.missing else []) for f in cat],
                              sparse_output=False), [f.name for f in cat]),
    ])
    ref.fit(filled.iloc[fit])
    np.testing.assert_allclose(X, ref.transform(filled), rtol=1e-12, atol=1e-12)


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(2, 40),
    n_cats=st.integers(1, 5),
    p_missing=st.sampled_from([0.0, 0.3]),
    seed=st.integers(0, 2**31 - 1),
)
def test_encoder_invariants(n, n_cats, p_missing, seed):
    rng = np.random.default_rng(seed)
    cat = rng.choice([f"c{i}" for i in range(n_cats)], n).astype(object)
    cat[rng.random(n) < p_missing] = None
    df = pd.DataFrame({"u": rng.normal(size=n) * 10 + 3, "k": cat, "b": rng.integers(0, 2, n)})
    ds = from_frame(df.assign(lab=np.arange(n) % 2), label="lab")
    fit = np.sort(rng.choice(n, size=max(1, n // 2), replace=False))
    X, enc = ds.encode(fit_idx=fit)
    assert X.shape[1] == sum(f.width for f in ds.features)
    for g in enc.onehot_groups:
        np.testing.assert_array_equal(X[:, g].sum(1), 1.0)
    u = X[fit, enc.groups["u"].start]
    np.testing.assert_allclose(u.mean(), 0.0, atol=1e-9)
    if np.ptp(df["u"].to_numpy()[fit]) > 1e-9:
        np.testing.assert_allclose(u.std(), 1.0, rtol=1e-9)
    perm = rng.permutation(n)
    np.testing.assert_array_equal(enc.transform(df.drop(columns=[]).iloc[perm]), X[perm])
