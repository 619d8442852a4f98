"""Bad input that used to stop with an internal name, or none, or a size of 0 (issue 83) now ends in one line
naming the user's argument, file and row: a unit column with every member in one unit, a bad log-probability
cell, a seed that is a bool or a text, a size below a mebibyte."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from leakaudit.cli import main


def _one_line_exit_2(capsys, argv) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("leakaudit: error: ") and err.count("\n") == 1 and "Traceback" not in err, err
    return err


def test_a_unit_column_with_every_member_in_one_unit_is_refused_naming_it(tmp_path, capsys):
    rng = np.random.default_rng(0)

    def frame(units):
        n = len(units)
        return pd.DataFrame({"a": rng.normal(size=n), "y": rng.integers(0, 2, n), "person": units})

    frame(["p1"] * 30).to_csv(tmp_path / "mem.csv", index=False)
    frame([f"q{i}" for i in range(30)]).to_csv(tmp_path / "non.csv", index=False)
    err = _one_line_exit_2(capsys, ["audit", "--train", str(tmp_path / "mem.csv"), "--test", str(tmp_path / "non.csv"),
                                    "--label", "y", "--unit", "person", "--profile", "smoke", "--quiet", "--out",
                                    str(tmp_path / "out")])
    assert err.startswith("leakaudit: error: --unit 'person': every member is in one unit ('p1', all 30 rows of the "
                          f"members ({tmp_path / 'mem.csv'}))"), err
    assert "groups" not in err


@pytest.mark.parametrize("cell, problem", [
    ([-1.0, float("nan")], "holds NaN or infinite values"),
    ([-1.0, 0.5], "holds 0.5 > 0: log-probabilities are at most 0"),
    ([], "has no tokens"),
])
def test_a_bad_log_probability_cell_is_named_by_its_file_and_row(tmp_path, capsys, cell, problem):
    def write(name, rows):
        (tmp_path / name).write_text("".join(json.dumps({"text": t, "lp": lp}) + "\n" for t, lp in rows))

    write("m.jsonl", [(f"member text {i}", [-1.0, -2.0]) for i in range(5)])
    write("n.jsonl", [(f"other text {i}", cell if i == 3 else [-1.5]) for i in range(5)])
    err = _one_line_exit_2(capsys, ["audit", "--train", str(tmp_path / "m.jsonl"), "--test", str(tmp_path / "n.jsonl"),
                                    "--text-column", "text", "--logprobs-column", "lp", "--out", str(tmp_path / "o"),
                                    "--check-inputs"])
    assert err == f"leakaudit: error: n.jsonl, row 4: --logprobs-column 'lp' {problem}" + err[err.index(problem) +
                                                                                             len(problem):], err


@pytest.mark.parametrize("given, named", [
    ({"random_state": "0"}, "random_state must be an integer of at least 0 (an int or a numpy integer), not a str"),
    ({"random_state": True}, "random_state must be an integer of at least 0 (an int or a numpy integer), not a bool"),
    ({"random_state": -1}, "random_state must be an integer of at least 0 (an int or a numpy integer), not a "
                           "negative number"),
    ({"seed": True}, "seed: must be an integer of at least 0 (an int or a numpy integer), not a bool; got True"),
    ({"seed": "0"}, "seed: must be an integer of at least 0 (an int or a numpy integer), not a str; got '0'"),
    ({"random_state": 1, "seed": True}, "seed must be an integer of at least 0 (an int or a numpy integer), not a "
                                        "bool"),
])
def test_a_seed_that_is_a_bool_or_a_text_is_refused_naming_the_argument(given, named):
    import leakaudit
    from leakaudit.exceptions import InvalidParameterError

    mem = pd.DataFrame({"a": np.arange(20.0), "y": [0, 1] * 10})
    with pytest.raises(InvalidParameterError) as err:
        leakaudit.audit(None, mem, mem.assign(a=mem["a"] + 100), label="y", predictions=(np.full((20, 2), .5),) * 2,
                        profile="smoke", **given)
    assert str(err.value) == named


def test_a_seed_in_a_config_file_is_checked_alike(tmp_path, capsys):
    (tmp_path / "c.toml").write_text('seed = "0"\n')
    err = _one_line_exit_2(capsys, ["audit", "--config", str(tmp_path / "c.toml"), "--out", str(tmp_path / "o")])
    assert "seed: must be an integer of at least 0 (an int or a numpy integer), not a str" in err


def test_numpy_integer_seeds_stay_accepted():
    from leakaudit.audit.config import check_seed, make_config

    assert make_config(seed=np.int64(3)).seed == 3 and make_config(seed=np.uint32(7)).seed == 7
    assert check_seed(np.int16(0), "random_state") == 0 and type(check_seed(np.int64(5))) is int


def test_sizes_are_written_in_the_unit_they_reach(monkeypatch):
    import leakaudit.engine._store as store
    from leakaudit._text import byte_size
    from leakaudit.engine import using_memory_budget
    from leakaudit.exceptions import InvalidParameterError

    assert [byte_size(n) for n in (0, 1000, 1536, 64 * 2**20, 1.8 * 2**30, 2**41)] == [
        "0 B", "1,000 B", "1.5 KiB", "64.0 MiB", "1.8 GiB", "2,048.0 GiB"]
    monkeypatch.setattr(store, "default_memory_budget", lambda: 1000)
    with using_memory_budget("1KB"), pytest.raises(InvalidParameterError) as err:
        store.check_memory(1536, "the masks would take", fix="use fewer models")
    assert str(err.value) == "the masks would take about 1.5 KiB, over the memory budget of 1.0 KiB; use fewer models"
