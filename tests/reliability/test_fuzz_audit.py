"""Fuzz the whole ``leakaudit audit`` command with structured, near-valid inputs (issue 28).

Tables (numbers, 0/1, booleans, text, numbers among words, missing cells, stray values, reordered, missing, extra
and repeated columns, CSV, gzip and Parquet, one file with a membership column), labels (int, sparse int, text,
bool, whole floats; classes on one side only, stray values), sensitive columns, scikit-learn models (fitted on a
DataFrame of the columns, a subset of them, the encoded columns or a bare array; classes as values, strings or
codes, in any order, one missing or extra; saved with skops), predictions files (headers of class names in any
order, p0.., digits, empty, none or wrong; logits, text, wrong row and column counts) and TOML configs (valid
and invalid values).

Every case ends either in exit 0 with the model's own accuracy on the rows written (computed in
``_fuzz_inputs`` with pandas and scikit-learn only), or in exit 2 with one line ``leakaudit: error: ...`` on
stderr. A case that breaks a documented rule must be refused; a case that breaks none must be accepted. Any
exception escaping ``main`` fails the case. Most cases run ``--check-inputs`` (the audit's input stages); a few
run the full audit (smoke profile, a shared engine cache) and check results.json the same way.
"""

from __future__ import annotations

import json
import tempfile
from collections import Counter
from pathlib import Path


from leakaudit.cli import main

from ._fuzz import BUDGET_PARAMS, OUTCOMES, run_fuzz
from ._fuzz_inputs import build, cases

# cases per run: the default suite about 25 s on two cores; the slow suite >= 10,000 in all
N_CHECK = {"default": 120, "long": 10_000}
N_FULL = {"default": 3, "long": 50}


def _run(spec, capsys, stats: Counter, cache_dir: Path | None = None) -> None:
    with tempfile.TemporaryDirectory() as d:
        d = Path(d)
        out = d / "out"
        built = build(spec, d, out)
        argv = built.argv + (["--cache-dir", str(cache_dir)] if cache_dir is not None else [])
        rc = main(argv)  # any exception escaping main fails the case
        err = capsys.readouterr().err
        case = f"{spec}\nargv: {argv}\nstderr: {err}"
        assert rc in (0, 2), f"exit status {rc}\n{case}"
        if rc == 2:
            assert "Traceback" not in err, case
            assert err.startswith("leakaudit: error:") and err.count("\n") == 1, f"not one line\n{case}"
            assert not built.clean, f"a valid input was refused\n{case}"
            stats["refused"] += 1
            return
        assert not built.must_refuse, f"an input that breaks docs/input.md was accepted\n{case}"
        summary = json.loads((out / ("results.json" if spec.full else "inputs.json")).read_text())
        try:
            built.expect(summary)
        except AssertionError as exc:
            raise AssertionError(f"{exc}\n{case}") from None
        stats["accepted"] += 1


def _finish(name: str, budget: str, stats: Counter) -> None:
    n = stats["accepted"] + stats["refused"]
    OUTCOMES[f"{name}[{budget}]"] = dict(stats)
    print(f"\n{name}[{budget}]: {n} cases, {stats['accepted']} accepted (accuracy checked), "
          f"{stats['refused']} refused")
    # a generator that only produced refusals would prove nothing about the accuracies
    assert stats["accepted"] >= 0.15 * n, stats


@BUDGET_PARAMS
def test_audit_check_inputs_fuzz(budget, capsys):
    """``leakaudit audit --check-inputs``: accepted with the model's own accuracy, or refused in one line."""
    stats: Counter = Counter()
    run_fuzz("audit.check_inputs", cases(), lambda spec: _run(spec, capsys, stats), budget,
             max_examples=N_CHECK[budget])
    _finish("audit.check_inputs", budget, stats)


@BUDGET_PARAMS
def test_audit_full_fuzz(budget, capsys, tmp_path):
    """The full audit (smoke profile) on a few such cases: results.json's target accuracies are the model's own."""
    stats: Counter = Counter()
    cache = tmp_path / "engine-cache"
    full_cases = cases(full=True).filter(lambda s: s.n_pop == 0 and s.model != "knn")
    run_fuzz("audit.full", full_cases, lambda spec: _run(spec, capsys, stats, cache), budget,
             max_examples=N_FULL[budget])
    n = stats["accepted"] + stats["refused"]
    OUTCOMES[f"audit.full[{budget}]"] = dict(stats)
    print(f"\naudit.full[{budget}]: {n} cases, {stats['accepted']} accepted, {stats['refused']} refused")


def test_strategy_draws_every_kind_of_case():
    """The generator reaches clean cases, must-refuse cases and both targets (a guard against a narrowed strategy)."""
    seen = Counter()

    def prop(spec):
        seen["clean" if not spec.defects else "defect"] += 1
        seen[spec.target] += 1
        seen[spec.fit_on] += 1

    from hypothesis import given, settings, seed

    given(cases())(settings(max_examples=200, database=None, deadline=None)(seed(0)(prop)))()
    for k in ("clean", "defect", "model", "predictions", "frame", "subset"):
        assert seen[k] > 0, seen

