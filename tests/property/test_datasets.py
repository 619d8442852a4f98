"""The paper's datasets (real files; slow: parsing Census takes ~30 s on a loaded machine)."""

import numpy as np
import pytest

from leakaudit.exceptions import InvalidParameterError

pytestmark = pytest.mark.slow


def test_census_properties_match_the_spec_measurements():
    from leakaudit.property.datasets import census_property_data

    d, info = census_property_data("sex=Female", n_rows=50000, random_state=0)
    # spec Sec. 4.1 [Measured] on all rows: female 52.0%, P(high | F) 2.5%, P(high | M) 10.2%
    assert abs(info["property_rate"] - 0.520) < 0.01
    assert abs(info["p_y1_given_f"] - 0.025) < 0.005 and abs(info["p_y1_given_not_f"] - 0.102) < 0.01
    r, info_r = census_property_data("random", n_rows=5000, random_state=0)
    assert r.X.shape[1] == d.X.shape[1] + 1 and np.array_equal(r.X[:, -1].toarray().ravel() > 0, r.f)
    with pytest.raises(InvalidParameterError, match="holds for no record"):
        census_property_data("race=Martian", n_rows=1000)


def test_spam_random_property():
    from leakaudit.property.datasets import spam_property_data

    d, info = spam_property_data("random", random_state=0)
    assert info["rows"] == 6046 and abs(info["label_rate"] - 1896 / 6046) < 1e-9


def test_spam_tfidf_values():
    from leakaudit.property.datasets import spam_property_data

    d, _ = spam_property_data("random", values="tfidf", random_state=0)
    b, _ = spam_property_data("random", values="binary", random_state=0)
    words = d.X[:, :-1]
    norms = np.sqrt(np.asarray(words.multiply(words).sum(axis=1)).ravel())
    # TF-IDF rows have unit L2 norm (or are empty); same terms present as in the binary matrix; same random bit
    assert np.allclose(norms[norms > 0], 1.0)
    assert np.array_equal((words > 0).toarray(), (b.X[:, :-1] > 0).toarray())
    assert np.array_equal(d.f, b.f) and np.array_equal(d.X[:, -1].toarray().ravel() > 0, d.f)


def test_census_ordinal_encoding_has_one_column_per_attribute():
    from leakaudit.property.datasets import census_property_data

    d, info = census_property_data("sex=Female", n_rows=3000, encoding="ordinal", random_state=0)
    assert d.X.shape == (3000, 40) and np.allclose(d.X.mean(axis=0), 0, atol=1e-9)
    o, _ = census_property_data("sex=Female", n_rows=3000, random_state=0)
    assert np.array_equal(o.f, d.f) and np.array_equal(o.y, d.y)  # same rows, other columns
    with pytest.raises(InvalidParameterError, match="encoding"):
        census_property_data("sex=Female", n_rows=1000, encoding="counts")
