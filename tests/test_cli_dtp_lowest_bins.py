"""`leakaudit dtp pdtp --lowest-bins`: the paper's binning against leaving out moves between the two lowest bins."""

import json

import numpy as np

from leakaudit.cli import main


def test_lowest_bins_ignore_removes_only_the_ln3_steps(tmp_path, capsys):
    # NB on 1,000 Adult records (the case): some records sit at exactly ln 3 under the paper's binning
    runs = {}
    for mode in ("keep", "ignore"):
        out = tmp_path / f"{mode}.json"
        assert main(["dtp", "pdtp", "--data", "adult", "--model", "nb", "--lowest-bins", mode, "--out", str(out)]) == 0
        runs[mode] = np.asarray(json.loads(out.read_text())["values"])
        text = capsys.readouterr().out
        assert ("moves between the two lowest bins ignored" in text) == (mode == "ignore")
    keep, ignore = runs["keep"], runs["ignore"]
    assert len(keep) == len(ignore) == 1000
    assert np.all(ignore <= keep + 1e-12)  # leaving classes out of a max can only lower it
    at_ln3 = np.isclose(keep, np.log(3))
    dropped = ignore < keep - 0.5
    # what goes is ln 3 steps, most of them; a record at ln 3 whose output moves from the lowest bin to the
    # third (0.015 to 0.045, also a ratio of 3) keeps it
    assert dropped.sum() >= 5 and np.all(at_ln3[dropped])
    assert np.allclose(ignore[keep < 0.5], keep[keep < 0.5], atol=0.02)  # small values barely move


def test_lowest_bins_bad_values_name_the_flag(capsys):
    assert main(["dtp", "pdtp", "--lowest-bins", "count"]) == 2
    err = capsys.readouterr().err
    assert "--lowest-bins must be keep or ignore; got 'count'" in err and err.count("\n") == 1
    assert main(["dtp", "pdtp", "--lowest-bins", "ignore", "--bin-width", "none"]) == 2
    assert "--lowest-bins ignore needs binned outputs" in capsys.readouterr().err
