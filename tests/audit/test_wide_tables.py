"""Wide tables (issue 64): a model on thousands of numeric columns is retrained on arrays, silently, with the
same numbers as on DataFrames."""

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.compose import make_column_transformer
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer, OneHotEncoder, StandardScaler

import leakaudit
from leakaudit.audit.inputs import target


def _wide(n=50, p=2_000, seed=0):
    """``n`` members and ``n`` non-members by ``p`` float columns and a text label."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(2 * n, p))
    y = np.where(X[:, 0] + rng.normal(size=2 * n) > 0, "yes", "no")
    df = pd.DataFrame(X, columns=[f"c{i}" for i in range(p)]).assign(label=y)
    return df.iloc[:n], df.iloc[n:]


def _audit(model, mem, non):
    """The smoke audit, failing on any warning."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return leakaudit.audit(model, mem, non, label="label", profile="smoke")


def test_wide_audit_is_silent_and_retrains_on_arrays(monkeypatch):
    """100 records by 2,000 columns: the audit warns of nothing, and the retrained models get arrays."""
    mem, non = _wide()
    model = LogisticRegression(max_iter=200).fit(mem.drop(columns="label"), mem["label"])
    made = []
    block = target._array_block
    monkeypatch.setattr(target, "_array_block", lambda estimator, frame: made.append(block(estimator, frame))
                        or made[-1])
    res = _audit(model, mem, non)
    assert made and made[0] is not None and made[0][0].size == 2_000 * 100
    assert len(res.records) == 100 and res.records["pdtp"].iloc[:50].notna().all()  # PDTP: of the members


def test_scores_on_arrays_equal_those_on_dataframes(monkeypatch):
    """Every score and check value is the same to the last bit as with the retrained models fed DataFrames (the
    generic path, forced by switching the array block off)."""
    mem, non = _wide(p=200)
    model = LogisticRegression(max_iter=200).fit(mem.drop(columns="label"), mem["label"])
    fast = _audit(model, mem, non)
    monkeypatch.setattr(target, "_array_block", lambda estimator, frame: None)
    generic = _audit(model, mem, non)
    scores = [c for c in fast.records.columns if c.startswith("score_")] + ["pdtp"]
    assert len(scores) > 2
    for c in scores:
        np.testing.assert_allclose(fast.records[c].to_numpy(float), generic.records[c].to_numpy(float), rtol=0,
                                   atol=0, equal_nan=True, err_msg=c)
    a, b = fast.checks_frame(), generic.checks_frame()
    assert list(a["id"]) == list(b["id"]) and list(a["status"]) == list(b["status"])
    for c in ("value", "low", "high", "p_value"):
        np.testing.assert_allclose(a[c].to_numpy(float), b[c].to_numpy(float), rtol=0, atol=0, equal_nan=True)


def _frames():
    """Tables as pandas stores them in different ways: one float block, row-major (a DataFrame's own copy of
    ``X``) or column-major (``X`` itself, whose rows are then row-major), and int and float columns in two
    blocks."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(20, 3))
    yield pd.DataFrame(X, columns=list("abc"))
    yield pd.DataFrame(X, columns=list("abc"), copy=False)
    yield pd.DataFrame(np.asfortranarray(X), columns=list("abc"))
    yield pd.concat([pd.DataFrame(X[:10], columns=list("abc")), pd.DataFrame(X[10:], columns=list("abc"))],
                    ignore_index=True)
    yield pd.DataFrame({"a": X[:, 0], "b": rng.integers(0, 9, 20), "c": X[:, 1]})


@pytest.mark.parametrize("frame", list(_frames()))
def test_array_block_reproduces_what_scikit_learn_makes_of_the_dataframe(frame):
    """Rows of the block are the array ``check_array`` builds from the same DataFrame rows: values, dtype and
    memory order; int and float columns together become float64 as pandas converts them."""
    from sklearn.utils.validation import check_array

    learner = target.FrameEstimatorLearner(estimator=LogisticRegression(), frame=frame)
    for rows in ([3, 0, 17, 3], list(range(20)), [5, 6]):
        got, want = learner._rows(np.array(rows, dtype=float)[:, None]), np.asarray(frame.iloc[rows])
        assert isinstance(got, np.ndarray) and got.dtype == want.dtype == np.float64
        assert (got.flags.c_contiguous, got.flags.f_contiguous) == (want.flags.c_contiguous, want.flags.f_contiguous)
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(check_array(got), check_array(frame.iloc[rows]))


@pytest.mark.parametrize("estimator, fast", [
    (LogisticRegression(C=0.5, class_weight={0: 1.0, 1: 2.0}), True),
    (make_pipeline(StandardScaler(), LogisticRegression()), True),
    # may read columns by name: the DataFrame stays
    (make_pipeline(make_column_transformer((StandardScaler(), ["a"]), remainder="drop"), LogisticRegression()),
     False),
    (make_pipeline(FunctionTransformer(lambda df: df[["a"]]), LogisticRegression()), False),
    (HistGradientBoostingClassifier(categorical_features=["b"]), False),
])
def test_array_block_only_for_estimators_that_read_numbers(estimator, fast):
    frame = pd.DataFrame({"a": [0.5, 1.5, 2.5], "b": [1, 2, 3]})
    assert (target._array_block(estimator, frame) is not None) is fast


def test_dataframe_stays_for_columns_that_are_not_plain_numbers():
    """A text, bool, or nullable column: scikit-learn converts it its own way, so it gets the DataFrame."""
    lr = LogisticRegression()
    for col in (["x", "y"], [True, False], pd.array([1, None], dtype="Int64")):
        frame = pd.DataFrame({"a": [0.5, 1.5], "b": col})
        assert target._array_block(lr, frame) is None
    mixed = make_pipeline(make_column_transformer((OneHotEncoder(), ["b"]), remainder="passthrough"), lr)
    assert target._array_block(mixed, pd.DataFrame({"a": [0.5, 1.5], "b": ["x", "y"]})) is None
