"""A record of the user's text table is named by its file and the line it starts on, counted as the CSV reader
counts lines: a quoted cell holding a line break, or a blank line, moves the lines after it."""

import gzip
import json

import numpy as np
import pandas as pd

from leakaudit.audit.inputs.data import row_lines
from leakaudit.audit.result.output import read_records_csv
from leakaudit.cli import main


def test_each_row_starts_on_the_line_the_csv_reader_finds_it(tmp_path):
    text = 'a,b,c\n1,"x\ny",0\n\n2,z,1\r\n3,"q""\r\nr\nw",0\n,,\n4,v,1\n'
    (tmp_path / "t.csv").write_text(text, newline="")
    with gzip.open(tmp_path / "t.csv.gz", "wt", newline="") as fh:
        fh.write(text)
    assert len(pd.read_csv(tmp_path / "t.csv")) == 5
    for name in ("t.csv", "t.csv.gz"):
        assert row_lines(tmp_path / name).tolist() == [2, 5, 6, 9, 10]
    (tmp_path / "t.tsv").write_text("a\tb\n1\t2\n3\t4\n")
    assert row_lines(tmp_path / "t.tsv").tolist() == [2, 3]
    assert row_lines(tmp_path / "t.parquet") is None  # no lines: its records keep their rows


def test_a_csv_audit_names_its_records_by_line(tmp_path, capsys):
    rng = np.random.default_rng(0)
    n = 30

    def table(k):
        return pd.DataFrame({"a": rng.normal(size=k), "note": rng.choice(["one", "two\nlines", "x"], k),
                             "label": rng.choice(["no", "yes"], k)})

    mem, non = table(n), table(n)
    mem.to_csv(tmp_path / "train.csv", index=False)
    non.to_csv(tmp_path / "test.csv", index=False)
    for part, df in (("ptrain", mem), ("ptest", non)):
        p = np.clip(rng.uniform(0.3, 0.7, n) + 0.25 * (df["label"] == "yes") * (part == "ptrain"), 0, 1)
        pd.DataFrame({"no": 1 - p, "yes": p}).to_csv(tmp_path / f"{part}.csv", index=False)
    out = tmp_path / "out"
    rc = main(["audit", "--train", str(tmp_path / "train.csv"), "--test", str(tmp_path / "test.csv"), "--label",
               "label", "--predictions-train", str(tmp_path / "ptrain.csv"), "--predictions-test",
               str(tmp_path / "ptest.csv"), "--out", str(out), "--profile", "smoke", "--quiet"])
    assert rc == 0, capsys.readouterr().err
    rec = read_records_csv(out / "records.csv")
    for df, name in ((mem, "train.csv"), (non, "test.csv")):
        # each record's line: the header's 1, then one a record plus one a line break in its note
        want = 2 + np.r_[0, np.cumsum(1 + df["note"].str.count("\n").to_numpy())[:-1]]
        got = rec[rec["source"] == name].set_index("row")["line"]
        assert got.to_dict() == {r + 1: int(w) for r, w in enumerate(want)}
    assert (mem["note"].str.contains("\n")).any() and (rec["line"] != rec["row"] + 1).any()
    html = (out / "report.html").read_text()
    top = rec.loc[rec["risk_rank"] == rec["risk_rank"].min()].iloc[0]
    assert f"train.csv, line {int(top['line'])}</td>" in html
    files = json.loads((out / "results.json").read_text())["data"]["files"]
    assert "records.csv's line gives each record's" in files["train.csv"]
