"""results.json is strict JSON and follows docs/results.schema.json (JSON Schema draft 2020-12)."""

import json
import math
from pathlib import Path

import jsonschema
import numpy as np
import pandas as pd
import pytest

from leakaudit._results import Result, dumps_strict, write_json_atomic
from leakaudit.audit.result.results import results_json_schema
from leakaudit.cli import main

SCHEMA_FILE = Path(__file__).resolve().parents[2] / "docs" / "results.schema.json"


def _refuse_constant(name):
    raise ValueError(f"not strict JSON: bare {name}")


def _strict_load(path: Path) -> dict:
    return json.loads(path.read_text(), parse_constant=_refuse_constant)


@pytest.fixture(scope="module")
def schema():
    s = json.loads(SCHEMA_FILE.read_text())
    jsonschema.Draft202012Validator.check_schema(s)
    return s


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("schema") / "demo"
    rc = main(["audit", "--profile", "smoke", "--n-members", "200", "--n-nonmembers", "200", "--out", str(out),
               "--quiet"])
    assert rc == 0
    return out


@pytest.fixture(scope="module")
def predictions_run(tmp_path_factory):
    from leakaudit.data import load_adult

    d = tmp_path_factory.mktemp("schema-pred")
    df = load_adult().to_frame().sample(400, random_state=0).reset_index(drop=True)
    df.iloc[:200].to_csv(d / "train.csv", index=False)
    df.iloc[200:].to_csv(d / "test.csv", index=False)
    rng = np.random.default_rng(0)
    for name in ("ptrain", "ptest"):
        pd.DataFrame(rng.dirichlet([1, 1], size=200), columns=["p0", "p1"]).to_csv(d / f"{name}.csv", index=False)
    rc = main(["audit", "--train", str(d / "train.csv"), "--test", str(d / "test.csv"), "--label", "income",
               "--sensitive", "sex", "--predictions-train", str(d / "ptrain.csv"), "--predictions-test",
               str(d / "ptest.csv"), "--profile", "smoke", "--out", str(d / "out"), "--quiet"])
    assert rc == 0
    return d / "out"


def test_published_schema_is_the_generated_one(schema):
    assert schema == json.loads(json.dumps(results_json_schema())), (
        "docs/results.schema.json is stale: regenerate it with "
        "python -c 'import json; from leakaudit.audit.result.results import results_json_schema as s; "
        "print(json.dumps(s(), indent=2))' > docs/results.schema.json")


def test_demo_results_are_strict_json_and_follow_the_schema(schema, demo_run):
    res = _strict_load(demo_run / "results.json")
    jsonschema.validate(res, schema, cls=jsonschema.Draft202012Validator)
    # the smoke demo cannot estimate TPR at 0.01% FPR from 200 non-members: null, not NaN
    tprs = [t["tpr"] for m in res["membership"].values() for t in m["tpr_at_fpr"].values()]
    assert None in tprs
    assert res["verdict"]["checks"] and res["dtp"] is not None


def test_predictions_only_results_follow_the_schema(schema, predictions_run):
    res = _strict_load(predictions_run / "results.json")
    jsonschema.validate(res, schema, cls=jsonschema.Draft202012Validator)
    assert res["dtp"] is None and res["mip"] is None and set(res["membership"]) == {"loss", "quantile"}
    assert res["attribute"] == {} and res["property"] == {}
    assert {s["name"] for s in res["skipped"]} >= {"property inference", "attribute inference"}
    # every analysis that did not run says what would enable it as data: a fix, or the inputs it lacked
    assert all(s.get("fix") or s.get("missing") for s in res["skipped"]), res["skipped"]
    dtp = next(c for c in res["verdict"]["checks"] if c["analysis"] == "dtp")
    assert dtp["status"] == "not measurable" and dtp["value"] is None


def test_inputs_json_is_strict(tmp_path):
    assert main(["audit", "--check-inputs", "--profile", "smoke", "--n-members", "200", "--n-nonmembers", "200",
                 "--out", str(tmp_path)]) == 0
    assert _strict_load(tmp_path / "inputs.json")["data"]["n_members"] == 200


def test_schema_rejects_what_it_should(schema, demo_run):
    """The schema is not vacuous: a NaN-era value, a wrong status and a missing key are refused."""
    res = _strict_load(demo_run / "results.json")
    bad = json.loads(json.dumps(res))
    bad["verdict"]["checks"][0]["status"] = "failed"
    with pytest.raises(jsonschema.ValidationError, match="failed"):
        jsonschema.validate(bad, schema, cls=jsonschema.Draft202012Validator)
    bad = json.loads(json.dumps(res))
    bad["verdict"]["outcome"] = "maybe"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, schema, cls=jsonschema.Draft202012Validator)
    bad = json.loads(json.dumps(res))
    del bad["verdict"]
    with pytest.raises(jsonschema.ValidationError, match="verdict"):
        jsonschema.validate(bad, schema, cls=jsonschema.Draft202012Validator)
    bad = json.loads(json.dumps(res))
    bad["membership"]["loss"]["auc"] = "0.5"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, schema, cls=jsonschema.Draft202012Validator)


def test_writer_turns_nan_and_inf_into_null(tmp_path):
    data = {"a": float("nan"), "b": [1.0, float("inf"), -np.inf], "c": np.array([np.nan, 2.0]),
            "d": np.float32("nan"), "e": {"f": (float("nan"),)}, "g": 1.5}
    write_json_atomic(tmp_path / "x.json", data)
    assert _strict_load(tmp_path / "x.json") == {"a": None, "b": [1.0, None, None], "c": [None, 2.0], "d": None,
                                                 "e": {"f": [None]}, "g": 1.5}
    assert "NaN" not in dumps_strict(data) and "Infinity" not in dumps_strict(data)


class _R(Result):
    a: float
    v: list[float]
    w: tuple[float, float] | None = None
    o: float | None = None


def test_result_json_is_strict_and_reads_null_back_as_nan():
    r = _R(a=np.nan, v=[1.0, np.inf], w=(np.nan, 2.0), o=np.nan)
    text = r.to_json()
    assert json.loads(text, parse_constant=_refuse_constant)["v"] == [1.0, None]
    back = _R.from_json(text)
    assert math.isnan(back.a) and back.v[0] == 1.0 and math.isnan(back.v[1]) and math.isnan(back.w[0])
    assert back.o is None  # an optional float: null stays "none"
