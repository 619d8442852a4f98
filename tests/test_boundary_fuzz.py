"""The library's boundary is the command line's (issue 64): generated arguments for each public entry point.

For every entry point a valid call is the starting point; hypothesis replaces one argument at a time with a
hostile value (None, a wrong type, NaN, an array or table where a word belongs, a huge number, a function). The
call must then succeed or fail with one ``LeakauditError`` whose message is one line naming the argument, and
leave nothing on disk (each case runs in an empty working directory). ``leakaudit.audit`` is checked at its
boundary: its core is replaced by a stub, so a case that gets past the argument checks costs no training.

Any other error escaping is a failure: no (entry point, argument) pair is exempt (the 21 that once were, from
pdtp_from_probabilities' bin_width to inversion_attack's sigma, are checked at their entry points since issue 64;
``ONCE_ESCAPED`` keeps a value that found each, tried whatever the case count).
At the end of the module each entry point's count of generated cases, and how many were accepted and how many
refused, is printed (``LEAKAUDIT_BOUNDARY_CASES`` sets the count per entry point).
"""

from __future__ import annotations

import os
import warnings
from collections import Counter
from functools import partial

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

import leakaudit
from leakaudit.exceptions import LeakauditError

#: cases per entry point (each a few milliseconds) and per form of save (about a second each)
N_CASES = int(os.environ.get("LEAKAUDIT_BOUNDARY_CASES", "30"))
SAVE_CASES = int(os.environ.get("LEAKAUDIT_BOUNDARY_SAVE_CASES", "10"))
COUNTS: Counter = Counter()
#: entry point -> how its generated cases ended ("accepted": the call succeeded; "refused": a LeakauditError; any
#: other ending fails the test)
OUTCOMES: dict[str, Counter] = {}

HOSTILE = st.one_of(
    st.sampled_from([None, -1, 0, 2**70, 1e308, float("nan"), float("inf"), -0.5, True, "", "x", " ", b"x", [],
                     {}, (), [1, "a"], {"a": 1}, object(), np.array([]), np.array([[np.nan]]), np.zeros((2, 3, 4)),
                     pd.DataFrame(), pd.Series([1, 2]), (lambda: 0), "\u202e", "=cmd|calc!A1", "../.."]),
    st.integers(-(2**64), 2**64), st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=8),
)

def _tables(n=30, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(2 * n, 2))
    df = pd.DataFrame(X, columns=["a", "b"]).assign(label=np.where(X[:, 0] > 0, "y", "n"))
    return df.iloc[:n].reset_index(drop=True), df.iloc[n:].reset_index(drop=True)


def _entries():
    """Each public entry point with a valid call's keyword arguments."""
    from sklearn.linear_model import LogisticRegression

    import leakaudit.attribute as A
    import leakaudit.dpaudit as Q
    import leakaudit.dtp as D
    import leakaudit.lm as L
    import leakaudit.membership as M
    import leakaudit.mip as P
    from leakaudit.membership import Attack

    class Zero(Attack):
        name, needs = "boundary_zero", ()

        def run(self, inputs):
            return self.result(np.zeros(len(inputs.y)), np.zeros(len(inputs.y), int), threshold=0.0)

    rng = np.random.default_rng(0)
    mem, non = _tables()
    p = rng.dirichlet([1, 1], size=30)
    S = rng.choice([-1, 1], size=200)
    T = np.where(rng.random(200) < 0.3, S, 0)
    logprobs = -rng.random((6, 5)) * 3
    words = ["apple", "river", "stone", "cloud", "tiger", "piano", "maple", "ocean", "lemon", "comet"]
    texts = [f"{words[i % 10]} {words[(3 * i + 1) % 10]} number {i}" for i in range(40)]
    return {
        "audit": (leakaudit.audit, dict(
            model=LogisticRegression().fit(mem[["a", "b"]], mem["label"]), members=mem, nonmembers=non,
            label="label", profile="smoke", seed=0, confidence=0.95, thresholds={"max_auc": 0.6}, sensitive=None,
            population=None, model_input="auto", memory_budget=None, verbose=False, backend="inprocess",
            dtp_rule="statistical", epsilon_budget=None, claimed_epsilon=None, predictions=None, learner=None)),
        "register_attack": (leakaudit.register_attack, dict(
            name="boundary_zero", factory=Zero, description="zero", display="", audit="always", audit_params=None,
            access="scores", force=True)),
        "audit_attacks": (M.audit_attacks, dict(retrainable=True, access="scores")),
        "pdtp_from_probabilities": (D.pdtp_from_probabilities, dict(p_full=p, p_loo=p[::-1], bin_width=0.01,
                                                                    lowest_bins="keep")),
        "dtp1_verdict": (D.dtp1_verdict, dict(values=rng.random(30), kind="PDTP", threshold=1.0, records=None,
                                              max_listed=20)),
        "mip_noise": (P.mip_noise, dict(sigma=np.ones(3), eta=0.1, M=2, radial="laplace", constant="cor11")),
        "eta_from_eps": (P.eta_from_eps, dict(eps=1.0)),
        "one_run_audit": (Q.one_run_audit, dict(S=S, T=T, delta=1e-5, beta=0.05)),
        "gdp_audit": (Q.gdp_audit, dict(S=S, T=T, delta=1e-5, beta=0.05)),
        "fdp_audit": (Q.fdp_audit, dict(S=S, T=T, delta=1e-5, beta=0.05, curve="epsdelta")),
        "one_run_audit_scores": (Q.one_run_audit_scores, dict(S=S, scores=rng.normal(size=200), delta=1e-5,
                                                              beta=0.05, grid=None, bound="steinke2023")),
        "check_dp_claim": (Q.check_dp_claim, dict(noise_multiplier=1.0, sampling_rate=0.01, delta=1e-5, n=1000,
                                                  claimed_epsilon=8.0, names=None)),
        # its counts (n_boot, n_permutations, n_folds) and alpha (which sets the permutations, about 1 / alpha:
        # alpha = 1e-6 runs for minutes) stay as they are: a long run, not an error
        "blind_baseline": (partial(L.blind_baseline, n_boot=20, n_folds=5, alpha=0.05),
                           dict(texts=texts, is_member=np.r_[np.ones(20), np.zeros(20)].astype(int), similar=0.8,
                                random_state=0)),
        "scores_from_arrays": (L.scores_from_arrays, dict(logprobs=logprobs, mean=None, std=None)),
        "run_lm_attacks": (L.run_lm_attacks, dict(ts=L.scores_from_arrays(logprobs), texts=texts[:6], refs=(),
                                                  k=0.2)),
        "attribute_advantage": (A.attribute_advantage, dict(correct_members=rng.random(20) < 0.6,
                                                            correct_nonmembers=rng.random(20) < 0.5,
                                                            confidence=0.95)),
        "inversion_attack": (A.inversion_attack, dict(residuals=rng.normal(size=(10, 3)), prior=np.ones(3) / 3,
                                                      sigma=1.0)),
    }


ENTRIES = _entries()


def _listing(folder):
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def _named(arg: str, message: str) -> bool:
    """Whether ``message`` names ``arg`` (letters and digits only: "nonmembers" is named by "non-members")."""
    squash = lambda text: "".join(ch for ch in text.lower() if ch.isalnum())  # noqa: E731
    return squash(arg) in squash(message)


def _only_ours(entry: str, arg: str, call) -> str:
    """``call()`` succeeds ("accepted") or raises one one-line LeakauditError naming ``arg`` ("refused")."""
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            call()
    except LeakauditError as exc:
        if len(str(exc).splitlines()) != 1:
            raise AssertionError(f"{entry}({arg}=...): a message of several lines: {exc}") from None
        if not _named(arg, str(exc)):
            raise AssertionError(f"{entry}({arg}=...): a message that does not name {arg}: {exc}") from None
        return "refused"
    except Exception as exc:  # noqa: BLE001  (what the test looks for)
        raise AssertionError(f"{entry}({arg}=...) let {type(exc).__name__} escape: {exc}") from None
    return "accepted"


@pytest.fixture(scope="module", autouse=True)
def report_counts(request):
    """After the module: each entry point's generated cases and how they ended, one line each."""
    yield
    tr = request.config.pluginmanager.get_plugin("terminalreporter")
    capture = request.config.pluginmanager.get_plugin("capturemanager")
    if tr is None or capture is None or not COUNTS:
        return
    with capture.global_and_fixture_disabled():
        tr.write_line("")
        for entry, n in sorted(COUNTS.items()):
            ends = OUTCOMES.get(entry, Counter())
            tr.write_line(f"boundary: {entry}: {n} generated cases, "
                          + ", ".join(f"{v} {k}" for k, v in sorted(ends.items())))


@pytest.fixture
def stub_core(monkeypatch):
    """``leakaudit.audit`` stops after its argument checks (the analyses are not the boundary)."""
    import leakaudit.audit.pipeline as pipeline

    monkeypatch.setattr(pipeline, "audit_core", lambda cfg, **kw: "checked")


@pytest.mark.parametrize("entry", sorted(ENTRIES))
def test_every_failure_is_a_leakaudit_error_and_leaves_nothing(entry, stub_core, tmp_path, monkeypatch):
    from leakaudit.membership._registry import ATTACKS

    fn, valid = ENTRIES[entry]
    monkeypatch.chdir(tmp_path)
    # what register_attack's cases register (under any name they pass) is gone after the test
    monkeypatch.setattr(ATTACKS, "_entries", dict(ATTACKS._entries))
    fn(**valid)  # the starting point is valid

    @seed(64)
    @settings(max_examples=N_CASES, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(st.sampled_from(sorted(valid)), HOSTILE)
    def case(arg, value):
        COUNTS[entry] += 1
        ends = OUTCOMES.setdefault(entry, Counter())
        try:
            ends[_only_ours(entry, arg, lambda: fn(**{**valid, arg: value}))] += 1
        except AssertionError:
            ends["failed (an escape or an unclear message)"] += 1
            raise
        assert _listing(tmp_path) == [], f"{entry}({arg}={value!r}) left {_listing(tmp_path)}"

    case()


#: the values that let a Python or numpy error escape before issue 64 (a few hundred cases find them; the default
#: count does not): each now refused in one line naming its argument, or (a huge but finite sigma) accepted
ONCE_ESCAPED = [
    ("pdtp_from_probabilities", "bin_width", 5.8e-238), ("dtp1_verdict", "records", 1e308),
    ("fdp_audit", "curve", np.array([])), ("one_run_audit_scores", "grid", 0),
    ("one_run_audit_scores", "bound", np.zeros((2, 3, 4))), ("check_dp_claim", "n", None),
    ("check_dp_claim", "names", 1e308), *(("check_dp_claim", a, np.zeros((2, 3, 4))) for a in
                                          ("noise_multiplier", "sampling_rate", "delta", "claimed_epsilon")),
    ("run_lm_attacks", "ts", None), ("run_lm_attacks", "texts", None), ("run_lm_attacks", "refs", -1),
    ("blind_baseline", "texts", None), ("blind_baseline", "is_member", 2**70), ("blind_baseline", "similar", "x"),
    ("blind_baseline", "random_state", pd.DataFrame()), ("mip_noise", "eta", 1e-300),
    ("eta_from_eps", "eps", np.array([])), ("register_attack", "display", 255),
    ("register_attack", "audit_params", pd.Series([1, 2])),
]


@pytest.mark.parametrize("entry, arg, value, ending", [
    *((*case, "refused") for case in ONCE_ESCAPED), ("inversion_attack", "sigma", 2**70, "accepted"),
], ids=lambda v: v if isinstance(v, str) else None)
def test_the_values_that_once_escaped_end_as_they_should(entry, arg, value, ending, tmp_path, monkeypatch):
    from leakaudit.membership._registry import ATTACKS

    fn, valid = ENTRIES[entry]
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(ATTACKS, "_entries", dict(ATTACKS._entries))
    assert _only_ours(entry, arg, lambda: fn(**{**valid, arg: value})) == ending


@pytest.fixture(scope="module")
def result():
    mem, non = _tables()
    rng = np.random.default_rng(1)
    probs = tuple(np.c_[q, 1 - q] for q in (rng.random(30), rng.random(30)))
    return leakaudit.audit(None, mem, non, label="label", predictions=probs, profile="smoke")


@pytest.mark.parametrize("how", ["method", "function"])
def test_save_writes_the_folder_it_names_or_nothing(result, tmp_path, monkeypatch, how):
    from leakaudit.audit.result.output import save_result

    # the function's result argument is generated too: the result, or anything else
    results = st.just(result) if how == "method" else st.one_of(st.just(result), st.just(result), HOSTILE)
    work = tmp_path / "work"
    work.mkdir()
    (work / "afile").write_text("x")
    monkeypatch.chdir(work)
    # never a path outside the work folder (an absolute path, or one climbing out of it)
    inside = HOSTILE.filter(lambda v: not (isinstance(v, str) and (v.startswith("/") or ".." in v)))
    paths = st.one_of(inside, st.sampled_from(["afile/out", "afile", "a/missing/../b", "a" * 300, "x\x00y", ".",
                                                "deep/er/out", "out", os.devnull]))

    @seed(64)
    @settings(max_examples=SAVE_CASES, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(paths, results)
    def case(out, res):
        COUNTS[f"save ({how})"] += 1
        ends = OUTCOMES.setdefault(f"save ({how})", Counter())
        before = _listing(work)
        try:
            written = res.save(out) if how == "method" else save_result(res, out)
        except LeakauditError as exc:
            assert len(str(exc).splitlines()) == 1, str(exc)
            assert _listing(work) == before, f"save({out!r}) failed and left {set(_listing(work)) - set(before)}"
            ends["refused"] += 1
            return
        assert {"results.json", "records.csv", "report.html", "evidence.json"} <= set(os.listdir(written))
        new = set(_listing(work)) - set(before)
        assert all(os.path.join(work, n).startswith(str(os.path.abspath(written))) or
                   str(os.path.abspath(written)).startswith(os.path.join(work, n)) for n in new), new
        ends["accepted"] += 1
        for n in sorted(new, key=len, reverse=True):  # the next case starts from the same folder
            p = work / n
            p.unlink() if p.is_file() else p.rmdir()
        for f in ("results.json", "records.csv", "report.html", "evidence.json"):  # "." writes into work itself
            if (work / f).exists() and f not in before:
                (work / f).unlink()

    case()
