"""The page's profiles (``_page.PAGE``) and the one command that makes docs/reproduction.md
(``leakaudit reproduce --all --out DIR --gather PAGE``): every reproduction at its page profile, runs stored at the
reproduction's current experiment version kept, a run made at another version (or before versions) run again."""

import json
from pathlib import Path

import pytest

from leakaudit import reproduce
from leakaudit.cli import main
from leakaudit.exceptions import InvalidParameterError
from leakaudit.reproduce import _page
from leakaudit.reproduce import _registry as reg

STORED = Path(__file__).resolve().parents[2] / "docs" / "reproduction"


def test_every_reproduction_not_at_full_says_why():
    reproduce.load_all()
    assert set(_page.PAGE) <= set(reg.names()), "a page entry names no reproduction"
    for name in reg.names():
        entry = _page.page_entry(name)
        assert entry.profile in reg.PROFILES and entry.profile != "smoke"
        assert (entry.why is None) == (entry.profile == "full"), name
        if entry.why:
            assert "hour" in entry.why, f"{name}: the reason must say what full costs"


def test_stored_runs_are_at_their_page_profile():
    reproduce.load_all()
    for name in reg.names():
        res = json.loads((STORED / f"{name}.json").read_text())
        assert res["profile"] == _page.page_entry(name).profile, name


@pytest.mark.slow  # about 15 s
def test_run_all_keeps_runs_of_this_version_and_reruns_the_others(monkeypatch, tmp_path):
    reproduce.load_all()
    calls = []
    real_run = reg.run

    def counting_run(name, **kw):
        calls.append((name, kw["profile"]))
        return real_run(name, **kw)

    monkeypatch.setattr(reg, "run", counting_run)
    # the page profile is smoke here, to keep the test short
    monkeypatch.setattr(reg, "page_entry", lambda name: _page.PageEntry("smoke"))
    only = ["izzo-fig1", "yeom-fig1"]
    assert reg.run_all(tmp_path, only=only) == only
    assert calls == [("izzo-fig1", "smoke"), ("yeom-fig1", "smoke")]
    res = json.loads((tmp_path / "izzo-fig1.json").read_text())
    assert res["version"] == reg.get("izzo-fig1").version and res["profile"] == "smoke"
    assert res["fingerprint"] == reg.numbers_digest("izzo-fig1", res["rows"])
    # a second call keeps both
    seen = []
    assert reg.run_all(tmp_path, only=only, progress=lambda n, p, r: seen.append((n, r is None))) == []
    assert seen == [("izzo-fig1", False), ("yeom-fig1", False)]
    # a run stored at another version, or before versions were recorded, is run again
    res["version"] = 0
    (tmp_path / "izzo-fig1.json").write_text(json.dumps(res))
    other = json.loads((tmp_path / "yeom-fig1.json").read_text())
    del other["version"]
    (tmp_path / "yeom-fig1.json").write_text(json.dumps(other))
    assert reg.run_all(tmp_path, only=only) == only
    # a run at another seed, or a truncated file, is not this page's run either
    (tmp_path / "izzo-fig1.json").write_text("{")
    assert reg.run_all(tmp_path, only=only) == ["izzo-fig1"]
    assert reg.run_all(tmp_path, only=only, random_state=1) == only


def test_gather_rewrites_each_section_as_on_the_page(tmp_path):
    reproduce.load_all()
    # a stored run from before classification and versions: its NAME.md lacks the reference column
    res = json.loads((STORED / "izzo-fig1.json").read_text())
    res.pop("version", None)
    for r in res["rows"]:
        r.pop("reference", None)
        r.pop("quantity_kind", None)
    (tmp_path / "izzo-fig1.json").write_text(json.dumps(res))
    (tmp_path / "izzo-fig1.md").write_text("| quantity | paper | ours |\n")
    page = reg.gather(tmp_path, write_sections=True)
    section = (tmp_path / "izzo-fig1.md").read_text()
    # the page links the section's figures under the runs' folder, the section beside them
    assert "| reference |" in section and section.replace("](izzo-fig1.png)", f"]({tmp_path.name}/izzo-fig1.png)") in page
    assert "experiment version not recorded" in section
    assert (tmp_path / "izzo-fig1.png").read_bytes().startswith(b"\x89PNG")


def test_a_reduced_section_says_what_full_would_cost():
    reproduce.load_all()
    res = json.loads((STORED / "yeom-table1.json").read_text())
    head = reg.to_markdown(res).split("\n")[4]
    assert head.startswith("Profile `reduced` (not `full`: ") and "CPU" in head


@pytest.mark.parametrize("argv, says", [
    (["reproduce", "izzo-fig1", "--all"], "drop the name 'izzo-fig1'"),
    (["reproduce", "--all", "--profile", "full"], "drop --profile"),
    (["reproduce", "izzo-fig1", "--jobs", "2"], "--jobs runs reproductions side by side and needs --all"),
    (["reproduce", "--all", "--jobs", "0"], "--jobs must be at least 1; got 0"),
])
def test_all_refuses_a_name_or_a_profile_and_jobs_needs_all(argv, says, capsys, tmp_path):
    assert main([*argv, "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and says in err
    assert not list(tmp_path.iterdir())


def test_all_then_gather_writes_the_page(monkeypatch, capsys, tmp_path):
    reproduce.load_all()
    monkeypatch.setattr(reg, "names", lambda: ["izzo-fig1"])
    monkeypatch.setattr(reg, "page_entry", lambda name: _page.PageEntry("smoke"))
    page = tmp_path / "page.md"
    assert main(["reproduce", "--all", "--out", str(tmp_path / "runs"), "--gather", str(page)]) == 0
    out = capsys.readouterr().out
    assert "izzo-fig1: running at smoke" in out and f"wrote {page}" in out
    assert "## izzo-fig1" in page.read_text()
    assert main(["reproduce", "--all", "--out", str(tmp_path / "runs")]) == 0
    assert "(kept: stored at the current experiment version)" in capsys.readouterr().out


def test_run_all_side_by_side_gives_the_same_runs_longest_first(monkeypatch, tmp_path):
    reproduce.load_all()
    monkeypatch.setattr(reg, "page_entry", lambda name: _page.PageEntry("smoke"))
    only = ["izzo-fig1", "yeom-fig1"]
    one, two = tmp_path / "one", tmp_path / "two"
    assert reg.run_all(one, only=only) == only
    # stale runs (another version) whose seconds say yeom-fig1 is the longer: it starts first
    for name, seconds in (("izzo-fig1", 1.0), ("yeom-fig1", 100.0)):
        res = json.loads((one / f"{name}.json").read_text())
        res["version"], res["seconds"] = 0, seconds
        two.mkdir(exist_ok=True)
        (two / f"{name}.json").write_text(json.dumps(res))
    seen = []
    assert sorted(reg.run_all(two, only=only, jobs=2, progress=lambda n, p, r: seen.append((n, r is None)))) == only
    assert seen[:2] == [("yeom-fig1", True), ("izzo-fig1", True)] and sorted(seen[2:]) == [
        ("izzo-fig1", False), ("yeom-fig1", False)]
    for name in only:
        a, b = (json.loads((d / f"{name}.json").read_text()) for d in (one, two))
        assert [r["ours"] for r in a["rows"]] == [r["ours"] for r in b["rows"]]
        assert b["version"] == a["version"] == reg.get(name).version and b["fingerprint"] == a["fingerprint"]
    # all stored at the current version now: nothing runs
    assert reg.run_all(two, only=only, jobs=2) == []


@pytest.mark.parametrize("jobs", [0, -1, 1.5, True, "2"])
def test_run_all_refuses_a_bad_jobs(jobs, tmp_path):
    with pytest.raises(InvalidParameterError, match="jobs must be a whole number"):
        reg.run_all(tmp_path, only=["izzo-fig1"], jobs=jobs)


def test_gather_says_which_sections_the_current_version_made(tmp_path):
    reproduce.load_all()
    for name in ("izzo-fig1", "yeom-fig1"):
        res = json.loads((STORED / f"{name}.json").read_text())
        (tmp_path / f"{name}.json").write_text(json.dumps(res))
    page = reg.gather(tmp_path)
    assert "Made at the current experiment version: 2 of 2 sections" in page and "every section gives" in page
    assert page.count("experiment version 1 (current), smoke fingerprint ") == 2
    res["version"] = 0
    (tmp_path / "yeom-fig1.json").write_text(json.dumps(res))
    page = reg.gather(tmp_path)
    assert "1 of 2 sections" in page and "to be run again: yeom-fig1." in page
    assert "experiment version 0, stale (now 1; " in page


def test_a_run_records_its_libraries_and_threads_and_its_heading_says_them(monkeypatch, tmp_path):
    reproduce.load_all()
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    res = reg.run("izzo-fig1", profile="smoke", out=tmp_path)
    env = json.loads((tmp_path / "izzo-fig1.json").read_text())["environment"]
    assert env == res["environment"]
    import numpy
    import sklearn

    assert env["packages"]["numpy"] == numpy.__version__ and env["packages"]["scikit-learn"] == sklearn.__version__
    assert env["OMP_NUM_THREADS"] == "1" and env["cpus"] >= 1
    assert all(isinstance(n, int) and n >= 1 for n in env["thread_pools"].values())
    md = (tmp_path / "izzo-fig1.md").read_text()
    assert f"numpy {numpy.__version__}" in md and "threads: OMP_NUM_THREADS=1" in md
    # a run stored before the record: its heading says so instead of guessing
    del res["environment"]
    assert "Libraries and threads not recorded." in reg.to_markdown(res)
