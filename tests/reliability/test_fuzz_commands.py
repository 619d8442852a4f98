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
    "membership": {"default": 3, "long": 40},
    "attribute": {"default": 3, "long": 40},
    "property": {"default": 3, "long": 40},
    "dp_audit": {"default": 3, "long": 40},
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
    valid = st.tuples(st.floats(1e-4, 0.5), st.floats(2.0, 8.0), st.lists(st.floats(1e-3, 1e3), min_size=1,
                                                                           max_size=4),
                      st.one_of(st.none(), st.integers(1, 2000)), st.sampled_from(["cor11", "thm7", "tight", "tv"]),
                      st.just("laplace"))
    anything = st.tuples(numbers, numbers, st.lists(numbers, max_size=4), st.one_of(st.none(), st.integers(-3, 2000)),
                         st.sampled_from(["cor11", "thm7", "tight", "tv", "nope"]),
                         st.sampled_from(["laplace", "gamma", "gaussian", "x"]))
    strat = mostly(valid, anything)

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
    valid = st.tuples(st.sampled_from([4, 6, 8, 10, 12]), st.sampled_from(["inv-sum", "mean", "sum"]),
                      st.floats(0.01, 100), st.none(), st.sampled_from(["exact", "exact", "simulate"]),
                      st.integers(10, 50))
    anything = st.tuples(st.integers(-2, 16), st.sampled_from(["inv-sum", "mean", "sum", "median"]),
                         st.one_of(st.none(), numbers), st.one_of(st.none(), numbers),
                         st.sampled_from(["exact", "simulate", "guess"]), st.integers(-1, 50))
    strat = mostly(valid, anything)

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


tables = st.tuples(st.integers(12, 30), st.integers(1, 3), st.just(2), st.just("ok"), st.integers(0, 2**31 - 1))
odd_tables = st.tuples(st.integers(1, 30), st.integers(1, 3), st.integers(1, 3),
                       st.sampled_from(["ok", "nan", "huge", "text", "list"]), st.integers(0, 2**31 - 1))


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
    valid = st.tuples(tables, st.sampled_from(["nb", "logreg"]), st.one_of(st.none(), st.integers(8, 12)),
                      st.one_of(st.none(), st.integers(1, 8)))
    anything = st.tuples(odd_tables, st.sampled_from(["nb", "logreg", "bayes-inference", "svm"]),
                         st.one_of(st.none(), counts), st.one_of(st.none(), counts))
    strat = mostly(valid, anything)

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


good_lp = st.lists(st.floats(-50, 0), min_size=1, max_size=4)
lp_values = st.one_of(good_lp, st.just([[-1.0, -2.0], [-3.0, -4.0]]), st.just([[-1.0], [-2.0, -3.0]]), st.just("x"),
                      st.just([]), st.none(), st.floats(-5, 0), st.just([float("nan")]), st.just(["a"]))
good_text = st.text(alphabet="abc xyz", min_size=1, max_size=10).filter(str.strip)
text_values = st.one_of(good_text, st.just(""), st.none(), st.just(["a", "b"]), st.integers(), st.just({"k": 1}))
# a file's rows: clean ones, and (one time in four) one row of any kind among them
lm_rows = st.tuples(st.lists(st.tuples(good_text, good_lp), min_size=2, max_size=6),
                    mostly(st.none(), st.tuples(text_values, lp_values)))


@BUDGET_PARAMS
def test_lm_scores_only_fuzz(budget, capsys):
    """``audit --logprobs-column`` (a language model's scores computed elsewhere) with ``--check-inputs``: the texts
    are counted as the files hold them."""
    strat = st.tuples(lm_rows, lm_rows, st.sampled_from(["jsonl", "jsonl", "csv"]))

    def prop(case, stats):
        (mem, odd_m), (non, odd_n), fmt = case
        # texts made distinct within and across the files (a text both member and non-member is refused)
        mem = [(f"m{i} {t}" if isinstance(t, str) and t.strip() else t, lp)
               for i, (t, lp) in enumerate(mem + ([odd_m] if odd_m else []))]
        non = [(f"n{i} {t}" if isinstance(t, str) and t.strip() else t, lp)
               for i, (t, lp) in enumerate(non + ([odd_n] if odd_n else []))]
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


@BUDGET_PARAMS
def test_membership_fuzz(budget, capsys):
    valid = st.tuples(st.just("adult"), st.just("logreg"), st.sampled_from(["loss", "loss,lira"]),
                      st.integers(30, 40), st.integers(30, 40), st.just(0), st.just(2), st.integers(5, 20))
    anything = st.tuples(st.sampled_from(["adult", "nope"]), st.sampled_from(["logreg", "zzz"]),
                         st.sampled_from(["loss", "bogus", ""]), st.integers(-2, 40), st.integers(-2, 40),
                         st.integers(-2, 40), st.sampled_from([2, 3, 0, -2]), st.integers(-1, 20))
    _command_fuzz("membership", budget, capsys, mostly(valid, anything), lambda c, out: [
        "membership", "--dataset", c[0], "--model", c[1], "--attacks", c[2], "--n-members", str(c[3]),
        "--n-nonmembers", str(c[4]), "--n-population", str(c[5]), "--n-reference", str(c[6]), "--n-boot", str(c[7]),
        "--out", str(out)], "membership.json")


@BUDGET_PARAMS
def test_attribute_fuzz(budget, capsys):
    valid = st.tuples(st.just("adult"), st.sampled_from(["sex", "race"]), st.sampled_from(["logreg", "tree"]),
                      st.integers(100, 300), st.one_of(st.none(), st.integers(1, 4)))
    anything = st.tuples(st.sampled_from(["adult", "nope"]), st.sampled_from(["sex", "nope", ""]),
                         st.sampled_from(["logreg", "zzz"]), st.integers(-2, 300), st.one_of(st.none(),
                                                                                            st.integers(-1, 4)))
    _command_fuzz("attribute", budget, capsys, mostly(valid, anything), lambda c, out: [
        "attribute", "--dataset", c[0], "--attribute", c[1], "--model", c[2], "--n-members", str(c[3]),
        *([] if c[4] is None else ["--depth", str(c[4])]), "--out", str(out)], "attribute.json")


@BUDGET_PARAMS
def test_property_fuzz(budget, capsys):
    valid = st.tuples(st.floats(0.1, 0.4), st.floats(0.5, 0.9), st.sampled_from(["0.0", "0.1"]),
                      st.integers(2, 3), st.integers(2, 4))
    anything = st.tuples(numbers, numbers, st.sampled_from(["0.1", "-1", "x", "0.05,0.1"]), st.integers(-1, 3),
                         st.integers(-1, 6))
    _command_fuzz("property", budget, capsys, mostly(valid, anything), lambda c, out: [
        "property", "--t0", repr(c[0]), "--t1", repr(c[1]), "--poison", c[2], "--targets", str(c[3]),
        "--shadow", str(c[4]), "--rows", "400", "--n-train", "100", "--queries", "20", "--out", str(out)],
        "property.json")


@BUDGET_PARAMS
def test_dp_audit_fuzz(budget, capsys):
    valid = st.tuples(st.floats(0.5, 8.0), st.just(1e-5), st.sampled_from([60, 80]), st.just(1), st.just("input"),
                      st.just(10))
    anything = st.tuples(numbers, numbers, st.sampled_from([60, 0, -1]), st.sampled_from([1, 0, -1]),
                         st.sampled_from(["gradient", "input", "x"]), st.sampled_from([None, 10, 0, -5]))
    _command_fuzz("dp_audit", budget, capsys, mostly(valid, anything), lambda c, out: [
        "dp-audit", "--epsilon", repr(c[0]), "--delta", repr(c[1]), "--n-train", str(c[2]), "--epochs", str(c[3]),
        "--canaries", c[4], *([] if c[5] is None else ["--m", str(c[5])]), "--out", str(out)], "dp_audit.json")
