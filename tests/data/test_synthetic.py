import numpy as np
import pytest

from leakaudit.data import kmeans_labels, make_gaussian_regression, make_purchase_like, make_texas_like
from leakaudit.exceptions import InvalidInputError, InvalidParameterError


def _same(a, b):
    return a.frame.equals(b.frame) and np.array_equal(a.y, b.y)


def test_purchase_like_deterministic_and_shaped():
    kw = dict(n_records=300, n_features=60, n_classes=5, n_shopper_types=8)
    a = make_purchase_like(**kw, random_state=1)
    b = make_purchase_like(**kw, random_state=1)
    c = make_purchase_like(**kw, random_state=2)
    assert _same(a, b) and not _same(a, c)
    assert a.frame.shape == (300, 60) and set(np.unique(a.frame.to_numpy())) <= {0, 1}
    assert a.n_classes == 5 and set(a.y) == set(range(5))
    assert all(f.kind == "binary" for f in a.features)
    # the labels are exactly k-means on the generated vectors (relabelled largest first)
    counts = np.bincount(a.y)
    assert np.all(np.diff(counts) <= 0)


def test_purchase_like_popularity_is_skewed():
    ds = make_purchase_like(n_records=2000, n_features=100, n_classes=2, random_state=0)
    freq = np.sort(ds.frame.to_numpy().mean(axis=0))[::-1]
    # Zipf-like: the most popular category is bought far more often than the median one
    assert freq[0] > 5 * np.median(freq)


def test_texas_like():
    kw = dict(n_records=400, n_classes=10, n_diagnoses=30, n_procedures=20)
    a = make_texas_like(**kw, random_state=5)
    b = make_texas_like(**kw, random_state=5)
    c = make_texas_like(**kw, random_state=6)
    assert _same(a, b) and not _same(a, c)
    kinds = [f.kind for f in a.features]
    assert kinds.count("categorical") == 9 and kinds.count("binary") == 50
    np.testing.assert_array_equal(a.y, a.extras["main_procedure"])
    X, enc = a.encode()
    assert X.shape[1] == 50 + sum(len(f.categories) for f in a.features if f.kind == "categorical")
    km = make_texas_like(**kw, label_by="kmeans", random_state=5)
    assert km.label_name == "cluster" and km.frame.equals(a.frame)
    with pytest.raises(InvalidParameterError, match="label_by"):
        make_texas_like(**kw, label_by="nope")


def test_gaussian_regression_exact_model():
    ds = make_gaussian_regression(200, 4, noise=0.0, random_state=0)
    w = ds.info["coef"]
    np.testing.assert_allclose(ds.y, ds.frame.to_numpy() @ w)
    a = make_gaussian_regression(50, 3, 1.0, 7, n_sensitive_values=3)
    b = make_gaussian_regression(50, 3, 1.0, 7, n_sensitive_values=3)
    c = make_gaussian_regression(50, 3, 1.0, 8, n_sensitive_values=3)
    assert _same(a, b) and not _same(a, c)
    assert a.sensitive == ("s",) and a.feature("s").categories == ("s0", "s1", "s2")
    nz = make_gaussian_regression(100, 3, 0.0, 1, n_sensitive_values=2)
    s = nz.frame["s"].map({"s0": 0, "s1": 1}).to_numpy()
    np.testing.assert_allclose(nz.y, nz.frame[["x0", "x1", "x2"]].to_numpy() @ nz.info["coef"]
                               + nz.info["sensitive_offsets"][s])
    with pytest.raises(InvalidParameterError, match="noise"):
        make_gaussian_regression(10, 2, noise=-1)


def test_kmeans_labels_errors_and_determinism():
    rng = np.random.default_rng(0)
    X = rng.integers(0, 2, size=(100, 10)).astype(float)
    np.testing.assert_array_equal(kmeans_labels(X, 4, random_state=0), kmeans_labels(X, 4, random_state=0))
    with pytest.raises(InvalidInputError, match="distinct rows"):
        kmeans_labels(np.zeros((10, 3)), 2)
    with pytest.raises(InvalidParameterError, match="n_clusters"):
        kmeans_labels(X, 1)


def test_generator_parameter_errors():
    with pytest.raises(InvalidParameterError, match="n_classes"):
        make_purchase_like(n_records=10, n_features=5, n_classes=20)
    with pytest.raises(InvalidParameterError, match="n_features"):
        make_purchase_like(n_records=10, n_features=1.5, n_classes=2)
