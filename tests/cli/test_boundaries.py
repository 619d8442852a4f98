"""Every command holds its boundary (issue 51): what used to give a silently wrong answer, a traceback or a
leak now ends in one line naming the file, column or flag, and exit status 2; what used to pass still passes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from leakaudit.cli import main

SRC = Path(__file__).resolve().parents[2] / "src"


def _one_line_exit_2(capsys, argv) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("leakaudit: error: ") and err.count("\n") == 1 and "Traceback" not in err, err
    return err


def _tables(d: Path, n: int = 60, seed: int = 0) -> tuple[Path, Path]:
    rng = np.random.default_rng(seed)

    def frame(k):
        x = rng.normal(size=(k, 2))
        return pd.DataFrame({"a": x[:, 0], "b": np.where(x[:, 1] > 0, "u", "v"),
                             "y": (x[:, 0] + rng.normal(size=k) > 0).astype(int)})

    frame(n).to_csv(d / "mem.csv", index=False)
    frame(n).to_csv(d / "non.csv", index=False)
    return d / "mem.csv", d / "non.csv"


def _predictions(d: Path, n: int) -> list[str]:
    pd.DataFrame(np.full((n, 2), 0.5), columns=["0", "1"]).to_csv(d / "p.csv", index=False)
    return ["--predictions-train", str(d / "p.csv"), "--predictions-test", str(d / "p.csv")]


def _check(d: Path, train: Path, test: Path, *extra: str) -> list[str]:
    return ["audit", "--train", str(train), "--test", str(test), "--label", "y", "--out", str(d / "out"),
            "--check-inputs", *extra]


# -- silent wrong answers -------------------------------------------------------------------------------------


def test_non_members_that_copy_the_members_are_refused(tmp_path, capsys):
    mem, _ = _tables(tmp_path)
    err = _one_line_exit_2(capsys, _check(tmp_path, mem, mem, *_predictions(tmp_path, 60)))
    assert "every record of the non-members" in err and "mem.csv" in err and "60 of 60" in err


def test_a_population_that_copies_the_members_is_refused(tmp_path, capsys):
    mem, non = _tables(tmp_path)
    err = _one_line_exit_2(capsys, _check(tmp_path, mem, non, "--population", str(mem),
                                          *_predictions(tmp_path, 60)))
    assert "every record of the population" in err


def test_partial_overlap_is_audited_with_one_warning_naming_count_and_rows(tmp_path, capsys):
    mem, non = _tables(tmp_path)
    half = tmp_path / "half.csv"
    pd.concat([pd.read_csv(non).iloc[:50], pd.read_csv(mem).iloc[:10]]).to_csv(half, index=False)
    assert main(_check(tmp_path, mem, half, *_predictions(tmp_path, 60))) == 0
    err = capsys.readouterr().err.splitlines()
    warns = [ln for ln in err if "DuplicateRecordsWarning" in ln]
    assert len(warns) == 1 and "10 of the 60 records" in warns[0] and "rows 51, 52, 53 and 7 more" in warns[0]


def test_config_keys_beside_an_audit_table_are_read_not_dropped(tmp_path):
    from leakaudit.audit.config import load_config_and_options

    f = tmp_path / "c.toml"
    f.write_text('exit_code = true\n[audit]\nprofile = "smoke"\n[thresholds]\nmax_auc = 0.7\n')
    cfg, _ = load_config_and_options(f)
    assert cfg.exit_code is True and cfg.profile == "smoke" and cfg.thresholds.max_auc == 0.7


@pytest.mark.parametrize("text, named", [
    ('seed = 1\n[audit]\nseed = 2\n', "'seed' given both at the top level and under [audit]"),
    ('no_such = 1\n[audit]\nprofile = "smoke"\n', "unknown key 'no_such'"),
])
def test_config_key_in_both_places_or_unknown_beside_audit_is_refused(tmp_path, capsys, text, named):
    f = tmp_path / "c.toml"
    f.write_text(text)
    err = _one_line_exit_2(capsys, ["audit", "--config", str(f), "--check-inputs"])
    assert named in err


def test_an_input_that_the_outputs_would_overwrite_is_refused_before_any_work(tmp_path, capsys):
    mem, non = _tables(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    members = out / "records.csv"
    members.write_bytes(mem.read_bytes())
    before = members.read_bytes()
    err = _one_line_exit_2(capsys, ["audit", "--train", str(members), "--test", str(non), "--label", "y",
                                    "--out", str(out), "--profile", "smoke"])
    assert "train" in err and "records.csv" in err and "overwritten" in err
    assert members.read_bytes() == before


def test_torch_outputs_that_are_nan_are_refused_by_check_inputs(tmp_path, capsys):
    torch = pytest.importorskip("torch")
    mem, non = _tables(tmp_path)
    mod = tmp_path / "nanmod.py"
    mod.write_text("import torch\nclass M(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
                   "        self.w = torch.nn.Linear(3, 2)\n    def forward(self, x):\n"
                   "        return self.w(x) * float('nan')\n")
    sys.path.insert(0, str(tmp_path))
    try:
        import nanmod

        torch.save(nanmod.M().state_dict(), tmp_path / "w.pt")
        err = _one_line_exit_2(capsys, _check(tmp_path, mem, non, "--model", str(tmp_path / "w.pt"),
                                              "--module", "nanmod:M"))
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("nanmod", None)
    assert "NaN" in err and "w.pt" in err and "members" in err


def test_gather_from_a_missing_folder_leaves_the_page_as_it_was(tmp_path, capsys):
    page = tmp_path / "page.md"
    page.write_text("# the page\n")
    err = _one_line_exit_2(capsys, ["reproduce", "--out", str(tmp_path / "missing"), "--gather", str(page)])
    assert "missing" in err and page.read_text() == "# the page\n"
    (tmp_path / "empty").mkdir()
    err = _one_line_exit_2(capsys, ["reproduce", "--out", str(tmp_path / "empty"), "--gather", str(page)])
    assert "holds no run" in err and page.read_text() == "# the page\n"


def test_nested_log_probabilities_are_refused_not_flattened(tmp_path, capsys):
    for name, lp in (("m.jsonl", [[-1.0, -2.0], [-3.0, -4.0]]), ("n.jsonl", [-1.0, -2.0])):
        (tmp_path / name).write_text("\n".join(json.dumps({"text": f"t {i}", "lp": lp}) for i in range(3)) + "\n")
    err = _one_line_exit_2(capsys, ["audit", "--train", str(tmp_path / "m.jsonl"), "--test", str(tmp_path / "n.jsonl"),
                                    "--text-column", "text", "--logprobs-column", "lp", "--out", str(tmp_path / "o"),
                                    "--check-inputs"])
    assert "m.jsonl, row 1" in err and "nested list (shape 2x2)" in err


@pytest.mark.parametrize("flags, named", [
    (["--records", "-1"], "--records must be at least 1; got -1"),
    (["--records", "0"], "--records must be at least 1; got 0"),
    (["--rows", "5000"], "--rows 5000 exceeds the 60 rows of"),
    (["--rows", "0"], "--rows must be at least 1; got 0"),
    (["--rows", "30", "--records", "31"], "--records 31 exceeds the 30 training records"),
])
def test_dtp_counts_beyond_the_data_are_refused(tmp_path, capsys, flags, named):
    mem, _ = _tables(tmp_path)
    err = _one_line_exit_2(capsys, ["dtp", "pdtp", "--data", str(mem), "--label", "y", "--model", "logreg", *flags])
    assert named in err


# -- check-inputs refuses what the audit refuses -----------------------------------------------------------------


def test_a_value_too_large_to_standardise_is_named_with_file_column_and_row(tmp_path, capsys):
    mem, non = _tables(tmp_path)
    df = pd.read_csv(mem)
    df.loc[3, "a"] = 1e308
    df.to_csv(mem, index=False)
    err = _one_line_exit_2(capsys, _check(tmp_path, mem, non, *_predictions(tmp_path, 60)))
    assert "column 'a'" in err and "mem.csv" in err and "1e+308" in err and "row 4" in err


def test_scikit_learn_retraining_on_a_single_class_is_refused_by_check_inputs(tmp_path, capsys):
    skops = pytest.importorskip("skops.io")
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    mem, non = _tables(tmp_path, n=100)
    m, n = pd.read_csv(mem), pd.read_csv(non)
    m["y"], n["y"] = 0, 0
    m.loc[[3], "y"], n.loc[[4], "y"] = 1, 1  # one positive member: leave-one-out leaves one class
    m.to_csv(mem, index=False)
    n.to_csv(non, index=False)
    skops.dump(make_pipeline(StandardScaler(), LogisticRegression()).fit(m[["a"]], m["y"]), tmp_path / "m.skops")
    err = _one_line_exit_2(capsys, _check(tmp_path, mem, non, "--model", str(tmp_path / "m.skops")))
    assert "label column 'y'" in err and "class '1' occurs once among the members (row 4 of" in err


# -- leaks and costs ---------------------------------------------------------------------------------------------


def test_a_link_to_a_protected_file_is_refused_without_its_contents(tmp_path, capsys):
    secret = tmp_path / "secret.txt"
    secret.write_text("top-secret-line,other\n1,2\n")
    secret.chmod(0o600)
    link = tmp_path / "train.csv"
    link.symlink_to(secret)
    _, non = _tables(tmp_path)
    for argv in (_check(tmp_path, link, non), ["dtp", "pdtp", "--data", str(link), "--label", "y"]):
        err = _one_line_exit_2(capsys, argv)
        assert "top-secret" not in err and "not readable by everyone" in err
    secret.chmod(0o644)  # a link to a file everyone may read is read as usual
    err = _one_line_exit_2(capsys, _check(tmp_path, link, non))
    assert "label column 'y' is not a column" in err


def test_version_and_help_import_no_numerical_library():
    code = ("import sys; from leakaudit.cli import main; rc = main(sys.argv[1:]);"
            "heavy = sorted(m for m in ('numpy', 'pandas', 'sklearn', 'torch', 'scipy') if m in sys.modules);"
            "print('HEAVY', heavy)")
    env = {**os.environ, "PYTHONPATH": f"{SRC}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    for args in (["--version"], ["--help"]):
        r = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=env, timeout=120)
        assert "HEAVY []" in r.stdout, (args, r.stdout[-300:], r.stderr[-300:])


def test_many_warnings_of_one_kind_print_a_few_lines_and_a_count(capsys):
    import warnings

    from leakaudit.cli._warnings import SHOWN, summarised_warnings

    with summarised_warnings() as warned:
        for i in range(10_000):
            warnings.warn(f"column 'c{i}' has {i} distinct values", UserWarning)
        warnings.warn("something else", RuntimeWarning)
    warned.flush()
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == SHOWN + 2, lines
    assert lines[SHOWN] == f"leakaudit: warning: {10_000 - SHOWN:,} more UserWarning like the one above (10,000 in all)"


# -- tracebacks at the boundary ----------------------------------------------------------------------------------


def test_parquet_list_and_struct_columns_are_refused_by_name(tmp_path, capsys):
    mem, non = _tables(tmp_path)
    m = pd.read_csv(mem)
    m["tags"] = [[1, 2]] * len(m)
    m["meta"] = [{"k": 1}] * len(m)
    m.to_parquet(tmp_path / "m.parquet")
    err = _one_line_exit_2(capsys, _check(tmp_path, tmp_path / "m.parquet", non))
    assert "column 'tags' holds a list (row 1)" in err and "column 'meta' holds a struct" in err
    err = _one_line_exit_2(capsys, ["dtp", "pdtp", "--data", str(tmp_path / "m.parquet"), "--label", "y"])
    assert "column 'tags' holds a list" in err


def test_a_text_field_that_is_a_list_is_refused_by_row(tmp_path, capsys):
    (tmp_path / "m.jsonl").write_text('{"text": ["a", "b"]}\n{"text": "b"}\n')
    (tmp_path / "n.jsonl").write_text('{"text": "c"}\n{"text": "d"}\n')
    err = _one_line_exit_2(capsys, ["audit", "--train", str(tmp_path / "m.jsonl"), "--test", str(tmp_path / "n.jsonl"),
                                    "--text-column", "text", "--logprobs-column", "lp", "--out", str(tmp_path / "o"),
                                    "--check-inputs"])
    assert "m.jsonl, row 1: 'text' is a list, not text" in err


@pytest.mark.parametrize("command", [["membership"], ["property", "--t0", "0.3", "--t1", "0.6"],
                                     ["attribute", "--attribute", "sex"], ["dp-audit", "--epsilon", "1"]])
def test_an_output_folder_that_is_a_file_is_refused_before_any_work(tmp_path, capsys, command):
    f = tmp_path / "taken"
    f.write_text("mine\n")
    err = _one_line_exit_2(capsys, [*command, "--out", str(f)])
    assert f"--out {f} exists and is not a folder" in err and f.read_text() == "mine\n"
