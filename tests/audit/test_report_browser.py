"""The report as a person sees it: opened in a real headless Chromium (Debian's ``chromium``).

Two reports: the demo's, and a user's own model (a scikit-learn forest saved with skops, on scikit-learn's breast
cancer table with text class labels). Screenshots are kept under ``test-artifacts/``.
"""

import html as _html
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from leakaudit.audit import make_config, run_audit

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
PLOTS = ("plot-roc", "plot-pdtp-hist", "plot-pdtp-scatter")

pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(CHROMIUM is None, reason="chromium not installed (.ci/run installs it with apt)")]


@pytest.fixture(scope="module")
def demo_report(tmp_path_factory):
    out = tmp_path_factory.mktemp("browser") / "run"
    run_audit(make_config(profile="smoke", n_members=120, n_nonmembers=120, epochs=2, seed=1), out, verbose=False)
    return out / "report.html"


@pytest.fixture(scope="module")
def user_report(tmp_path_factory):
    """A data owner's forest: fitted on a DataFrame, string class labels, saved with skops.io.dump."""
    import skops.io as sio
    from sklearn.datasets import load_breast_cancer
    from sklearn.ensemble import RandomForestClassifier

    d = tmp_path_factory.mktemp("user")
    df = load_breast_cancer(as_frame=True).frame
    df["target"] = np.where(df["target"] == 1, "benign", "malignant")
    df["size_group"] = np.where(df["mean radius"] < 13, "small", "large")
    perm = np.random.default_rng(0).permutation(len(df))
    mem, non = df.iloc[perm[:284]], df.iloc[perm[284:]]
    mem.to_csv(d / "members.csv", index=False)
    non.to_csv(d / "nonmembers.csv", index=False)
    rf = RandomForestClassifier(n_estimators=20, random_state=0)
    rf.fit(mem.drop(columns=["target", "size_group"]), mem["target"])
    sio.dump(rf, d / "model.skops")
    run_audit(make_config(train=d / "members.csv", test=d / "nonmembers.csv", label="target", model=d / "model.skops",
                          sensitive=["size_group"], profile="smoke"), d / "out", verbose=False)
    return d / "out" / "report.html"


def _chromium(args, tmp_path, timeout=120):
    return subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={tmp_path / 'profile'}", *args], check=False,
                          capture_output=True, text=True, timeout=timeout)


def _visible_text(dom: str) -> str:
    dom = re.sub(r"<style.*?</style>|<svg.*?</svg>|<title>.*?</title>", " ", dom, flags=re.DOTALL)
    return re.sub(r"\s+", " ", _html.unescape(re.sub(r"<[^>]+>", " ", dom)))


def _check_page(report: Path, tmp_path, *, values: list[str], model: str) -> str:
    p = _chromium(["--enable-logging=stderr", "--v=0", "--dump-dom", report.as_uri()], tmp_path)
    assert p.returncode == 0, p.stderr[-2000:]
    dom = p.stdout
    assert not re.search(r"CONSOLE\(|Uncaught|Failed to load resource", p.stderr), p.stderr[-2000:]
    assert re.search(r'id="verdict"', dom) and "Verdict:" in dom
    # the checks table, with a status in every row
    checks = re.search(r'<table id="checks-table">(.*?)</table>', dom, re.DOTALL)
    assert checks and len(re.findall(r'<td class="status ', checks.group(1))) >= 4
    # the records table, with the records' own column values, file and row
    records = re.search(r'<table id="records-table">(.*?)</table>', dom, re.DOTALL)
    assert records, "records table missing"
    head = re.search(r"<tr>(.*?)</tr>", records.group(1), re.DOTALL).group(1)
    for col in ["rank among members", "record", "its values"]:
        assert f"<th>{col}</th>" in head, col
    first = re.findall(r"<tr[^>]*>(.*?)</tr>", records.group(1), re.DOTALL)[1]
    for col in values:
        assert f"{col}: " in first, col
    assert re.search(r"<td>[^<]+, (row|line) \d+</td>", first)  # its file and row (bundled) or line (a user's CSV)
    assert len(re.findall(r"<tr", records.group(1))) >= 10
    for plot in PLOTS:
        m = re.search(rf'id="{plot}"[^>]*>\s*<svg[^>]*width="([\d.]+)pt"[^>]*height="([\d.]+)pt"', dom)
        assert m and float(m.group(1)) > 100 and float(m.group(2)) > 100, f"{plot} missing or empty"
    text = _visible_text(dom)
    assert model in text
    for bad in (r"\bNone\b", r"\bnan\b", r"\bNaN\b", r"\{'", r"\{\""):
        hit = re.search(rf".{{0,80}}{bad}.{{0,80}}", text)
        assert hit is None, f"visible text shows {bad}: {hit.group(0) if hit else ''}"
    # offline: no external scripts, stylesheets or fonts
    assert not re.search(r'<(script|link)[^>]+(src|href)="https?://', dom)
    return text


def _screenshot(report: Path, tmp_path, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    shot = ARTIFACTS / name
    p = _chromium(["--window-size=1100,2400", f"--screenshot={shot}", report.as_uri()], tmp_path)
    assert p.returncode == 0, p.stderr[-2000:]
    assert shot.stat().st_size > 20_000  # a rendered page, not a blank one


def test_demo_report_shows_verdict_checks_records_and_plots(demo_report, tmp_path):
    text = _check_page(demo_report, tmp_path, values=["income", "sex", "race", "marital_status"], model="MLP")
    assert "demo network" in text


def test_demo_report_screenshot_is_kept(demo_report, tmp_path):
    _screenshot(demo_report, tmp_path, "report.png")


def test_user_model_report_shows_its_own_model_and_records(user_report, tmp_path):
    text = _check_page(user_report, tmp_path, values=["target", "size_group", "mean radius"],
                       model="RandomForestClassifier")
    assert re.search(r"\.csv, line \d+", text), "a user's CSV record is named by the line it starts on"
    # its own model and retraining recipe, not the demo's settings
    assert "members.csv" in text and "RandomForestClassifier(n_estimators=20" in text
    for demo_only in ("demo network", "hidden", "tanh", "Adam", "dataset"):
        assert demo_only not in text, demo_only


def test_user_model_report_screenshot_is_kept(user_report, tmp_path):
    _screenshot(user_report, tmp_path, "report-user-model.png")


_MEASURE = """<script>
window.addEventListener('load', () => {
  const out = [];
  document.querySelectorAll('table').forEach((t, i) => {
    const box = t.parentElement;
    out.push({table: t.id || ('table ' + i), width: Math.ceil(t.getBoundingClientRect().width),
              room: box.clientWidth, overflow: box.scrollWidth > box.clientWidth + 1});
  });
  out.push({table: 'page', width: document.documentElement.scrollWidth, room: window.innerWidth,
            overflow: document.documentElement.scrollWidth > window.innerWidth});
  const pre = document.createElement('pre'); pre.id = 'measured'; pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>"""


@pytest.mark.parametrize("width", [1100, 1280])
def test_every_table_fits_the_page(demo_report, user_report, tmp_path, width):
    """No table runs past the page (or needs its scroll bar) in a laptop-sized window: the riskiest records show
    each record's values in one wrapping column, not a column each."""
    import json

    for report in (demo_report, user_report):
        page = tmp_path / f"measure-{report.parent.name}.html"
        page.write_text(report.read_text(encoding="utf-8").replace("</body>", _MEASURE + "</body>"), encoding="utf-8")
        p = _chromium([f"--window-size={width},900", "--virtual-time-budget=3000", "--dump-dom", page.as_uri()],
                      tmp_path)
        m = re.search(r'<pre id="measured">(.*?)</pre>', p.stdout, re.DOTALL)
        assert m, p.stderr[-2000:]
        measured = json.loads(_html.unescape(m.group(1)))
        assert any(t["table"] == "records-table" for t in measured)
        wide = [t for t in measured if t["overflow"]]
        assert not wide, f"{report}: {wide}"


#: a membership AUC check's numbers for each status, against 0.6
_NUMBERS = {"exceeded": (0.7, [0.65, 0.75]), "shown below": (0.52, [0.48, 0.56]),
            "undecided": (0.58, [0.55, 0.62]), "not measurable": (None, None)}


@pytest.mark.parametrize("outcome,statuses", [
    ("do not publish", ["exceeded", "shown below", "undecided", "not measurable"]),
    ("inconclusive", ["shown below", "undecided", "shown below", "not measurable"]),
    ("publish", ["shown below"] * 4)])
def test_each_outcome_reads_as_its_checks_say(demo_report, tmp_path, outcome, statuses):
    """The demo's report re-decided from checks of known status, opened in Chromium: the verdict box says the
    outcome, the counts under it add up, every check's row says its status in its own style, and a screenshot of
    each outcome is kept."""
    import json

    import pandas as pd

    from leakaudit.audit.result.checks import STATUS_COLOURS, Check
    from leakaudit.audit.result.results import read_result
    from leakaudit.audit.result.verdict import decide
    from leakaudit.report import render_report

    res = json.loads((demo_report.parent / "results.json").read_text())
    rec = pd.read_csv(demo_report.parent / "records.csv")
    aucs = [c for c in res["verdict"]["checks"] if c["analysis"] == "membership" and c["id"].endswith(".auc")][:4]
    checks = [Check(**{**c, "status": st, "value": _NUMBERS[st][0], "interval": _NUMBERS[st][1], "threshold": 0.6,
                       "describes": "model", "fix": "give more records" if st in ("undecided", "not measurable")
                       else ""}) for c, st in zip(aucs, statuses)]
    verdict = decide(make_config(), checks)
    assert verdict.outcome == outcome
    res["verdict"] = {k: v for k, v in json.loads(verdict.to_json()).items() if k not in ("schema_version", "type")}
    page = tmp_path / f"{outcome.replace(' ', '-')}.html"
    page.write_text(render_report(read_result(res), rec))
    p = _chromium(["--dump-dom", page.as_uri()], tmp_path)
    assert p.returncode == 0, p.stderr[-2000:]
    dom = p.stdout
    assert f"Verdict: {outcome}" in dom
    said = ", ".join(f"{statuses.count(st)} {st}" for st in STATUS_COLOURS)
    assert f"Checks: {said}." in re.sub(r"\s+([,.])", r"\1", _visible_text(dom))
    for c in checks:
        css = c.status.replace(" ", "-")
        assert re.search(rf'{re.escape(_html.escape(c.name))}</td>\s*<td class="status {css}">{c.status}</td>', dom)
        assert f".status.{css} {{ color: {STATUS_COLOURS[c.status]}; }}" in dom
    _screenshot(page, tmp_path, f"report-{outcome.replace(' ', '-')}.png")
