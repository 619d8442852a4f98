"""``leakaudit report DIR`` reads the folder as untrusted input: each damage to results.json or records.csv is
refused in one line naming the file and the field (exit status 2, never a traceback); a folder without
records.csv is rendered from results.json alone, the report saying what is missing."""

import json
import os
import re
import shutil

import pandas as pd
import pytest

from leakaudit.audit import make_config, run_audit
from leakaudit.audit.result.results import rerender_report
from leakaudit.cli import main


@pytest.fixture(scope="module")
def audited(tmp_path_factory):
    """A real audit's output folder, made once for the module; each test damages a copy."""
    out = tmp_path_factory.mktemp("report-damage") / "run"
    run_audit(make_config(profile="smoke", n_members=120, n_nonmembers=120, epochs=2, seed=1), out, verbose=False)
    return out


@pytest.fixture
def folder(audited, tmp_path):
    return shutil.copytree(audited, tmp_path / "run")


def _results(d, edit):
    data = json.loads((d / "results.json").read_text())
    edit(data)
    (d / "results.json").write_text(json.dumps(data))


def _records(d, edit):
    df = pd.read_csv(d / "records.csv")
    df = edit(df)
    df.to_csv(d / "records.csv", index=False)


def _cell(column, row, value):
    def edit(df):
        df[column] = df[column].astype(object)
        df.loc[row, column] = value
        return df
    return edit


def _nested(depth):
    return json.loads("[" * depth + "]" * depth)


def _link(d, target, text, mode):
    target.write_text(text)
    target.chmod(mode)
    (d / "records.csv").unlink()
    os.symlink(target, d / "records.csv")


_PASSWD = "root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n"

# (damage, the file the message names, the words that name the field or the fault)
DAMAGES = {
    # the nine a tester found
    "records.csv empty": (lambda d: (d / "records.csv").write_text(""), "records.csv", "is empty"),
    "no is_member column": (lambda d: _records(d, lambda df: df.drop(columns="is_member")), "records.csv",
                            "no is_member column"),
    "text in is_member": (lambda d: _records(d, _cell("is_member", 3, "yes")), "records.csv",
                          "line 5, column is_member: 'yes' is not 0 or 1"),
    "text in a score": (lambda d: _records(d, _cell("score_lira", 0, "high")), "records.csv",
                        "line 2, column score_lira: 'high' is not a number"),
    "records.csv a link to a system file": (lambda d: _link(d, d.parent / "passwd", _PASSWD, 0o644), "records.csv",
                                            "no record_0based column"),
    "records.csv a link to a protected file": (lambda d: _link(d, d.parent / "shadow", _PASSWD, 0o600),
                                               "records.csv", "not readable by everyone"),
    "results.json nested 100,000 deep": (lambda d: (d / "results.json").write_text("[" * 100_000 + "]" * 100_000),
                                         "results.json", "maximum recursion depth exceeded"),
    "an integer beyond a float": (lambda d: _results(d, lambda r: r["membership"]["lira"].update(auc=10 ** 400)),
                                  "results.json", "membership.lira.auc: an integer of 401 digits"),
    "schema 2 without verdict": (lambda d: _results(d, lambda r: (r.update(schema_version=2), r.pop("verdict"))),
                                 "results.json", "verdict: Field required"),
    # more of the same kinds
    "results.json truncated": (lambda d: (d / "results.json").write_text((d / "results.json").read_text()[:5000]),
                               "results.json", "cannot be read as JSON"),
    "results.json a folder": (lambda d: ((d / "results.json").unlink(), (d / "results.json").mkdir()),
                              "results.json", "is a folder"),
    "results.json not UTF-8": (lambda d: (d / "results.json").write_bytes(b"\xff" + (d / "results.json").read_bytes()),
                               "results.json", "'utf-8' codec can't decode"),
    "nested deeper than any result": (lambda d: _results(d, lambda r: r["target"].update(extra=_nested(150))),
                                      "results.json", "target.extra.0.0.0.0.0.0 ...: nested deeper than 100 levels"),
    "schema_version as text": (lambda d: _results(d, lambda r: r.update(schema_version="4")), "results.json",
                               "schema_version: '4' is not a schema's number"),
    "a schema-3 list of records that is no list": (
        lambda d: _results(d, lambda r: (r.update(schema_version=3), r["dtp"].update(records_above=7))),
        "results.json", "dtp.records_above: "),
    "a confidence above 1": (lambda d: _results(d, lambda r: r["verdict"].update(check_confidence=5)),
                             "results.json", "verdict.check_confidence: Value error, a confidence lies between"),
    "an empty is_member": (lambda d: _records(d, _cell("is_member", 2, None)), "records.csv",
                           "line 4, column is_member: an empty cell is not 0 or 1"),
    "is_member 2": (lambda d: _records(d, _cell("is_member", 0, 2)), "records.csv", "column is_member: 2 is not"),
    "text in risk_rank": (lambda d: _records(d, _cell("risk_rank", 1, "x")), "records.csv",
                          "line 3, column risk_rank: 'x' is not a number"),
    "no record column": (lambda d: _records(d, lambda df: df.drop(columns=["record_0based", "source"])), "records.csv",
                         "no record_0based column"),
    "records.csv rows of another width": (lambda d: (d / "records.csv").write_text(
        (d / "records.csv").read_text() + "1,2\n" + "x," * 80 + "\n"), "records.csv", "Expected 30 fields"),
    "records.csv not UTF-8": (lambda d: (d / "records.csv").write_bytes(
        (d / "records.csv").read_bytes().replace(b"Private", b"Priv\xffate")), "records.csv", "UnicodeDecodeError"),
}


@pytest.mark.parametrize("damage", DAMAGES)
def test_a_damaged_folder_is_refused_in_one_line_naming_the_file_and_the_field(folder, damage, capsys):
    make, name, words = DAMAGES[damage]
    make(folder)
    report = (folder / "report.html").read_text()
    assert main(["report", str(folder)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert len(err.strip().splitlines()) == 1, err
    assert re.match(r"leakaudit: error: .*" + re.escape(str(folder / name)), err), err
    assert words in err, err
    assert (folder / "report.html").read_text() == report  # nothing written


def test_a_display_name_that_is_bad_mathtext_is_drawn_as_written(folder, capsys):
    """An attack's ``display`` (results.json) is a name, never matplotlib mathtext: ``$\\foo$`` (which mathtext
    cannot parse) is drawn as written in the plots' legends and axes."""
    _results(folder, lambda r: r["membership"]["lira"].update(display=r"$\foo$ attack"))
    assert main(["report", str(folder)]) == 0, capsys.readouterr().err
    svgs = re.findall(r"<svg.*?</svg>", (folder / "report.html").read_text(), flags=re.S)
    drawn = [t for svg in svgs for t in re.findall(r">([^<]*foo[^<]*)<", svg)]
    assert r"$\foo$ attack" in drawn  # the ROC plot's legend
    assert any(t.startswith(r"$\foo$ attack score") for t in drawn)  # the PDTP scatter's axis


def test_without_records_the_report_renders_from_results_alone_and_says_what_is_missing(folder, audited, capsys):
    (folder / "records.csv").unlink()
    (folder / "report.html").unlink()
    assert rerender_report(str(folder)) == folder / "report.html"
    html = (folder / "report.html").read_text()
    assert "<svg" not in html and 'id="records-table"' not in html
    assert re.search(r"<b>records.csv</b>: missing, so what only it holds is not shown: the ROC curves, the PDTP plots "
                     r"and the riskiest records", html)
    full = (audited / "report.html").read_text()
    assert "<svg" in full and "records.csv</b>: missing" not in full  # with records.csv: plots, and no such line
    verdict = json.loads((audited / "results.json").read_text())["verdict"]["headline"]
    assert verdict.split(":")[0] in html
    assert main(["report", str(folder)]) == 0 and capsys.readouterr().out.strip() == f"wrote {folder / 'report.html'}"
