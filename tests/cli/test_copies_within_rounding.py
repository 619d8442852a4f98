"""Non-members that are the members within rounding (each number times 1 + 1e-9: written by another program, read
back through text) are copies, as exact ones are: refused when they are all the non-members, named in one warning
when some are (leakaudit.audit.inputs.duplicates)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from leakaudit.cli import main


def _write(d, mem, non):
    mem.to_csv(d / "mem.csv", index=False)
    non.to_csv(d / "non.csv", index=False)
    pd.DataFrame(np.full((len(mem), 2), 0.5), columns=["0", "1"]).to_csv(d / "p.csv", index=False)
    return ["audit", "--train", str(d / "mem.csv"), "--test", str(d / "non.csv"), "--label", "y", "--out",
            str(d / "out"), "--check-inputs", "--predictions-train", str(d / "p.csv"), "--predictions-test",
            str(d / "p.csv")]


def _members(n=60, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"a": rng.normal(size=n), "b": rng.choice(["u", "v"], n), "y": rng.integers(0, 2, n)})


def test_non_members_that_are_the_members_within_rounding_are_refused(tmp_path, capsys):
    mem = _members()
    assert main(_write(tmp_path, mem, mem.assign(a=mem["a"] * (1 + 1e-9)))) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith("leakaudit: error: every record of the non-members") and "60 of 60" in err


def test_some_copies_within_rounding_are_named_in_one_warning(tmp_path, capsys):
    mem = _members()
    non = pd.concat([_members(50, seed=1), mem.iloc[:10].assign(a=mem["a"].iloc[:10] * (1 - 1e-9))])
    assert main(_write(tmp_path, mem, non)) == 0
    warns = [ln for ln in capsys.readouterr().err.splitlines() if "DuplicateRecordsWarning" in ln]
    assert len(warns) == 1 and "10 of the 60 records" in warns[0]
    # a thousandth apart they are other records: audited without a warning
    non = pd.concat([_members(50, seed=1), mem.iloc[:10].assign(a=mem["a"].iloc[:10] * (1 + 1e-3))])
    assert main(_write(tmp_path, mem, non)) == 0
    assert "DuplicateRecordsWarning" not in capsys.readouterr().err
