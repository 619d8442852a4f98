"""The audit's time estimate (issue 86): the plan's models times a fit timed on the user's inputs, given before any
audit model trains by leakaudit.estimate(), `leakaudit audit --estimate`, --check-inputs and the progress."""

import inspect
import io
import re

import numpy as np
import pytest

import leakaudit
from leakaudit.audit.progress import StageProgress, about
from leakaudit.cli import main
from leakaudit.engine import Engine
from leakaudit.exceptions import InvalidParameterError, NotEstimableWarning

SMOKE = ["audit", "--profile", "smoke", "--n-members", "200", "--n-nonmembers", "200"]


@pytest.fixture
def trained(monkeypatch):
    """The models every engine is asked for (the estimate's timing engine and the audit's), and the audit's engine."""
    from leakaudit.audit import pipeline

    seen = {"models": 0, "engines": []}
    predict, make = Engine.predict_many, pipeline._engine

    def counted(self, learner, X, y, subsets, *args, **kwargs):
        seen["models"] += len(subsets)
        return predict(self, learner, X, y, subsets, *args, **kwargs)

    monkeypatch.setattr(Engine, "predict_many", counted)
    monkeypatch.setattr(pipeline, "_engine", lambda *a, **k: seen["engines"].append(make(*a, **k)) or seen["engines"][-1])
    return seen


@pytest.fixture(scope="module")
def adult():
    """A logistic regression on 300 Adult members' numeric columns, and 300 non-members."""
    from sklearn.linear_model import LogisticRegression

    from leakaudit.data import load_adult

    ds = load_adult()
    table = ds.frame.assign(income=np.asarray(ds.class_names)[ds.y])
    rows = np.random.default_rng(0).permutation(len(table))
    members, nonmembers = table.iloc[rows[:300]], table.iloc[rows[300:600]]
    model = LogisticRegression(max_iter=1000).fit(members.drop(columns="income").select_dtypes("number"),
                                                  members["income"])
    return model, members, nonmembers


def test_the_estimate_comes_before_any_audit_model(adult, trained):
    est = leakaudit.estimate(*adult, label="income", sensitive=["sex"], profile="smoke", verbose=False)
    steps = {s.name: s for s in est.steps}
    assert steps["membership"].models == 8 and steps["dtp"].models == 105 and est.models == sum(
        s.models for s in est.steps)
    assert est.seconds == pytest.approx(sum(s.seconds for s in est.steps)) and est.seconds > 0
    assert est.fit_seconds > 0 and est.cores >= 1 and est.not_measurable is None
    # only the timing fits were trained: none by the audit's engine, nothing cached
    assert trained["models"] == est.timed_models >= 2
    assert trained["engines"][-1].totals.models_trained == 0
    text = str(est)
    assert text.startswith(f"estimate: {about(est.seconds)} on {est.cores} core")
    assert re.search(r"^  dtp: 105 models, (about \d+ s|under 1 s)$", text, flags=re.M), text
    assert est.to_dict()["headline"] == est.headline


def test_the_estimate_takes_and_refuses_what_the_audit_does(adult):
    audit_params = inspect.signature(leakaudit.audit).parameters
    assert inspect.signature(leakaudit.estimate).parameters == audit_params
    model, members, nonmembers = adult
    for bad in ({"profile": "bogus"}, {"label": None}, {"sensitive": "sex"}, {"verbose": "yes"}):
        kwargs = {"label": "income", **bad}
        messages = []
        for call in (leakaudit.audit, leakaudit.estimate):
            with pytest.raises(InvalidParameterError) as exc:
                call(model, members, nonmembers, **kwargs)
            messages.append(str(exc.value))
        assert messages[0] == messages[1] and "\n" not in messages[0], messages
    with pytest.raises(InvalidParameterError, match=r"^leakaudit.estimate\(\) got unknown .* out_dir"):
        leakaudit.estimate(model, members, nonmembers, label="income", out_dir="x")


def test_without_a_training_algorithm_the_estimate_is_not_measurable(adult, trained):
    model, members, nonmembers = adult
    X = lambda df: df.drop(columns="income").select_dtypes("number")  # noqa: E731
    with pytest.warns(NotEstimableWarning):  # as the audit warns, before the inputs are read
        est = leakaudit.estimate(None, members, nonmembers, label="income", verbose=False,
                                 predictions=(model.predict_proba(X(members)), model.predict_proba(X(nonmembers))))
    assert est.seconds is None and est.models == 0 and trained["models"] == 0
    assert "cannot retrain this predictions model" in est.not_measurable
    assert str(est).startswith("estimate: not measurable: the audit cannot retrain")


def test_cli_estimate_prints_the_plan_and_trains_nothing(tmp_path, capsys, trained):
    out = tmp_path / "out"
    assert main(SMOKE + ["--estimate", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    timed = int(re.search(r"^estimate: (about [\w ]+|under 1 s) on \d+ cores? for [\d,]+ models \([0-9.e-]+ s a "
                          r"model, timed on (\d+) fits of the recipe\)", text, flags=re.M).group(2))
    assert re.search(r"^  dtp: \d+ models, (about [\w ]+|under 1 s)$", text, flags=re.M), text
    assert "not counted:" in text
    assert trained["models"] == timed and not out.exists()


def test_cli_estimate_refuses_bad_input_in_one_line(tmp_path, capsys):
    for extra in (["--profile", "bogus"], ["--check-inputs"]):
        assert main(SMOKE + ["--estimate", "--out", str(tmp_path / "o")] + extra) == 2
        err = capsys.readouterr().err.strip()
        assert err.startswith("leakaudit: error: ") and "\n" not in err and "Traceback" not in err, err


def test_check_inputs_gives_the_estimate(tmp_path, capsys):
    import json

    assert main(SMOKE + ["--check-inputs", "--quiet", "--out", str(tmp_path)]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("estimate: "))
    est = json.loads((tmp_path / "inputs.json").read_text())["estimate"]
    assert line == f"estimate: {est['headline']}" and est["models"] == sum(s["models"] for s in est["steps"])


def test_the_estimate_is_within_a_loose_factor_of_the_training_and_starts_the_audit(adult, trained, capsys):
    model, members, nonmembers = adult
    kw = dict(label="income", profile="smoke")
    est = leakaudit.estimate(model, members, nonmembers, verbose=False, **kw)
    leakaudit.audit(model, members, nonmembers, verbose=True, **kw)
    totals = trained["engines"][-1].totals  # the audit's engine: its models and the seconds they took
    per_model = totals.seconds / max(1, totals.models_trained)
    assert est.fit_seconds / 5 <= per_model <= est.fit_seconds * 5, (est.fit_seconds, per_model)
    assert est.seconds / 5 <= totals.seconds <= (est.seconds + est.remeasured * est.fit_seconds) * 5, (est, totals)
    err = capsys.readouterr().err  # a verbose audit says its estimate before the first analysis
    assert re.search(r"^note: estimate: (about|under) .*\nduplicates: ", err, flags=re.M), err


def test_progress_never_repeats_its_time_left_while_the_plan_grows():
    """A stage whose models are announced batch after batch as fast as they train would give the same time left
    at every line (the models left stay one batch): the line says how many joined instead."""
    now = [0.0]
    buf = io.StringIO()
    st = StageProgress(True, stream=buf, tty=False, interval=10.0, hold_until=None, clock=lambda: now[0])
    st.expect({"dtp": 105})
    with st.stage("dtp", "PDTP"):
        now[0] = 5.0  # its first models come after 5 s of other work: every line falls mid-batch
        for _ in range(12):  # 12 batches of 40 models, 0.25 s each: the stage grows from 105 to 480 models
            st.on_models(0, 40)
            for d in range(1, 41):
                now[0] += 0.25
                st.on_models(d, 40)
    lines = [x for x in buf.getvalue().splitlines() if x.startswith("  dtp: ")]
    assert len(lines) >= 8
    totals = [int(re.search(r"/([\d,]+) models", x).group(1).replace(",", "")) for x in lines]
    lefts = [re.search(r"so far, ([^;]+);", x).group(1) for x in lines]
    audit_lefts = [re.search(r"so far, ([^;]+)$", x).group(1) for x in lines]
    for said in (lefts, audit_lefts):
        shown = (0, None)  # the total when a time left was last shown, and that time
        for total, words in zip(totals, said):
            if words.endswith(" left"):
                assert not (total > shown[0] and words == shown[1]), (words, lines)
                shown = total, words
        assert any("more models planned since the last line" in x for x in said), lines


def test_progress_gives_the_time_left_from_the_timed_fit_before_any_model():
    now = [0.0]
    buf = io.StringIO()
    st = StageProgress(True, stream=buf, tty=False, interval=0.0, hold_until=None, clock=lambda: now[0],
                       per_model=0.5)
    st.expect({"membership": 120})
    with st.stage("membership", "attacks"):
        now[0] = 1.0
        st.on_models(0, 120)
        # 8 pseudo-models at 0.5 s and none trained in 1 s: 5 s / 8 a model, times 120 left
        assert st._audit_words(now[0]) == "audit: 0 of about 120 models, 1 s so far, about 1 min 15 s left"
        now[0] = 13.0
        st.on_models(40, 120)  # 40 models in 13 s: (13 + 4) / 48 s a model, times 80 left
    assert "audit: 40 of about 120 models, 13 s so far, about 28 s left" in buf.getvalue()
