"""What an ML engineer meets first: a column that looks like an identifier named with --unit, progress in a
notebook, results.json's config holding only the settings that apply, and --redact reaching the files."""

import io
import warnings

import numpy as np
import pandas as pd
import pytest

from leakaudit.audit import progress
from leakaudit.audit.config import AuditConfig, recorded_config
from leakaudit.audit.inputs.data import IdentifierColumnWarning, data_from_frames


def _tables(n=300, seed=0, **extra):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"a": rng.normal(size=2 * n), "age": rng.integers(17, 90, 2 * n),
                       "colour": rng.choice(["red", "blue", "green"], 2 * n),
                       "label": rng.choice(["yes", "no"], 2 * n), **extra})
    return df.iloc[:n], df.iloc[n:]


def _identifier_warnings(mem, non):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        data_from_frames(mem, non, label="label")
    return [str(w.message) for w in caught if w.category is IdentifierColumnWarning]


def test_a_column_that_looks_like_an_identifier_is_named_with_unit():
    n = 300
    assert _identifier_warnings(*_tables(n)) == []  # floats, a small integer range, a few categories
    # a person id repeated across three rows each, and a row number
    said = _identifier_warnings(*_tables(n, person=[f"p{i // 3}" for i in range(2 * n)], serial=np.arange(2 * n)))
    assert len(said) == 2 and all("\n" not in s and "--unit" in s for s in said)
    assert said[0].startswith("column 'person' looks like an identifier (200 distinct values in 600 rows, at most "
                              "3 rows each)")
    assert "--unit serial" in said[1]
    # a categorical column with some rare values is not an identifier
    rare = ["common"] * 500 + [f"rare{i}" for i in range(100)]
    assert _identifier_warnings(*_tables(n, place=rare)) == []


def test_progress_in_a_notebook_is_a_bar(monkeypatch):
    pytest.importorskip("tqdm")
    monkeypatch.setattr(progress, "in_notebook", lambda: True)
    out = io.StringIO()
    st = progress.StageProgress(True, stream=out, tty=False, hold_until=None)
    with st.stage("membership", "membership attacks"):
        st.expect({"membership": 8})
        for k in range(9):
            st.on_models(k, 8)
        assert st._bar is not None and st._bar.n == 8
    assert st._bar is None  # closed with its stage
    text = out.getvalue()
    assert "membership: membership attacks ..." in text and "membership: models" in text and "8/8" in text
    quiet = progress.StageProgress(False, stream=io.StringIO(), tty=False)
    assert quiet._tqdm is None  # quiet when asked
    monkeypatch.setattr(progress, "in_notebook", lambda: False)
    assert progress.StageProgress(True, stream=io.StringIO(), tty=False)._tqdm is None  # a log: plain lines


def test_the_library_shows_progress_in_a_notebook_by_default(monkeypatch):
    import inspect

    from sklearn.linear_model import LogisticRegression

    import leakaudit
    from leakaudit.audit import pipeline

    class Stop(Exception):
        pass

    def stand_in(cfg, **kw):
        seen["verbose"] = kw["verbose"]
        raise Stop

    assert inspect.signature(leakaudit.audit).parameters["verbose"].default is None
    seen = {}
    monkeypatch.setattr(progress, "in_notebook", lambda: True)
    monkeypatch.setattr(pipeline, "audit_core", stand_in)
    mem, non = _tables(60)
    model = LogisticRegression().fit(mem[["a", "age"]], mem["label"])
    for verbose, shown in ((None, True), (False, False)):
        with pytest.raises(Stop):
            leakaudit.audit(model, mem[["a", "age", "label"]], non[["a", "age", "label"]], label="label",
                            verbose=verbose)
        assert seen["verbose"] is shown


def test_config_records_only_the_settings_that_apply():
    cfg = AuditConfig(train="t.csv", test="u.csv", label="y", model="m.json")
    xgb = recorded_config(cfg, kind="xgboost", text=False)
    for key in ("dataset", "n_members", "hidden", "epochs", "module", "training", "device", "model_dir",
                "text_column", "extraction", "extraction_n", "dataset_inference"):
        assert key not in xgb
    assert {"train", "test", "label", "model", "thresholds", "confidence", "dtp_rule", "seed", "profile"} <= set(xgb)
    assert "device" in recorded_config(cfg, kind="sklearn", text=False)
    demo = recorded_config(AuditConfig(epochs=3), kind="demo", text=False)
    assert demo["epochs"] == 3 and "hidden" in demo and "training" not in demo and "model_dir" not in demo
    given = recorded_config(cfg.model_copy(update={"epochs": 7}), kind="xgboost", text=False)
    assert given["epochs"] == 7  # a setting given a value other than its default is recorded whatever applies
    text = recorded_config(AuditConfig(train="t.csv", test="u.csv", model_dir="lm", text_column="text"),
                           kind="language model", text=True)
    assert {"model_dir", "text_column", "extraction"} <= set(text) and not {"label", "model", "removal"} & set(text)
    assert AuditConfig(**{**xgb}).model_dump() == cfg.model_dump()  # enough to re-run


def test_redact_reaches_the_files_from_the_command_line(monkeypatch, tmp_path):
    from leakaudit.audit import pipeline
    from leakaudit.cli import main

    seen = {}

    def stand_in(cfg, out, **kw):
        seen.update(kw)
        raise SystemExit(0)

    monkeypatch.setattr(pipeline, "run_audit", stand_in)
    for flags, redact in ((["--redact"], True), ([], False)):
        with pytest.raises(SystemExit):
            main(["audit", "--out", str(tmp_path / "out"), "--quiet", *flags])
        assert seen["redact"] is redact
