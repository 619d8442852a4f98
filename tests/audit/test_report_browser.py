"""The report as a person sees it: opened in a real headless Chromium (Debian's ``chromium``)."""

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from leakaudit.audit import make_config, run_audit

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"

pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(CHROMIUM is None, reason="chromium not installed (.ci/run installs it with apt)")]


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    out = tmp_path_factory.mktemp("browser") / "run"
    run_audit(make_config(profile="smoke", n_members=120, n_nonmembers=120, epochs=2, seed=1), out, verbose=False)
    return out / "report.html"


def _chromium(args, tmp_path, timeout=120):
    return subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={tmp_path / 'profile'}", *args],
                          capture_output=True, text=True, timeout=timeout)


def test_report_loads_without_console_errors_and_shows_verdict_and_plots(report, tmp_path):
    p = _chromium(["--enable-logging=stderr", "--v=0", "--dump-dom", report.as_uri()], tmp_path)
    assert p.returncode == 0, p.stderr[-2000:]
    dom = p.stdout
    assert re.search(r'id="verdict"', dom) and "Verdict:" in dom
    assert not re.search(r"CONSOLE\(|Uncaught|Failed to load resource", p.stderr), p.stderr[-2000:]
    for plot in ("plot-roc", "plot-pdtp-hist", "plot-pdtp-scatter"):
        m = re.search(rf'id="{plot}"[^>]*>\s*<svg[^>]*width="([\d.]+)pt"[^>]*height="([\d.]+)pt"', dom)
        assert m and float(m.group(1)) > 100 and float(m.group(2)) > 100, f"{plot} missing or empty"
    # offline: no external scripts, stylesheets or fonts
    assert not re.search(r'<(script|link)[^>]+(src|href)="https?://', dom)


def test_report_screenshot_is_kept(report, tmp_path):
    ARTIFACTS.mkdir(exist_ok=True)
    shot = ARTIFACTS / "report.png"
    p = _chromium(["--window-size=1100,2400", f"--screenshot={shot}", report.as_uri()], tmp_path)
    assert p.returncode == 0, p.stderr[-2000:]
    assert shot.stat().st_size > 20_000  # a rendered page, not a blank one
