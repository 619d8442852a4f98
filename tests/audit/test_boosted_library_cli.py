"""One recipe reader for the library and the command line (issue 83): each model-file format audited from its file
on the command line and as the library's object loaded from that file (XGBoost's ``Booster(model_file=...)``,
LightGBM's ``Booster(model_file=...)``, CatBoost's ``load_model``) gives the same recipe and the same results.json
numbers. A loaded XGBoost Booster's ``save_config()`` is XGBoost's defaults, never its recipe: the library reads the
``training_config`` attribute the file carries, as the command line does."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

COLUMNS = ["a", "b", "c", "d"]


@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(240, 4))
    y = (X[:, 0] + 0.5 * X[:, 1] + rng.normal(scale=0.7, size=240) > 0).astype(int)
    df = pd.DataFrame(X, columns=COLUMNS).assign(label=y)
    d = tmp_path_factory.mktemp("tables")
    df.iloc[:120].to_csv(d / "train.csv", index=False)
    df.iloc[120:].to_csv(d / "test.csv", index=False)
    return d, df.iloc[:120].reset_index(drop=True), df.iloc[120:].reset_index(drop=True)


def _save(fmt: str, members: pd.DataFrame, path):
    """A model of ``fmt`` trained on the members' columns by name with a recipe away from its library's defaults,
    saved to ``path``; returns the object the library's own loader gives for that file."""
    X, y = members[COLUMNS], members["label"]
    if fmt.startswith("xgboost"):
        xgb = pytest.importorskip("xgboost")
        booster = xgb.train({"objective": "binary:logistic", "max_depth": 2, "eta": 0.15, "lambda": 3.0,
                             "nthread": 1, "verbosity": 0}, xgb.DMatrix(X, label=y), 5)
        booster.set_attr(training_config=booster.save_config())
        booster.save_model(path)
        return xgb.Booster(model_file=str(path))
    if fmt == "lightgbm":
        lgb = pytest.importorskip("lightgbm")
        lgb.train({"objective": "binary", "num_leaves": 4, "learning_rate": 0.15, "min_data_in_leaf": 8,
                   "verbosity": -1, "num_threads": 1}, lgb.Dataset(X, label=y), 5).save_model(path)
        return lgb.Booster(model_file=str(path))
    cb = pytest.importorskip("catboost")
    cb.CatBoost({"loss_function": "Logloss", "iterations": 5, "depth": 2, "learning_rate": 0.15, "verbose": 0,
                 "thread_count": 1, "allow_writing_files": False}).fit(X, y).save_model(str(path), format="json")
    return cb.CatBoost().load_model(str(path), format="json")


def _numbers(d, path=""):
    """Every number of a results.json section, by its path (NaN, which results.json writes as null, left out)."""
    if isinstance(d, dict):
        return {k: v for key, val in d.items() for k, v in _numbers(val, f"{path}.{key}").items()}
    if isinstance(d, list):
        return {k: v for i, val in enumerate(d) for k, v in _numbers(val, f"{path}[{i}]").items()}
    return {path: d} if isinstance(d, (int, float)) and not isinstance(d, bool) and d == d else {}


@pytest.mark.parametrize("fmt, name", [("xgboost-json", "m.json"), ("xgboost-ubj", "m.ubj"),
                                       ("lightgbm", "m.txt"), ("catboost", "m.cbjson")])
def test_the_library_and_the_command_line_read_one_recipe(tables, tmp_path, fmt, name):
    import leakaudit
    from leakaudit.cli import main

    d, members, nonmembers = tables
    path = tmp_path / name
    loaded = _save(fmt, members, path)
    rc = main(["audit", "--train", str(d / "train.csv"), "--test", str(d / "test.csv"), "--label", "label",
               "--model", str(path), "--profile", "smoke", "--no-removal", "--seed", "0", "--out",
               str(tmp_path / "cli"), "-q"])
    assert rc in (0, 1, 3), rc
    cli = json.loads((tmp_path / "cli" / "results.json").read_text())
    lib = leakaudit.audit(loaded, members, nonmembers, label="label", random_state=0, profile="smoke",
                          removal=False).to_dict()
    recipe = cli["target"]["description"].split(" from ")[0]
    assert lib["target"]["description"].startswith(recipe) and "defaults" not in recipe, (lib["target"], recipe)
    assert lib["verdict"]["outcome"] == cli["verdict"]["outcome"]
    for section in ("membership", "dtp"):
        ours, theirs = _numbers(lib[section]), _numbers(cli[section])
        assert ours.keys() == theirs.keys() and ours, section
        np.testing.assert_allclose([ours[k] for k in ours], [theirs[k] for k in ours], rtol=1e-9, atol=1e-12,
                                   err_msg=section)
