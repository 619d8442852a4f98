"""Error messages show values as a user wrote them (issue 28): ``1``, not ``np.int64(1)``; a path, not
``PosixPath('...')``; never an empty list ``[]``; a long list cut at a word boundary with "...", not mid-word.
Each CLI case: exit status 2 and exactly one line on stderr."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from leakaudit._validation import check_choice, check_scalar, clip, plain, shown
from leakaudit.cli import main
from leakaudit.exceptions import InvalidParameterError

_REPRS = re.compile(r"np\.\w+\(|numpy\.\w+\(|PosixPath\(|WindowsPath\(|array\(|\[\]")


def _one_line_exit_2(capsys, argv) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("leakaudit: error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err and not _REPRS.search(err), err
    return err


def test_single_class_label_is_shown_as_written(tmp_path, capsys):
    f = tmp_path / "one.csv"
    pd.DataFrame({"a": [1.0, 2.0, 3.0, 4.0], "y": [1, 1, 1, 1]}).to_csv(f, index=False)
    err = _one_line_exit_2(capsys, ["dtp", "pdtp", "--data", str(f), "--label", "y", "--model", "logreg",
                                    "--rows", "4"])
    assert "label 'y' holds a single class (1); classification needs at least 2" in err


def test_mip_data_without_or_with_several_numeric_columns(tmp_path, capsys):
    none, two = tmp_path / "none.csv", tmp_path / "two.csv"
    pd.DataFrame({"a": ["x", "y"], "b": ["p", "q"]}).to_csv(none, index=False)
    pd.DataFrame({"a": [1.0, 2.0], "b": [3.0, 4.0]}).to_csv(two, index=False)
    err = _one_line_exit_2(capsys, ["mip", "audit", "--data", str(none), "--scale", "1"])
    assert "none.csv has no numeric column" in err
    err = _one_line_exit_2(capsys, ["mip", "audit", "--data", str(two), "--scale", "1"])
    assert "--column is required: two.csv has 2 numeric columns (a, b)" in err


def test_unusable_cache_dir_is_named_as_a_path(tmp_path, capsys):
    (tmp_path / "afile").write_text("x")
    bad = tmp_path / "afile" / "cache"
    err = _one_line_exit_2(capsys, ["membership", "--model", "logreg", "--cache-dir", str(bad),
                                    "--out", str(tmp_path / "out")])
    assert f"cache_dir {bad} cannot be used as a directory" in err


@pytest.mark.parametrize("command, before", [(["dtp", "pdtp"], "columns: "),
                                             (["attribute", "--attribute", "x"], "columns are ")])
def test_long_column_list_is_cut_at_a_word_boundary(tmp_path, capsys, command, before):
    names = [f"measurement_{i:03d}" for i in range(60)]
    f = tmp_path / "wide.csv"
    pd.DataFrame(np.zeros((3, 60)), columns=names).to_csv(f, index=False)
    err = _one_line_exit_2(capsys, [*command, "--data", str(f), "--label", "nope", "--out", str(tmp_path / "o")])
    listed = err.split(before, 1)[1].strip()
    assert listed.endswith("...") and len(listed) <= 200
    shown_names = listed[:-3].split(", ")
    assert shown_names == names[:len(shown_names)]  # every name shown is whole


@pytest.mark.parametrize("value, expected", [
    (np.int64(1), "1"), (np.float64(0.5), "0.5"), (np.str_("a"), "'a'"), (np.bool_(True), "True"),
    ([np.int64(0), np.int64(1)], "[0, 1]"), ((np.float32(2.0),), "(2.0,)"), (np.array([1, 2]), "[1, 2]"),
])
def test_shown_writes_numpy_values_as_python_values(value, expected):
    assert shown(value) == expected


def test_shown_writes_paths_as_text(tmp_path):
    assert plain(tmp_path) == str(tmp_path) and "Path(" not in shown([tmp_path])


def test_clip_cuts_at_a_word_boundary():
    assert clip("alpha beta gamma delta", 14) == "alpha beta..."
    assert clip("  one\n line  ") == "one line"
    assert clip("x" * 50, 10) == "xxxxxxx..."


def test_parameter_checks_show_numpy_values_plainly():
    with pytest.raises(InvalidParameterError, match=r"got 1\.5 \(float64\)$"):
        check_scalar(np.float64(1.5), name="k", kind=int)
    with pytest.raises(InvalidParameterError, match=r"must be one of 'a', 'b'; got 'z'$"):
        check_choice(np.str_("z"), name="m", choices=("a", "b"))
