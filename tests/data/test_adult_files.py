import shutil

import numpy as np
import pytest

from leakaudit.data import LONG_ADULT_COLUMNS, data_dir, dataset_status, load_adult
from leakaudit.data._files import DATA_FILES, bundled_dir, sha256_of
from leakaudit.exceptions import DataFileError


def test_bundled_adult_counts():
    ds = load_adult()  # bundled copy by default
    assert len(ds) == 48_842
    assert ds.frame.shape == (48_842, 14)
    assert (ds.extras["split"] == "train").sum() == 32_561
    assert (ds.extras["split"] == "test").sum() == 16_281
    # README: train 24,720 <=50K / 7,841 >50K; test 12,435 / 3,846 (labels with "." stripped)
    train = (ds.extras["split"] == "train").to_numpy()
    assert ds.y[train].sum() == 7_841 and ds.y[~train].sum() == 3_846
    assert ds.class_names == ("<=50K", ">50K")
    assert ds.frame.isna().any(axis=1).sum() == 3_620
    assert set(ds.sensitive) == {"sex", "race", "marital_status", "age"}


def test_adult_long_preset_is_107_wide():
    ds = load_adult(columns="long")
    assert ds.feature_names == LONG_ADULT_COLUMNS and "fnlwgt" not in ds.feature_names
    X, enc = ds.encode(fit_idx=np.arange(2000))
    assert X.shape == (48_842, 107)
    assert enc.n_dense_ == 5
    widths = [g.stop - g.start for g in enc.onehot_groups]
    assert widths == [9, 16, 7, 15, 6, 5, 2, 42]  # notes/batched-training.md
    # 13 non-zeros per row: 5 numeric (almost surely non-zero) + one 1 per group
    np.testing.assert_array_equal(X[:, 5:].sum(1), 8)
    assert enc.feature_names_out[enc.groups["workclass"]][-1] == "workclass=<missing>"


def test_adult_drop_missing():
    ds = load_adult(drop_missing=True)
    assert len(ds) == 45_222 and not ds.frame.isna().any().any()
    assert not any(f.missing for f in ds.features)


def test_adult_shared_equals_bundled():
    a = load_adult(source="bundled")
    b = load_adult(source="shared")
    assert a.frame.equals(b.frame)
    np.testing.assert_array_equal(a.y, b.y)


def test_bundled_files_match_checksums():
    for name in ("adult.data.gz", "adult.test.gz", "adult.names.gz"):
        assert sha256_of(bundled_dir() / name) == DATA_FILES[f"adult/{name}"].sha256
    assert (bundled_dir() / "ATTRIBUTION.txt").is_file()


def test_data_dir_found_beside_checkout(monkeypatch):
    monkeypatch.delenv("LEAKAUDIT_DATA", raising=False)
    root, how = data_dir()
    assert root is not None and (root / "SHA256SUMS").is_file(), how


def test_corrupt_file_raises(tmp_path, monkeypatch):
    root, _ = data_dir()
    (tmp_path / "adult").mkdir()
    for name in ("adult.data.gz", "adult.test.gz", "adult.names.gz"):
        shutil.copy(root / "adult" / name, tmp_path / "adult" / name)
    path = tmp_path / "adult" / "adult.test.gz"
    path.chmod(0o644)
    data = bytearray(path.read_bytes())
    data[1000] ^= 0xFF
    path.write_bytes(bytes(data))
    monkeypatch.setenv("LEAKAUDIT_DATA", str(tmp_path))
    with pytest.raises(DataFileError, match=r"adult\.test\.gz.*corrupt.*UCI Adult"):
        load_adult(source="shared")
    lines = {s.name: s for s in dataset_status()}
    assert not lines["adult"].available
    assert lines["adult"].line().startswith("adult: corrupt (adult/adult.test.gz)")
    assert lines["adult (bundled)"].available  # the bundled copy is unaffected


def test_missing_file_raises(tmp_path, monkeypatch):
    monkeypatch.setenv("LEAKAUDIT_DATA", str(tmp_path))
    with pytest.raises(DataFileError, match=r"adult/adult\.data\.gz is missing .*LEAKAUDIT_DATA"):
        load_adult(source="shared")
    st = {s.name: s for s in dataset_status()}
    assert st["census-kdd"].line() == (
        "census-kdd: missing (census-kdd/census-income.data.xz); from UCI Census-Income (KDD), "
        "Lane & Kohavi 2000 (CC BY 4.0) (load_census_kdd())"
    )
    assert isinstance(DataFileError("x"), FileNotFoundError)


def test_dataset_status_lines():
    st = {s.name: s for s in dataset_status()}
    expected = {
        "adult": (48_842, 15),
        "census-kdd": (299_285, 42),
        "iwpc": (4_819, 9),
        "eyedata": (120, 201),
        "spamassassin": (6_046, 7),
        "supermarket": (4_627, 217),
        "fashion-mnist (train)": (60_000, 784),
        "fashion-mnist (test)": (10_000, 784),
    }
    for name, (rows, cols) in expected.items():
        assert st[name].available, st[name].line()
        assert (st[name].rows, st[name].columns) == (rows, cols)
        assert st[name].line().startswith(f"{name}: {rows:,} x {cols}, found at ")
    assert not st["purchase (Kaggle)"].available
    assert "make_purchase_like" in st["purchase (Kaggle)"].line()


def test_acs_proxy_preset():
    ds = load_adult(columns="acs_proxy")
    assert ds.feature_names == ("age", "marital_status", "race", "sex") and len(ds) == 48_842
    X, enc = ds.encode()
    assert X.shape == (48_842, 1 + 7 + 5 + 2)


def test_load_acs_pums(tmp_path):
    import pandas as pd

    from leakaudit.data import load_acs_pums
    from leakaudit.exceptions import InvalidInputError

    df = pd.DataFrame({
        "AGEP": [25, 40, 61, 33], "MAR": [5, 1, 2, 1], "RAC1P": [1, 2, 6, 9], "SEX": [1, 2, 2, 1],
        "PINCP": [20_000, 80_000, None, 50_000], "ST": [6, 6, 6, 6],
    })
    df.to_csv(tmp_path / "pums.csv", index=False)
    ds = load_acs_pums(tmp_path / "pums.csv")
    assert len(ds) == 3  # the row without income is dropped
    np.testing.assert_array_equal(ds.y, [0, 1, 0])  # 50,000 is not > 50,000
    assert ds.frame["MAR"].tolist() == ["never married", "married", "married"]
    assert ds.frame["RAC1P"].tolist() == ["white", "black", "two or more"]
    assert ds.class_names == ("<=50000", ">50000")
    cat = load_acs_pums(tmp_path / "pums.csv", age="categorical")
    assert cat.feature("AGEP").kind == "categorical"
    df.drop(columns="SEX").to_csv(tmp_path / "bad.csv", index=False)
    with pytest.raises(InvalidInputError, match=r"lacks PUMS column\(s\) \['SEX'\]"):
        load_acs_pums(tmp_path / "bad.csv")
