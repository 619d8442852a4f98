import numpy as np
import pandas as pd
import pytest

from leakaudit.data import load_purchase_kaggle
from leakaudit.exceptions import DataFileError


def _transactions(tmp_path):
    rows = []
    # customer 1 buys categories 10, 20; customer 2 buys 20 twice and 30; customer 3 buys 10; 4 buys 40
    for cid, cat in [(1, 10), (1, 20), (2, 20), (2, 20), (2, 30), (3, 10), (4, 40), (5, 10), (5, 30)]:
        rows.append({"id": cid, "chain": 7, "dept": 1, "category": cat, "company": 0, "brand": 0,
                     "date": "2012-03-02", "productsize": 1, "productmeasure": "OZ",
                     "purchasequantity": 1, "purchaseamount": 2.5})
    p = tmp_path / "transactions.csv"
    pd.DataFrame(rows).to_csv(p, index=False)
    return p


def test_transactions_to_binary_matrix(tmp_path):
    p = _transactions(tmp_path)
    ds = load_purchase_kaggle(p, n_classes=2, n_features=None, chunksize=4)
    assert ds.feature_names == ("cat_10", "cat_20", "cat_30", "cat_40")
    np.testing.assert_array_equal(ds.extras["id"], [1, 2, 3, 4, 5])
    np.testing.assert_array_equal(
        ds.frame.to_numpy(), [[1, 1, 0, 0], [0, 1, 1, 0], [1, 0, 0, 0], [0, 0, 0, 1], [1, 0, 1, 0]])
    assert ds.n_classes == 2
    # top-2 categories by number of customers: 10 (3 customers), then 20 and 30 (2 each; first in
    # value_counts order), so 40 is dropped
    top = load_purchase_kaggle(p, n_classes=2, n_features=2)
    assert len(top.feature_names) == 2 and "cat_10" in top.feature_names and "cat_40" not in top.feature_names


def test_shokri_format(tmp_path):
    p = tmp_path / "dataset_purchase"
    pd.DataFrame([[3, 0, 1, 1], [1, 1, 0, 0], [3, 1, 1, 0]]).to_csv(p, header=False, index=False)
    ds = load_purchase_kaggle(p, format="shokri")
    np.testing.assert_array_equal(ds.y, [1, 0, 1])
    assert ds.class_names == ("1", "3") and ds.frame.shape == (3, 3)


def test_errors(tmp_path):
    with pytest.raises(DataFileError, match="does not exist"):
        load_purchase_kaggle(tmp_path / "nope.csv")
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b\nx,y\n")
    with pytest.raises(DataFileError, match="neither"):
        load_purchase_kaggle(bad)
