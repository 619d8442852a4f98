"""Fuzz every subcommand beside ``audit`` (issue 51): generated flags and files, each case accepted with a right
answer where one can be computed, or refused in one line with exit status 2; never a traceback.

Per command: ``mip calibrate`` (the noise constant against Izzo et al.'s Corollary 11 formula), ``mip audit`` (the
reported eta is the best accuracy less 1/2), ``dtp pdtp`` (as many PDTP values as records asked for, each non-negative
or not measurable), ``reproduce --gather`` (the page names every stored run and is left as it was when refused), the
language-model scores-only path of ``audit`` (the texts counted as the files hold them), and ``membership``,
``attribute``, ``property``, ``dp-audit`` (their flags; an accepted run's rates lie in [0, 1]). The counts of
accepted and refused cases per command are printed at the end of the session (``conftest.py``).
"""

from __future__ import annotations

import json
import math
import shutil
import tempfile
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
from hypothesis import strategies as st

from leakaudit.cli import main

from ._fuzz import BUDGET_PARAMS, OUTCOMES, run_fuzz

ROOT = Path(__file__).resolve().parents[2]

# cases per command: the default suite runs in seconds; the slow one runs >= 10,000 cases in all
N = {
    "mip.calibrate": {"default": 40, "long": 4000},
    "mip.audit": {"default": 10, "long": 1000},
    "dtp.pdtp": {"default": 8, "long": 1000},
    "reproduce.gather": {"default": 10, "long": 2000},
    "lm.scores": {"default": 10, "long": 2000},
    "membership": {"default": 3, "long": 60},
    "attribute": {"default": 3, "long": 60},
    "property": {"default": 3, "long": 60},
    "dp_audit": {"default": 3, "long": 60},
}


def _run(argv: list[str], capsys, stats: Counter, case) -> str | None:
    """Run one case: its stdout when accepted (exit 0), None when refused in one line (exit 2)."""
    rc = main(argv)  # any exception escaping main fails the case
    captured = capsys.readouterr()
    where = f"{case}\nargv: {argv}\nstderr: {captured.err[-800:]}"
    assert rc in (0, 2), f"exit status {rc}\n{where}"
    if rc == 2:
        assert "Traceback" not in captured.err, where
        assert captured.err.startswith("leakaudit: error:") and captured.err.count("\n") == 1, f"not one line\n{where}"
        stats["refused"] += 1
        return None
    stats["accepted"] += 1
    return captured.out


def _finish(name: str, budget: str, stats: Counter) -> None:
    OUTCOMES[f"{name}[{budget}]"] = dict(stats)
    print(f"\n{name}[{budget}]: {stats['accepted'] + stats['refused']} cases, {stats['accepted']} accepted, "
          f"{stats['refused']} refused")


def _fuzz(name: str, strategy, prop, budget: str, capsys) -> Counter:
    stats: Counter = Counter()
    run_fuzz(name, strategy, lambda case: prop(case, stats), budget, max_examples=N[name][budget])
    _finish(name, budget, stats)
    return stats


def mostly(valid, invalid):
    """Valid values three times in four: a generator of refusals alone would check no answer."""
    return st.one_of(valid, valid, valid, invalid)


numbers = st.one_of(st.floats(allow_nan=True, allow_infinity=True, width=64),
                    st.floats(min_value=1e-6, max_value=1e6), st.sampled_from([0.0, -1.0, 0.5, 0.25, 1.0, 2.0]))
counts = st.one_of(st.integers(-5, 60), st.sampled_from([0, -1, 10**12]))


@BUDGET_PARAMS
def test_mip_calibrate_fuzz(budget, capsys):
    """``mip calibrate``: the Corollary 11 constant c = (6.16 / eta)^(1 + 2/M), noise scale c * sigma per
    coordinate, and eps_equivalent = ln((1 + 2 eta) / (1 - 2 eta))."""
    strat = st.tuples(mostly(st.floats(1e-4, 0.5), numbers), mostly(st.floats(2.0, 8.0), numbers),
                      mostly(st.lists(st.floats(1e-3, 1e3), min_size=1, max_size=4),
                             st.lists(numbers, min_size=0, max_size=4)),
                      mostly(st.none(), st.integers(-3, 2000)),
                      mostly(st.sampled_from(["cor11", "thm7", "tight", "tv"]), st.just("nope")),
                      mostly(st.sampled_from(["laplace", "gamma", "gaussian"]), st.just("x")))

    def prop(case, stats):
        eta, M, sigmas, dim, constant, radial = case
        argv = ["mip", "calibrate", "--eta", repr(eta), "--M", repr(M), "--constant", constant, "--radial", radial,
                "--json"]
        for s in sigmas:
            argv += ["--sigma", repr(s)]
        if dim is not None:
            argv += ["--dim", str(dim)]
        out = _run(argv, capsys, stats, case)
        if out is None:
            return
        r = json.loads(out)
        assert 0 < eta <= 0.5 and math.isfinite(r["c"]) and r["c"] > 0, (case, r)
        sig = np.asarray(r["sigma"], float)
        np.testing.assert_allclose(np.asarray(r["noise_scale"], float), r["c"] * sig, rtol=1e-12)
        if constant == "cor11":
            np.testing.assert_allclose(r["c"], (6.16 / eta) ** (1 + 2 / M), rtol=1e-12)
        if eta < 0.5:
            np.testing.assert_allclose(r["eps_equivalent"], math.log1p(2 * eta) - math.log1p(-2 * eta), rtol=1e-9)

    _fuzz("mip.calibrate", strat, prop, budget, capsys)


@BUDGET_PARAMS
def test_mip_audit_fuzz(budget, capsys):
    """``mip audit`` on Prop 9's data: every accuracy in [0, 1] and eta = the best accuracy - 1/2."""
    strat = st.tuples(mostly(st.sampled_from([4, 6, 8, 10, 12]), st.integers(-2, 16)),
                      mostly(st.sampled_from(["inv-sum", "mean", "sum"]), st.just("median")),
                      st.one_of(st.floats(0.01, 100), st.none(), numbers),
                      st.one_of(st.none(), st.none(), st.floats(0.01, 0.49), numbers),
                      mostly(st.sampled_from(["exact", "exact", "simulate"]), st.just("guess")),
                      mostly(st.integers(10, 50), st.integers(-1, 9)))

    def prop(case, stats):
        n, statistic, scale, eta, method, games = case
        argv = ["mip", "audit", "--n", str(n), "--statistic", statistic, "--method", method, "--games", str(games),
                "--references", "20", "--json"]
        if scale is not None:
            argv += ["--scale", repr(scale)]
        if eta is not None:
            argv += ["--eta", repr(eta)]
        out = _run(argv, capsys, stats, case)
        if out is None:
            return
        r = json.loads(out)
        acc = np.asarray(r["accuracy"], float)
        assert np.all((acc >= 0) & (acc <= 1)), (case, r)
        if method == "exact":
            np.testing.assert_allclose(r["eta"], acc.max() - 0.5, atol=1e-12)

    _fuzz("mip.audit", strat, prop, budget, capsys)


tables = st.tuples(mostly(st.integers(12, 30), st.integers(1, 11)), st.integers(1, 3), mostly(st.just(2), st.just(3)),
                   mostly(st.just("ok"), st.sampled_from(["nan", "huge", "text", "list"])),
                   st.integers(0, 2**31 - 1))


def _table(path: Path, n: int, n_cols: int, n_classes: int, twist: str, seed: int) -> None:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({f"x{j}": rng.normal(size=n) for j in range(n_cols)})
    df["y"] = rng.integers(0, n_classes, size=n)
    if twist == "nan":
        df.loc[0, "x0"] = np.nan
    elif twist == "huge":
        df.loc[0, "x0"] = 1e308
    elif twist == "text":
        df["x0"] = df["x0"].astype(object)
        df.loc[0, "x0"] = "abc"
    if twist == "list":
        df["x0"] = [[float(v)] for v in df["x0"]]
        df.to_parquet(path.with_suffix(".parquet"))
    else:
        df.to_csv(path, index=False)


@BUDGET_PARAMS
def test_dtp_pdtp_fuzz(budget, capsys):
    """``dtp pdtp`` on a generated table: as many PDTP values as records asked for, each >= 0 or NaN (not
    measurable: Bayes inference on a row seen once)."""
    strat = st.tuples(tables, mostly(st.sampled_from(["nb", "logreg", "bayes-inference"]), st.just("svm")),
                      mostly(st.one_of(st.none(), st.integers(8, 12)), counts),
                      mostly(st.one_of(st.none(), st.integers(1, 8)), counts))

    def prop(case, stats):
        table, model, rows, records = case
        with tempfile.TemporaryDirectory() as d:
            d = Path(d)
            _table(d / "t.csv", *table)
            data = d / ("t.parquet" if table[3] == "list" else "t.csv")
            argv = ["dtp", "pdtp", "--data", str(data), "--label", "y", "--model", model, "--out", str(d / "r.json"),
                    "--bin-width", "none"]
            argv += ["--rows", str(rows)] if rows is not None else []
            argv += ["--records", str(records)] if records is not None else []
            if _run(argv, capsys, stats, case) is None:
                return
            r = json.loads((d / "r.json").read_text())
            n_train = min(1000, table[0]) if rows is None else rows
            assert len(r["values"]) == (n_train if records is None else records), (case, len(r["values"]))
            v = np.asarray([np.nan if x is None else x for x in r["values"]], float)
            assert np.all(np.isnan(v) | (v >= 0)), (case, v)  # NaN: not measurable (Bayes inference, unseen rows)

    _fuzz("dtp.pdtp", strat, prop, budget, capsys)


def _stored_runs() -> list[Path]:
    return sorted((ROOT / "docs" / "reproduction").glob("*.json"))[:3]


@BUDGET_PARAMS
def test_reproduce_gather_fuzz(budget, capsys):
    """``reproduce --gather`` over a folder of stored runs and garbage: the page names every stored run; a refusal
    leaves the page as it was."""
    runs = _stored_runs()
    garbage = st.one_of(st.just(""), st.just("{"), st.just("[]"), st.just('{"name": 3}'), st.just("null"),
                        st.binary(max_size=40).map(lambda b: b.decode("latin-1")),
                        st.just('{"name": "no-such-reproduction"}'))
    strat = st.tuples(st.lists(st.sampled_from(range(len(runs))), max_size=3, unique=True),
                      st.lists(st.tuples(st.sampled_from(["junk", "x", runs[0].stem if runs else "r"]), garbage),
                               max_size=2), st.booleans())

    def prop(case, stats):
        keep, junk, missing = case
        with tempfile.TemporaryDirectory() as d:
            d = Path(d)
            folder = d / "runs"
            if not missing:
                folder.mkdir()
                for i in keep:
                    shutil.copy(runs[i], folder / runs[i].name)
                for stem, text in junk:
                    (folder / f"{stem}.json").write_bytes(text.encode("utf-8", "surrogatepass"))
            page = d / "page.md"
            page.write_text("old page\n")
            if _run(["reproduce", "--out", str(folder), "--gather", str(page)], capsys, stats, case) is None:
                assert page.read_text() == "old page\n", case
                return
            text = page.read_text()
            stored = {runs[i].stem for i in keep} - {stem for stem, _ in junk}
            assert stored and all(s in text for s in stored), (case, stored)

    _fuzz("reproduce.gather", strat, prop, budget, capsys)


lp_values = mostly(st.lists(st.floats(-50, 0), min_size=1, max_size=4),
                   st.one_of(st.just([[-1.0, -2.0], [-3.0, -4.0]]), st.just([[-1.0], [-2.0, -3.0]]), st.just("x"),
                             st.just([]), st.none(), st.floats(-5, 0), st.just([float("nan")]), st.just(["a"])))
text_values = st.one_of(*[st.text(alphabet="abc xyz", min_size=1, max_size=10).filter(str.strip)] * 12,
                        st.just(""), st.none(), st.just(["a", "b"]), st.integers(), st.just({"k": 1}))


@BUDGET_PARAMS
def test_lm_scores_only_fuzz(budget, capsys):
    """``audit --logprobs-column`` (a language model's scores computed elsewhere) with ``--check-inputs``: the texts
    are counted as the files hold them."""
    rows = mostly(st.lists(st.tuples(text_values, lp_values), min_size=2, max_size=6),
                  st.lists(st.tuples(text_values, lp_values), min_size=0, max_size=1))
    strat = st.tuples(rows, rows, st.sampled_from(["jsonl", "jsonl", "csv"]))

    def prop(case, stats):
        mem, non, fmt = case
        with tempfile.TemporaryDirectory() as d:
            d = Path(d)
            paths = []
            for name, rs in (("m", mem), ("n", non)):
                p = d / f"{name}.{fmt}"
                if fmt == "jsonl":
                    p.write_text("".join(json.dumps({"text": t, "lp": lp}) + "\n" for t, lp in rs))
                else:
                    pd.DataFrame({"text": [t for t, _ in rs], "lp": [json.dumps(lp) for _, lp in rs]}).to_csv(
                        p, index=False)
                paths.append(p)
            argv = ["audit", "--train", str(paths[0]), "--test", str(paths[1]), "--text-column", "text",
                    "--logprobs-column", "lp", "--out", str(d / "o"), "--check-inputs"]
            if _run(argv, capsys, stats, case) is None:
                return
            r = json.loads((d / "o" / "inputs.json").read_text())
            assert (r["data"]["n_members"], r["data"]["n_nonmembers"]) == (len(mem), len(non)), (case, r["data"])

    _fuzz("lm.scores", strat, prop, budget, capsys)


def _rates_in_unit_interval(obj) -> None:
    """Every value under a key naming a rate (auc, accuracy, tpr) lies in [0, 1] or is missing (null)."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            if isinstance(v, float) and any(w in k.lower() for w in ("auc", "accuracy", "tpr")):
                assert math.isnan(v) or 0 <= v <= 1, (k, v)
            _rates_in_unit_interval(v)
    elif isinstance(obj, list):
        for v in obj:
            _rates_in_unit_interval(v)


def _command_fuzz(name: str, budget: str, capsys, strat, argv_of, result_file: str) -> None:
    def prop(case, stats):
        with tempfile.TemporaryDirectory() as d:
            out = Path(d) / "out"
            if _run(argv_of(case, out), capsys, stats, case) is not None:
                _rates_in_unit_interval(json.loads((out / result_file).read_text()))

    _fuzz(name, strat, prop, budget, capsys)


small = mostly(st.integers(30, 40), st.integers(-2, 29))


@BUDGET_PARAMS
def test_membership_fuzz(budget, capsys):
    strat = st.tuples(mostly(st.just("adult"), st.just("nope")), mostly(st.just("logreg"), st.just("zzz")),
                      mostly(st.sampled_from(["loss", "loss,lira"]), st.sampled_from(["bogus", ""])), small, small,
                      mostly(st.just(0), small), mostly(st.just(2), st.sampled_from([3, 0, -2])),
                      mostly(st.integers(5, 20), st.integers(-1, 4)))
    _command_fuzz("membership", budget, capsys, strat, lambda c, out: [
        "membership", "--dataset", c[0], "--model", c[1], "--attacks", c[2], "--n-members", str(c[3]),
        "--n-nonmembers", str(c[4]), "--n-population", str(c[5]), "--n-reference", str(c[6]), "--n-boot", str(c[7]),
        "--out", str(out)], "membership.json")


@BUDGET_PARAMS
def test_attribute_fuzz(budget, capsys):
    strat = st.tuples(mostly(st.just("adult"), st.just("nope")),
                      mostly(st.sampled_from(["sex", "race"]), st.sampled_from(["nope", ""])),
                      mostly(st.sampled_from(["logreg", "tree"]), st.just("zzz")),
                      mostly(st.integers(100, 300), st.integers(-2, 5)), mostly(st.none(), st.integers(-1, 4)))
    _command_fuzz("attribute", budget, capsys, strat, lambda c, out: [
        "attribute", "--dataset", c[0], "--attribute", c[1], "--model", c[2], "--n-members", str(c[3]),
        *([] if c[4] is None else ["--depth", str(c[4])]), "--out", str(out)], "attribute.json")


@BUDGET_PARAMS
def test_property_fuzz(budget, capsys):
    strat = st.tuples(mostly(st.floats(0.1, 0.4), numbers), mostly(st.floats(0.5, 0.9), numbers),
                      mostly(st.sampled_from(["0.0", "0.1", "0.05,0.1"]), st.sampled_from(["-1", "x"])),
                      mostly(st.integers(1, 3), st.integers(-1, 0)), mostly(st.integers(2, 6), st.integers(-1, 1)))
    _command_fuzz("property", budget, capsys, strat, lambda c, out: [
        "property", "--t0", repr(c[0]), "--t1", repr(c[1]), "--poison", c[2], "--targets", str(c[3]),
        "--shadow", str(c[4]), "--rows", "400", "--n-train", "100", "--queries", "20", "--out", str(out)],
        "property.json")


@BUDGET_PARAMS
def test_dp_audit_fuzz(budget, capsys):
    strat = st.tuples(mostly(st.floats(0.5, 8.0), numbers), mostly(st.just(1e-5), numbers),
                      mostly(st.sampled_from([60, 80]), st.sampled_from([0, -1])),
                      mostly(st.just(1), st.sampled_from([0, -1])),
                      mostly(st.just("input"), st.just("x")), mostly(st.just(10), st.sampled_from([0, -5])))
    _command_fuzz("dp_audit", budget, capsys, strat, lambda c, out: [
        "dp-audit", "--epsilon", repr(c[0]), "--delta", repr(c[1]), "--n-train", str(c[2]), "--epochs", str(c[3]),
        "--canaries", c[4], *([] if c[5] is None else ["--m", str(c[5])]), "--out", str(out)], "dp_audit.json")
