"""leakaudit.data.registry: the dataset names --dataset takes, one table for the CLI and the audit's settings."""

import numpy as np
import pytest

from leakaudit.data import make_purchase_like
from leakaudit.data.registry import dataset_names, get_dataset, load_dataset, register_dataset
from leakaudit.exceptions import InvalidParameterError


def test_names_and_descriptions():
    assert dataset_names() == ("adult", "purchase-like", "texas-like", "supermarket", "census")
    for name in dataset_names():
        assert get_dataset(name).name == name and get_dataset(name).description


def test_unknown_name_lists_the_names():
    with pytest.raises(InvalidParameterError, match=r"unknown dataset 'nope'; choose from adult, purchase-like"):
        get_dataset("nope")


def test_a_taken_name_is_refused_unless_forced():
    with pytest.raises(InvalidParameterError, match="'adult' is already registered"):
        register_dataset("adult", lambda **kw: None, description="x")
    with pytest.raises(InvalidParameterError, match="name must be a non-empty string"):
        register_dataset("", lambda **kw: None, description="x")


def test_generators_make_the_rows_asked_for_with_the_seed():
    ds = load_dataset("purchase-like", n_rows=300, random_state=3)
    ref = make_purchase_like(n_records=300, n_features=600, n_classes=10, random_state=3)
    assert len(ds) == 300 and ds.frame.shape[1] == 600
    np.testing.assert_array_equal(ds.y, ref.y)
    np.testing.assert_array_equal(ds.frame.to_numpy(), ref.frame.to_numpy())


def test_file_loaders_return_the_whole_file():
    assert len(load_dataset("adult", n_rows=10, random_state=0)) == 48_842


def test_audit_settings_take_only_registered_names():
    from leakaudit.audit.config import make_config

    assert make_config(dataset="adult").dataset == "adult"
    with pytest.raises(InvalidParameterError, match=r"dataset: unknown dataset 'adlut'; choose from adult"):
        make_config(dataset="adlut")
