"""Ctrl-C in every subcommand (issue 28): one line on stderr saying what ran and what was written, exit 130.

Each command runs in its own process group (as under a terminal, which sends SIGINT to the whole group) and gets
SIGINT once a marker shows it is working: for ``membership``, the first file in its engine cache; for the others,
a marker file touched by a stand-in for the library function the command calls (a wrapper script patches it in
before running ``leakaudit.cli.main``). The stand-in sleeps where the real work would run, so the test does not
depend on how fast the machine is. The commands run side by side: the whole test takes a few seconds.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

# argv: MARKER TARGET MODE ARGS...; TARGET "module:attr" is replaced by a function that touches MARKER, then
# sleeps (MODE "sleep") or calls the original (MODE "call"); TARGET "-" patches nothing
_RUNNER = r"""
import importlib, sys, time
from pathlib import Path
marker, target, mode, args = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
if target != "-":
    mod_name, attr = target.split(":")
    owner = importlib.import_module(mod_name)
    *path, name = attr.split(".")
    for p in path:
        owner = getattr(owner, p)
    original = getattr(owner, name)
    def stand_in(*a, **k):
        Path(marker).touch()
        if mode == "sleep":
            time.sleep(60)
        return original(*a, **k)
    setattr(owner, name, stand_in)
from leakaudit.cli import main
sys.exit(main(args))
"""


def _start(tmp: Path, target: str, mode: str, *args: str):
    marker = tmp / "started"
    p = subprocess.Popen([sys.executable, "-c", _RUNNER, str(marker), target, mode, *args],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
                         env={**os.environ, "PYTHONWARNINGS": "ignore"})
    return p, marker


def _interrupt_when(procs: dict, ready, timeout: float = 120.0) -> dict:
    """SIGINT each process's group once ``ready(name)`` holds; return {name: (returncode, stderr)}."""
    t0, sent = time.time(), set()
    while len(sent) < len(procs) and time.time() - t0 < timeout:
        for name, p in procs.items():
            if name not in sent and (ready(name) or p.poll() is not None):
                if p.poll() is None:
                    os.killpg(p.pid, signal.SIGINT)
                sent.add(name)
        time.sleep(0.05)
    results = {}
    for name, p in procs.items():
        try:
            _, err = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            _, err = p.communicate()
        results[name] = (p.returncode, err)
    return results


def _assert_one_line_130(name, rc, err, *needles):
    assert rc == 130, (name, rc, err[-3000:])
    assert "Traceback" not in err and err.count("\n") == 1, (name, err[-3000:])
    assert err.startswith(f"leakaudit: {name} interrupted (Ctrl-C) while "), (name, err)
    for n in needles:
        assert n in err, (name, n, err)


@pytest.mark.skipif(sys.platform == "win32", reason="process groups and SIGINT are POSIX")
def test_membership_ctrl_c_names_the_step_and_the_engine_cache(tmp_path):
    """Real work: SIGINT while the reference models are being trained and cached."""
    cache, out = tmp_path / "cache", tmp_path / "out"
    p, _ = _start(tmp_path, "-", "call", "membership", "--dataset", "purchase-like", "--model", "logreg",
                  "--attacks", "lira,shadow", "--n-members", "200", "--n-nonmembers", "200", "--n-population", "0",
                  "--n-reference", "256", "--n-boot", "10", "--out", str(out), "--cache-dir", str(cache))
    (rc, err), = _interrupt_when({"membership": p}, lambda _: any(f.is_file() for f in cache.rglob("*"))).values()
    _assert_one_line_130("membership", rc, err, "running the attacks", f"engine cache {cache}",
                         f"not written: {out / 'membership.json'}")
    assert not (out / "membership.json").exists() and not (out / "records.csv").exists()


@pytest.mark.skipif(sys.platform == "win32", reason="process groups and SIGINT are POSIX")
def test_every_other_subcommand_stops_with_one_line_and_130(tmp_path):
    dirs = {n: tmp_path / n for n in ("dtp pdtp", "mip audit", "property", "attribute", "reproduce yeom-fig1")}
    for d in dirs.values():
        d.mkdir()
    out = {n: d / "out" for n, d in dirs.items()}
    commands = {
        "dtp pdtp": ("leakaudit.dtp.pdtp:pdtp", "sleep",
                     "dtp", "pdtp", "--data", "purchase-like", "--model", "logreg", "--rows", "100",
                     "--out", str(out["dtp pdtp"])),
        "mip audit": ("leakaudit.mip.audit:simulate_bayes_attacker", "sleep",
                      "mip", "audit", "--method", "simulate", "--scale", "1"),
        "property": ("leakaudit.cli.property:run_property_audit", "sleep",
                     "property", "--dataset", "synthetic", "--t0", "0.2", "--t1", "0.5", "--out", str(out["property"])),
        # the real scikit-learn MLP, interrupted once an epoch has run: it catches KeyboardInterrupt and returns
        # the half-trained model; the command must still stop, not write results from that model (exit 0 before)
        "attribute": ("sklearn.neural_network:MLPClassifier._update_no_improvement_count", "call",
                      "attribute", "--dataset", "adult", "--attribute", "sex", "--model", "mlp",
                      "--out", str(out["attribute"])),
        "reproduce yeom-fig1": ("leakaudit.reproduce._registry:get", "sleep", "reproduce", "yeom-fig1",
                                "--profile", "smoke", "--out", str(out["reproduce yeom-fig1"])),
    }
    procs, markers = {}, {}
    for name, (target, mode, *args) in commands.items():
        procs[name], markers[name] = _start(dirs[name], target, mode, *args)
    res = _interrupt_when(procs, lambda n: markers[n].exists())
    _assert_one_line_130("dtp pdtp", *res["dtp pdtp"], "measuring PDTP", f"not written: {out['dtp pdtp']}")
    _assert_one_line_130("mip audit", *res["mip audit"], "nothing was written")
    _assert_one_line_130("property", *res["property"], "training shadow and target models",
                         f"not written: {out['property'] / 'property.json'}")
    _assert_one_line_130("attribute", *res["attribute"], "inferring sex",
                         f"not written: {out['attribute'] / 'attribute.json'}")
    _assert_one_line_130("reproduce yeom-fig1", *res["reproduce yeom-fig1"], "running the reproduction",
                         str(out["reproduce yeom-fig1"] / "yeom-fig1.json"))
    for o in out.values():
        assert not o.exists() or not any(o.iterdir())


def test_ctrl_c_outside_commands_and_in_commands_without_a_message(monkeypatch, capsys):
    """In process: a KeyboardInterrupt with no description still gives one generic line and 130."""
    from leakaudit import cli

    def boom():
        raise KeyboardInterrupt

    monkeypatch.setattr("leakaudit.data.dataset_status", boom)
    assert cli.main(["datasets"]) == 130
    err = capsys.readouterr().err
    assert err == "leakaudit: datasets interrupted (Ctrl-C) while checking the dataset files; nothing was written\n"
    monkeypatch.setattr(cli, "app", lambda **kwargs: boom())  # Ctrl-C before any command runs
    assert cli.main(["datasets"]) == 130
    assert capsys.readouterr().err == "leakaudit: interrupted (Ctrl-C) while starting; nothing was run\n"
