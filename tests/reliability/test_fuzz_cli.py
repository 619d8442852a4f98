"""Fuzz the command line with malformed CSV, Parquet, TOML and model files.

Every case must end with exit status 2 and exactly one stderr line starting
``leakaudit: error:`` (never a traceback), or succeed with status 0.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
from hypothesis import strategies as st

from leakaudit.cli import main

from ._fuzz import BUDGET_PARAMS, BUDGETS, run_fuzz

GOOD = "a,b,label\n0.1,x,0\n0.2,y,1\n0.3,x,0\n0.4,y,1\n"

csv_text = st.one_of(
    st.just(""), st.just("\n"), st.just("a,b,label\n"),  # empty, blank, header only
    st.just("a,b,label\n1,2\n3,4,5,6\n"),  # ragged rows
    st.just('a,b,label\n"unclosed,1,0\n'),  # broken quoting
    st.just("a,a,label\n1,2,0\n3,4,1\n"),  # duplicated column
    st.just("a,b,label\n1,2,0\n3,4,0\n"),  # one class
    st.just("a,b,label\n1,2,0\n1,2,0\n1,2,1\n"),  # duplicated records
    st.just("a,b,label\nnan,inf,0\n-inf,1e308,1\n"),  # non-finite and huge numbers
    st.just("a,b,label\n1,2,\n3,4,\n"),  # missing labels
    st.just("\x00\xff\xfe garbage"),
    st.just(GOOD),
    st.text(alphabet=st.sampled_from(list("ab,;\"\n01.-x\t")), max_size=80),
    st.binary(max_size=60).map(lambda b: b.decode("latin-1")),
)
toml_text = st.one_of(
    st.just(""), st.just("profile = [unclosed"), st.just("[audit]\nprofile = 3\n"),
    st.just('profile = "huge"\n'), st.just("seed = -1\n"), st.just("confidence = 2.0\n"),
    st.just("unknown_key = 1\n"), st.just('[thresholds]\nmax_auc = "high"\n'),
    st.just('label = "label"\n'), st.just('label = "no_such_column"\n'), st.just('sensitive = "a"\n'),
    st.just("n_members = 0\n"), st.just('backend = "gpu"\n'),
    st.text(alphabet=st.sampled_from(list('ab=[]"\n 12.{}#')), max_size=60),
    st.binary(max_size=40).map(lambda b: b.decode("latin-1")),
)
model_bytes = st.one_of(st.binary(max_size=200), st.just(b""), st.just(b"PK\x03\x04broken zip"),
                        st.just(b"\x80\x04\x95garbage pickle"))


def _check(rc, err, case):
    assert rc in (0, 2), (rc, err, case)
    if rc == 2:
        assert "Traceback" not in err, (err, case)
        assert err.count("\n") == 1 and err.startswith("leakaudit: error:"), (err, case)


def _write(d: Path, name: str, text: str) -> Path:
    p = d / name
    p.write_bytes(text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text)
    return p


@BUDGET_PARAMS
def test_cli_malformed_tables_and_configs(budget, capsys):
    def prop(case):
        train, test, toml, label, use_cfg, fmt = case
        with tempfile.TemporaryDirectory() as d:
            d = Path(d)
            if fmt == "parquet":  # write the text as the bytes of a .parquet file (malformed parquet)
                tr, te = _write(d, "train.parquet", train), _write(d, "test.parquet", test)
            else:
                tr, te = _write(d, "train.csv", train), _write(d, "test.csv", test)
            argv = ["audit", "--train", str(tr), "--test", str(te), "--out", str(d / "out"), "--profile", "smoke"]
            if label is not None:
                argv += ["--label", label]
            if use_cfg:
                argv += ["--config", str(_write(d, "c.toml", toml))]
            # predictions-only, and one row more than any table here: the run stops after reading and
            # encoding the data (a full audit per case would be too slow; tests/audit covers it)
            p = np.full((9, 2), 0.5)
            pd.DataFrame(p).to_csv(d / "p.csv", index=False)
            argv += ["--predictions-train", str(d / "p.csv"), "--predictions-test", str(d / "p.csv")]
            rc = main(argv)
            _check(rc, capsys.readouterr().err, case)

    strat = st.tuples(csv_text, csv_text, toml_text, st.sampled_from(["label", "b", "nope", "", None]),
                      st.booleans(), st.sampled_from(["csv", "csv", "parquet"]))
    n = 12 if budget == "default" else max(50, BUDGETS["long"] // 4)
    run_fuzz("cli.tables_and_configs", strat, prop, budget, max_examples=n)


@BUDGET_PARAMS
def test_cli_malformed_model_and_prediction_files(budget, capsys):
    def prop(case):
        blob, pred, module = case
        with tempfile.TemporaryDirectory() as d:
            d = Path(d)
            tr, te = _write(d, "train.csv", GOOD), _write(d, "test.csv", GOOD)
            base = ["audit", "--train", str(tr), "--test", str(te), "--label", "label", "--out", str(d / "out"),
                    "--profile", "smoke"]
            m = d / "model.bin"
            m.write_bytes(blob)
            argv = base + ["--model", str(m)] + (["--module", module] if module else [])
            _check(main(argv), capsys.readouterr().err, ("model", case))
            p = _write(d, "p.csv", pred)
            argv = base + ["--predictions-train", str(p), "--predictions-test", str(p)]
            _check(main(argv), capsys.readouterr().err, ("predictions", case))

    strat = st.tuples(model_bytes, csv_text, st.sampled_from([None, "nope", "no.such.mod:X"]))
    n = 8 if budget == "default" else max(50, BUDGETS["long"] // 4)
    run_fuzz("cli.model_and_predictions", strat, prop, budget, max_examples=n)


def test_console_script_one_line_no_traceback(tmp_path):
    """The installed entry point (a real process) turns a bad file into one line and status 2."""
    (tmp_path / "train.csv").write_text("")
    (tmp_path / "test.csv").write_text(GOOD)
    exe = Path(sys.executable).parent / "leakaudit"
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "leakaudit.cli"]
    r = subprocess.run(cmd + ["audit", "--train", str(tmp_path / "train.csv"), "--test", str(tmp_path / "test.csv"),
                              "--label", "label", "--out", str(tmp_path / "out")],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "Traceback" not in r.stderr, r.stderr
    assert "train.csv" in r.stderr


def test_cli_module_that_is_not_a_class(tmp_path, capsys):
    """``--module os:getcwd`` names a callable, not a torch module class: our error, not a traceback."""
    torch = __import__("pytest").importorskip("torch")
    tr, te = _write(tmp_path, "train.csv", GOOD), _write(tmp_path, "test.csv", GOOD)
    torch.save({}, tmp_path / "empty.pt")
    try:
        rc = main(["audit", "--train", str(tr), "--test", str(te), "--label", "label", "--out", str(tmp_path / "o"),
                   "--profile", "smoke", "--model", str(tmp_path / "empty.pt"), "--module", "os:getcwd"])
    except Exception as exc:  # noqa: BLE001 - the bug: an uncaught exception escapes main()
        raise AssertionError(f"main() raised {type(exc).__name__}: {exc}") from exc
    _check(rc, capsys.readouterr().err, "os:getcwd")
    assert rc == 2



