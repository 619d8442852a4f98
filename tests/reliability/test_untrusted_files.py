"""Model files carrying code are refused with a clear message, and the code provably does not run.

tests/audit/test_audit.py covers a plain pickle and a torch checkpoint through the
Python API; here: a joblib file, a skops file holding an untrusted custom type,
a zip that is not a skops file, and every one of them through the command line
(exit 2, one stderr line, no traceback, the marker file never created).
"""

from __future__ import annotations

import io
import os
import pickle
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from leakaudit.cli import main
from leakaudit.exceptions import UnsafeFileError


class Payload:
    """Unpickling this creates ``marker`` (proof that the file's code ran)."""

    def __init__(self, marker: str):
        self.marker = marker

    def __reduce__(self):
        return (open, (self.marker, "w"))


class UntrustedEstimator:
    """A custom type skops does not trust; its __setstate__ would create the marker."""

    def __init__(self, marker: str = ""):
        self.marker = marker

    def fit(self, X, y):
        return self

    def predict_proba(self, X):
        return np.full((len(X), 2), 0.5)

    def __setstate__(self, state):
        Path(state["marker"]).write_text("ran")
        self.__dict__.update(state)


@pytest.fixture
def marker(tmp_path):
    m = tmp_path / "pwned"
    assert not m.exists()
    return m


@pytest.fixture
def tables(tmp_path):
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"a": rng.normal(size=60), "b": rng.integers(0, 3, 60), "label": rng.integers(0, 2, 60)})
    df.iloc[:30].to_csv(tmp_path / "train.csv", index=False)
    df.iloc[30:].to_csv(tmp_path / "test.csv", index=False)
    return tmp_path / "train.csv", tmp_path / "test.csv"


def _joblib_file(path: Path, marker: Path) -> Path:
    joblib = pytest.importorskip("joblib")
    joblib.dump({"model": Payload(str(marker))}, path)
    return path


def _compressed_joblib_file(path: Path, marker: Path) -> Path:
    joblib = pytest.importorskip("joblib")
    joblib.dump(Payload(str(marker)), path, compress=3)
    return path


def _skops_untrusted(path: Path, marker: Path) -> Path:
    sio = pytest.importorskip("skops.io")
    sio.dump(UntrustedEstimator(str(marker)), path)
    assert any("UntrustedEstimator" in t for t in sio.get_untrusted_types(file=path))
    return path


def _zip_with_pickle(path: Path, marker: Path) -> Path:
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("schema.json", "{not json")
        z.writestr("model.pkl", pickle.dumps(Payload(str(marker))))
    return path


def _torch_checkpoint(path: Path, marker: Path) -> Path:
    torch = pytest.importorskip("torch")
    torch.save({"weight": Payload(str(marker))}, path)
    return path


SKOPS_LIKE = {
    "joblib": _joblib_file,
    "joblib_compressed": _compressed_joblib_file,
    "skops_untrusted_type": _skops_untrusted,
    "zip_not_skops": _zip_with_pickle,
}


@pytest.mark.parametrize("kind", list(SKOPS_LIKE))
def test_load_skops_model_refuses_and_runs_no_code(kind, tmp_path, marker):
    from leakaudit.audit.inputs.target import load_skops_model

    path = SKOPS_LIKE[kind](tmp_path / f"model.{kind}", marker)
    with pytest.raises(UnsafeFileError) as err:
        load_skops_model(path)
    msg = str(err.value)
    assert str(path) in msg and "\n" not in msg
    assert not marker.exists(), "loading the refused file ran its code"


def test_untrusted_skops_type_is_named(tmp_path, marker):
    from leakaudit.audit.inputs.target import load_skops_model

    path = _skops_untrusted(tmp_path / "m.skops", marker)
    with pytest.raises(UnsafeFileError, match="UntrustedEstimator"):
        load_skops_model(path)
    assert not marker.exists()


def test_torch_state_dict_with_code_refused_directly(tmp_path, marker):
    from leakaudit.audit.inputs.target import load_torch_model

    path = _torch_checkpoint(tmp_path / "m.pt", marker)
    with pytest.raises(UnsafeFileError, match="weights_only"):
        load_torch_model("torch.nn:Identity", path)
    assert not marker.exists()


CLI_CASES = {**SKOPS_LIKE, "torch_checkpoint": _torch_checkpoint, "plain_pickle": None}



@pytest.mark.parametrize("kind", CLI_CASES)
def test_cli_refuses_model_file_exit_2_one_line(kind, tmp_path, marker, tables, capsys):
    train, test = tables
    path = tmp_path / f"model.{kind}"
    if kind == "plain_pickle":
        path.write_bytes(pickle.dumps(Payload(str(marker))))
    else:
        CLI_CASES[kind](path, marker)
    argv = ["audit", "--train", str(train), "--test", str(test), "--label", "label", "--model", str(path),
            "--profile", "smoke", "--out", str(tmp_path / "out")]
    if kind == "torch_checkpoint":
        argv += ["--module", "torch.nn:Identity"]
    rc = main(argv)
    err = capsys.readouterr().err
    assert rc == 2, err
    assert err.count("\n") == 1 and err.startswith("leakaudit: error:"), err
    assert "Traceback" not in err and str(path.name) in err
    assert not marker.exists(), "the CLI ran code from the model file"
    assert not (tmp_path / "out" / "results.json").exists()


def test_cli_torch_checkpoint_code_never_runs(tmp_path, marker, tables, capsys):
    """Whatever the message's shape, the checkpoint's code does not run and the exit status is 2."""
    train, test = tables
    path = _torch_checkpoint(tmp_path / "m.pt", marker)
    rc = main(["audit", "--train", str(train), "--test", str(test), "--label", "label", "--model", str(path),
               "--module", "torch.nn:Identity", "--profile", "smoke", "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert rc == 2 and "Traceback" not in err and "weights_only" in err
    assert not marker.exists()
    assert not (tmp_path / "out" / "results.json").exists()
