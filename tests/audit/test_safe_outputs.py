"""Every file an audit writes is safe to open (issue 64), and the library refuses what the command line refuses.

Hostile names, labels and values go through ``leakaudit.audit`` + ``save`` and through ``leakaudit audit``; every
output is read back: records.csv holds no cell a spreadsheet would run as a formula and no control or bidirectional
character, report.html none either, and results.json the exact values.
"""

import csv
import json
import os
import re

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LogisticRegression

import leakaudit
from leakaudit._results import escape_controls, spreadsheet_exact, spreadsheet_safe
from leakaudit.audit.result.output import write_report, read_records_csv
from leakaudit.cli import main
from leakaudit.exceptions import InvalidInputError, InvalidParameterError, LeakauditError

HOSTILE = ["=cmd|calc!A1", '=HYPERLINK("http://evil","x")', "@SUM(A1)", "+1+cmd", "-2+3", "\u202eexe.txt",
           "\tlead", "a\x1bb", "'=quoted"]
#: what a spreadsheet runs as a formula, and what changes how text is shown
FORMULA = re.compile(r"^[=+\-@\t\r]")
CONTROLS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]")
PLAIN_NUMBER = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?")


def _tables(n=60, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(2 * n, 2))
    y = X[:, 0] + 0.5 * rng.normal(size=2 * n) > 0
    df = pd.DataFrame(X, columns=["a", "=HYPERLINK(\"x\")"])
    df["\u202ename"] = rng.choice(HOSTILE, 2 * n)
    df["label"] = np.where(y, "=1+1", "@no\u202ex")
    return df.iloc[:n].reset_index(drop=True), df.iloc[n:].reset_index(drop=True)


def _predictions(mem, non, seed=0):
    """Class probabilities of a model that leaks a little: higher on the members' own labels."""
    rng = np.random.default_rng(seed)
    out = []
    for t, lift in ((mem, 0.2), (non, 0.0)):
        own = np.clip(0.6 + lift + 0.1 * rng.normal(size=len(t)), 0.01, 0.99)
        first = np.where(t["label"] == "=1+1", own, 1 - own)  # columns in the sorted class order: "=1+1" first
        out.append(np.c_[first, 1 - first])
    return tuple(out)


@pytest.fixture(scope="module")
def saved_result(tmp_path_factory):
    mem, non = _tables()
    res = leakaudit.audit(None, mem, non, label="label", predictions=_predictions(mem, non), profile="smoke")
    return res, tmp_path_factory.mktemp("saved")


def _assert_safe(out, exact: pd.DataFrame | None = None):
    """Every cell of records.csv safe in a spreadsheet; no control character in it or in report.html."""
    text = (out / "records.csv").read_text(encoding="utf-8")
    assert not CONTROLS.search(text.replace("\t", "").replace("\r", "").replace("\n", ""))
    with open(out / "records.csv", newline="", encoding="utf-8") as fh:
        for row in csv.reader(fh):
            for cell in row:
                assert not (FORMULA.match(cell) and not PLAIN_NUMBER.fullmatch(cell)), cell
    assert not CONTROLS.search((out / "report.html").read_text(encoding="utf-8").replace("\t", "")
                               .replace("\r", "").replace("\n", ""))
    json.loads((out / "results.json").read_text())  # strict JSON, exact values
    back = read_records_csv(out / "records.csv")
    if exact is not None:  # the quote comes off; numbers are untouched
        shown = exact.rename(columns=escape_controls).map(lambda v: escape_controls(v) if isinstance(v, str) else v)
        assert list(back.columns) == list(shown.columns)
        for c in shown.columns:
            if pd.api.types.is_numeric_dtype(shown[c].dtype):
                np.testing.assert_allclose(back[c].to_numpy(float), shown[c].to_numpy(float), equal_nan=True)
            else:
                assert back[c].fillna("").astype(str).tolist() == shown[c].fillna("").astype(str).tolist(), c
    return back


@pytest.mark.parametrize("value", HOSTILE + ["-5", "1e5", "plain", "''=x", "-", "-inf", "'a"])
def test_the_spreadsheet_rule_quotes_formulas_and_reads_back_exactly(value):
    safe = spreadsheet_safe(value)
    assert not (FORMULA.match(safe) and not PLAIN_NUMBER.fullmatch(safe))
    assert not CONTROLS.search(safe.replace("\t", ""))
    assert spreadsheet_exact(safe) == escape_controls(value)
    assert spreadsheet_safe(3.5) == 3.5 and spreadsheet_safe(None) is None


def test_hostile_names_labels_and_values_through_the_library_and_the_command_line(tmp_path, saved_result):
    res, _ = saved_result
    lib = res.save(tmp_path / "lib")
    back = _assert_safe(lib, res.records)
    assert "'=cmd|calc!A1" in (lib / "records.csv").read_text() and "=cmd|calc!A1" in set(back["\\u202ename"])
    report = (lib / "report.html").read_text()
    assert "\\u202ename" in report and "\u202e" not in report
    assert not CONTROLS.search(res._repr_html_())
    write_report(lib, type(res))  # rendered again from the files alone
    again = (lib / "report.html").read_text()
    assert "\\u202ename: " in again and "\u202e" not in again and report.count("\\u202ename: ") == \
        again.count("\\u202ename: ")
    data = json.loads((lib / "results.json").read_text())["data"]
    assert data["class_names"] == ["=1+1", "@no\u202ex"] and "\u202ename" in data["record_columns"]  # exact

    mem, non = _tables()
    files = {"train": mem, "test": non, "predictions-train": pd.DataFrame(_predictions(mem, non)[0]),
             "predictions-test": pd.DataFrame(_predictions(mem, non)[1])}
    args = ["audit", "--label", "label", "--profile", "smoke", "--out", str(tmp_path / "cli"), "--quiet"]
    for flag, frame in files.items():
        frame.to_csv(tmp_path / f"{flag}.csv", index=False)
        args += [f"--{flag}", str(tmp_path / f"{flag}.csv")]
    assert main(args) in (0, None, 3, 4)
    # the files' records also give the line each starts on (tables in memory have none)
    assert _assert_safe(tmp_path / "cli").drop(columns="line").shape == back.shape


@pytest.mark.parametrize("out, words", [
    (None, "out must be the path of a folder"), (12345, "out must be the path of a folder"),
    (b"x", "out must be the path of a folder"), ("", "out must name a folder"), ("  ", "out must name a folder"),
])
def test_save_refuses_what_is_not_a_folder_and_writes_nothing(saved_result, monkeypatch, out, words):
    res, root = saved_result
    monkeypatch.chdir(root)
    before = sorted(os.listdir(root))
    with pytest.raises(InvalidParameterError, match=words):
        res.save(out)
    assert sorted(os.listdir(root)) == before


def test_save_creates_only_the_folder_it_names_and_nothing_on_a_fault(saved_result, tmp_path, monkeypatch):
    import leakaudit.report

    res, _ = saved_result
    (tmp_path / "x").mkdir()
    out = res.save(str(tmp_path / "x" / "missing" / ".." / "d"))
    assert out == tmp_path / "x" / "d" and sorted(os.listdir(tmp_path / "x")) == ["d"]
    assert sorted(os.listdir(out)) == ["evidence.json", "records.csv", "report.html", "results.json"]

    def broken(*a, **k):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(leakaudit.report, "render_report", broken)
    with pytest.raises(LeakauditError, match="no space left"):
        res.save(tmp_path / "new" / "deeper" / "out")
    assert not (tmp_path / "new").exists()


def test_a_threshold_out_of_range_is_refused_naming_it():
    mem, non = _tables(40)
    model = LogisticRegression().fit(mem[["a"]], mem["label"])
    with pytest.raises(InvalidParameterError, match=r"thresholds\.max_unmeasured_dtp_share: .*got 1\.0"):
        leakaudit.audit(model, mem, non, label="label", thresholds={"max_unmeasured_dtp_share": 1.0})
    with pytest.raises(InvalidParameterError, match="thresholds: unknown key"):
        leakaudit.audit(model, mem, non, label="label", thresholds={"max_typo": 1.0})


@pytest.mark.parametrize("dtype", ["boolean", "Int64"])
def test_boolean_and_nullable_label_columns_are_accepted(tmp_path, dtype):
    mem, non = _tables(40)
    for t in (mem, non):
        t["label"] = (t["label"] == "=1+1").astype(dtype) if dtype != "string" else t["label"].astype("string")
    model = LogisticRegression().fit(mem[["a"]], mem["label"])
    res = leakaudit.audit(model, mem, non, label="label", profile="smoke", cache_dir=str(tmp_path / "c"))
    assert res.target["train_accuracy"] > 0.5


def test_an_unfitted_estimator_is_called_unfitted():
    from sklearn.tree import DecisionTreeClassifier

    mem, non = _tables(40)
    with pytest.raises(InvalidInputError, match=r"the given model \(DecisionTreeClassifier\) is not fitted"):
        leakaudit.audit(DecisionTreeClassifier(), mem, non, label="label")


def test_a_bare_tree_is_not_called_a_pipeline_by_the_mip_stage(tmp_path):
    from sklearn.tree import DecisionTreeClassifier

    mem, non = _tables(40)
    res = leakaudit.audit(DecisionTreeClassifier(random_state=0).fit(mem[["a"]], mem["label"]), mem, non,
                          label="label", profile="smoke", cache_dir=str(tmp_path / "c"))
    why = next(s.reason for s in res.skipped if s.name.startswith("MIP"))
    assert "Pipeline" not in why and "DecisionTreeClassifier" in why and "not one vector" in why


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes")
def test_a_named_pipe_is_not_called_missing(tmp_path, capsys):
    os.mkfifo(tmp_path / "train.csv")
    mem, non = _tables(40)
    non.to_csv(tmp_path / "test.csv", index=False)
    rc = main(["audit", "--train", str(tmp_path / "train.csv"), "--test", str(tmp_path / "test.csv"), "--label",
               "label", "--out", str(tmp_path / "out"), "--profile", "smoke"])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and "named pipe (FIFO), not a regular file" in err and "does not exist" not in err
    assert len(err.splitlines()) == 1 and not (tmp_path / "out").exists()


def test_membership_names_the_flag_of_a_negative_count(tmp_path, capsys):
    rc = main(["membership", "--n-members", "-5", "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and "--n-members must be in [1, inf]; got -5" in err and not (tmp_path / "out").exists()


def test_prediction_files_count_rows_and_columns_from_1(tmp_path, capsys):
    mem, non = _tables(20)
    mem, non = mem[["a", "label"]], non[["a", "label"]]
    mem.to_csv(tmp_path / "train.csv", index=False)
    non.to_csv(tmp_path / "test.csv", index=False)
    p = np.full((20, 2), 0.5)
    p[2, 1] = -0.5  # the third record, the second column
    pd.DataFrame(p, columns=["=1+1", "@no"]).to_csv(tmp_path / "ptrain.csv", index=False)
    pd.DataFrame(np.full((20, 2), 0.5), columns=["=1+1", "@no"]).to_csv(tmp_path / "ptest.csv", index=False)
    rc = main(["audit", "--train", str(tmp_path / "train.csv"), "--test", str(tmp_path / "test.csv"), "--label",
               "label", "--predictions-train", str(tmp_path / "ptrain.csv"), "--predictions-test",
               str(tmp_path / "ptest.csv"), "--out", str(tmp_path / "out"), "--profile", "smoke"])
    err = capsys.readouterr().err
    assert rc == 2 and "row 3, column 2 is -0.5" in err


def _sparse_knn(tmp_path, final=None):
    """A pipeline (one-hot "\u202ename" into a sparse matrix, then ``final``: a 1-nearest-neighbour classifier by
    default) fitted on the members, and the members and non-members written to train.csv and test.csv."""
    import skops.io as sio
    from sklearn.compose import make_column_transformer
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder

    mem, non = _tables(40)
    mem, non = mem[["a", "\u202ename", "label"]], non[["a", "\u202ename", "label"]]
    model = make_pipeline(make_column_transformer((OneHotEncoder(handle_unknown="ignore"), ["\u202ename"]),
                                                  remainder="passthrough", sparse_threshold=1.0),
                          final or KNeighborsClassifier(1)).fit(mem.drop(columns="label"), mem["label"])
    mem.to_csv(tmp_path / "train.csv", index=False)
    non.to_csv(tmp_path / "test.csv", index=False)
    return model, sio


def test_the_command_line_prints_control_characters_escaped(tmp_path, capsys):
    """What ``leakaudit audit`` prints (the folder it wrote, a sensitive column's name and its values, warnings) shows
    a right-to-left override as ``\\u202e``, as report.html and records.csv do, never the character itself."""
    import warnings

    from leakaudit.cli._warnings import summarised_warnings

    model, sio = _sparse_knn(tmp_path, LogisticRegression())  # (its leave-one-out models are quick to train)
    sio.dump(model, tmp_path / "model.skops")
    out_dir = tmp_path / "o\u202eut"
    assert main(["audit", "--train", str(tmp_path / "train.csv"), "--test", str(tmp_path / "test.csv"), "--label",
                 "label", "--model", str(tmp_path / "model.skops"), "--sensitive", "\u202ename", "--profile", "smoke",
                 "--out", str(out_dir), "--cache-dir", str(tmp_path / "c")]) in (0, None, 3, 4)
    with summarised_warnings() as warned:
        warnings.simplefilter("always")
        warnings.warn("column '\u202ename' has one value", UserWarning)
    warned.flush()
    out, err = capsys.readouterr()
    assert "o\\u202eut/results.json" in out and "inference of \\u202ename" in out and "\u202e" not in out
    assert "column '\\u202ename'" in err and "\u202e" not in err
    assert (out_dir / "results.json").is_file()  # the folder itself has the name asked for


def test_sparse_matrices_in_a_skops_file_are_trusted_as_data_once_checked(tmp_path, capsys):
    import scipy.sparse as sp

    model, sio = _sparse_knn(tmp_path)
    assert sp.issparse(model[-1]._fit_X)
    sio.dump(model, tmp_path / "knn.skops")
    args = ["audit", "--train", str(tmp_path / "train.csv"), "--test", str(tmp_path / "test.csv"), "--label", "label",
            "--profile", "smoke", "--check-inputs", "--cache-dir", str(tmp_path / "c")]
    assert main(args + ["--model", str(tmp_path / "knn.skops"), "--out", str(tmp_path / "ok")]) in (0, None)
    capsys.readouterr()
    model[-1]._fit_X.indices[0] = 10**6  # an index far outside the matrix: scipy would read out of bounds
    sio.dump(model, tmp_path / "bad.skops")
    rc = main(args + ["--model", str(tmp_path / "bad.skops"), "--out", str(tmp_path / "bad")])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and "malformed sparse matrix (an index outside its shape" in err and len(err.splitlines()) == 1


def test_the_command_writes_nothing_outside_its_output_folder(tmp_path):
    """The trained models' cache defaults to a folder inside --out (issue 83): an audit run from an empty working
    folder leaves only the output folder there."""
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "LEAKAUDIT_CACHE"}
    proc = subprocess.run([sys.executable, "-m", "leakaudit.cli", "audit", "--profile", "smoke", "--check-inputs",
                           "--out", "out", "-q"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert sorted(os.listdir(tmp_path)) == ["out"]
    assert (tmp_path / "out" / ".leakaudit-cache").is_dir()
