"""What `leakaudit audit` shows: progress on stderr (plain off a terminal, none with --quiet), then on stdout the
verdict line and every check that was not measurable or not run, with the flag or input that would enable it."""

import io
import re

import numpy as np
import pandas as pd
import pytest

from leakaudit.audit.progress import StageProgress
from leakaudit.cli import main
from leakaudit.cli.audit import enabling_hint, summary_lines, verdict_line

SMOKE = ["audit", "--profile", "smoke", "--n-members", "200", "--n-nonmembers", "200"]
_INTERNAL = re.compile(r"population_probs|population_y|population_reference|\breference\b(?![- ]models?)|train_loss")


def test_quiet_prints_no_progress(tmp_path, capsys):
    assert main(SMOKE + ["--out", str(tmp_path / "q"), "--quiet"]) == 0
    cap = capsys.readouterr()
    assert cap.err == ""
    assert re.search(r"^verdict: (PUBLISH|DO NOT PUBLISH|INCONCLUSIVE)\. ", cap.out, flags=re.M)


def test_off_a_terminal_progress_is_plain_stage_lines(tmp_path, capsys):
    assert main(SMOKE + ["--out", str(tmp_path / "p")]) == 0
    cap = capsys.readouterr()
    err = cap.err
    assert "\x1b[" not in err and "\r" not in err  # no colour, no carriage-return animation
    for stage in ("data", "target", "membership", "dtp", "attribute", "property", "mip"):
        assert re.search(rf"^{stage}: .+", err, flags=re.M), (stage, err)
    assert re.search(r"^  dtp done in [0-9.]+ s \([\d,]+ models\); audit: [\d,]+ of about [\d,]+ models, \d+ s so far",
                     err, flags=re.M), err
    assert "models ready" not in err  # no line per batch
    assert "time by stage:" in err and "time by stage" not in cap.out
    # stdout: the files, the counts, one verdict line that does not repeat the outcome
    verdicts = [line for line in cap.out.splitlines() if line.startswith("verdict:")]
    assert len(verdicts) == 1
    assert not re.search(r"verdict: (\w[\w ]*)\. \1:", verdicts[0], flags=re.I), verdicts[0]


def _predictions_only(tmp_path) -> list[str]:
    """`leakaudit audit` of 200 Adult members and 200 non-members given by a model's predictions only."""
    from leakaudit.data import load_adult

    df = load_adult().to_frame().sample(400, random_state=0).reset_index(drop=True)
    df.iloc[:200].to_csv(tmp_path / "train.csv", index=False)
    df.iloc[200:].to_csv(tmp_path / "test.csv", index=False)
    rng = np.random.default_rng(0)
    for name in ("ptrain", "ptest"):
        pd.DataFrame(rng.dirichlet([1, 1], size=200), columns=["p0", "p1"]).to_csv(tmp_path / f"{name}.csv",
                                                                                  index=False)
    return ["audit", "--train", str(tmp_path / "train.csv"), "--test", str(tmp_path / "test.csv"),
            "--label", "income", "--sensitive", "sex", "--predictions-train", str(tmp_path / "ptrain.csv"),
            "--predictions-test", str(tmp_path / "ptest.csv"), "--profile", "smoke", "--out", str(tmp_path / "o")]


def test_predictions_only_say_up_front_that_publish_is_out_of_reach(tmp_path, capsys):
    """Without the model DTP-1 cannot be measured, so the verdict cannot be "publish": stderr says so before the
    inputs are read, naming the flags."""
    assert main(_predictions_only(tmp_path)) == 0
    cap = capsys.readouterr()
    lines = cap.err.splitlines()
    note = [i for i, line in enumerate(lines) if line.startswith("note: ")]
    assert len(note) == 1, cap.err
    assert lines[note[0]] == ("note: the audit has the model's predictions only (--predictions-train), not the model "
                              "(--model): the DTP-1 check retrains the model without each record, so it will be not "
                              "measurable, and the verdict can be \"do not publish\" or \"inconclusive\" but never "
                              "\"publish\"; give the model itself to measure it")
    assert lines[note[0] + 1].startswith("data: ")  # before any input is read: the flags say it
    assert "verdict: PUBLISH" not in cap.out


def test_predictions_only_say_so_before_the_work_under_quiet(tmp_path, capsys, monkeypatch):
    """--quiet silences progress, not the warning about the outcome (issue 63): one line on stderr, written before
    the records are even read, never left for the end of the run."""
    import leakaudit.audit.pipeline as pipeline

    before = {}
    read = pipeline.prepare_data

    def reading(cfg):  # what stderr holds when the audit starts reading its inputs
        before["err"] = capsys.readouterr().err
        return read(cfg)

    monkeypatch.setattr(pipeline, "prepare_data", reading)
    assert main(_predictions_only(tmp_path) + ["--quiet"]) == 0
    rest = capsys.readouterr().err
    assert before["err"].splitlines() == [
        "leakaudit: warning: NotEstimableWarning: the audit has the model's predictions only (--predictions-train), "
        "not the model (--model): the DTP-1 check retrains the model without each record, so it will be not "
        "measurable, and the verdict can be \"do not publish\" or \"inconclusive\" but never \"publish\"; give the "
        "model itself to measure it"]
    assert "never \"publish\"" not in rest


def test_skipped_and_unmeasurable_lines_name_a_flag(tmp_path, capsys):
    assert main(_predictions_only(tmp_path) + ["-q"]) == 0
    out = capsys.readouterr().out
    lines = [line for line in out.splitlines() if line.lstrip().startswith(("not run:", "not measurable:"))]
    names = " ".join(lines)
    for what in ("LiRA, InfoRMIA, shadow", "attribute inference", "property inference", "MIP", "DTP-1"):
        assert what in names, (what, out)
    for line in lines:
        assert re.search(r"--[a-z]", line), f"no flag named: {line}"
        assert not _INTERNAL.search(line), f"internal name: {line}"
    assert out.index("verdict:") < out.index(lines[0])


def test_hints_put_internal_inputs_in_words():
    """The hint comes from the skipped entry's structured ``missing`` inputs, never from parsing its sentence."""
    rmia = {"name": "RMIA", "reason": "needs population_probs, population_y, population_reference",
            "missing": ["population_probs", "population_y", "population_reference"]}
    hint = enabling_hint(rmia)
    assert "--population FILE" in hint and "population_probs" not in hint
    shadow = {"name": "shadow-model attack", "reason": "needs reference", "missing": ["reference"]}
    assert "--model" in enabling_hint(shadow)
    assert "--model" not in enabling_hint({"name": "shadow-model attack", "reason": "needs reference"})
    numeric = {"name": "attribute inference of age", "reason": "'age' is numeric",
               "fix": "bin age into categories (a text column) to infer it"}
    assert "bin age into categories" in enabling_hint(numeric)
    prop = {"name": "property inference", "reason": "needs the training algorithm to train shadow models",
            "missing": ["model"]}
    assert "--model" in enabling_hint(prop)
    mip = {"name": "MIP noise (Izzo et al.)", "reason": "needs a model whose parameters leakaudit can read and set",
           "missing": ["parameters"]}
    assert "--module" in enabling_hint(mip)
    # the sentence alone says nothing to the hint: without a fix or a missing input it points to the report
    assert enabling_hint({**prop, "missing": []}) == "see the report's 'not run' section"


def test_verdict_line_does_not_repeat_the_outcome():
    class V:
        outcome, finding = "do not publish", "LiRA: AUC 0.71 is above 0.6"

    assert verdict_line(V) == "verdict: DO NOT PUBLISH. LiRA: AUC 0.71 is above 0.6"
    V.outcome, V.finding = "inconclusive", "no check shows leakage of the given model, but x."
    assert verdict_line(V) == "verdict: INCONCLUSIVE. No check shows leakage of the given model, but x."


def test_plain_progress_counts_models_with_time_left():
    buf = io.StringIO()
    st = StageProgress(True, stream=buf, tty=False, interval=0.0, hold_until=None)
    with st.stage("dtp", "leave-one-out PDTP"):
        st.on_models(0, 100, "training X")
        st.on_models(25, 100, "training X")
        st.on_models(100, 100, "training X")
    text = buf.getvalue()
    assert text.startswith("dtp: leave-one-out PDTP ...\n")
    assert re.search(r"^  dtp: 25/100 models, \d+ s so far, (about \d+ s|under 1 s) left; "
                     r"audit: 25 of about 100 models", text, flags=re.M), text
    assert re.search(r"^  dtp done in [0-9.]+ s \(100 models\); audit: 100 models, \d+ s so far$", text,
                     flags=re.M), text
    assert "\x1b" not in text and "\r" not in text


def test_progress_counts_the_whole_audit_across_batches_and_stages():
    """Many batches in a stage make no line each: at most one line per ``interval`` seconds and one at the stage's
    end, each with the whole audit's models (the plan's estimates, grown by what the stages announce) and the time
    left at the pace so far; a stage that a setting skips says its share of the time."""
    now = [0.0]
    buf = io.StringIO()
    st = StageProgress(True, stream=buf, tty=False, interval=10.0, hold_until=None, clock=lambda: now[0])
    st.expect({"membership": 100, "dtp": 300, "dtp_removal": 0})
    with st.stage("membership", "attacks"):
        st.on_models(0, 100)
        now[0] = 50.0
        st.on_models(100, 100)  # 100 models in 50 s
    with st.stage("dtp", "PDTP"):
        for _ in range(4):  # 4 batches of 100 models, 20 s each: more models than the 300 expected
            st.on_models(0, 100)
            for d in (25, 50, 75, 100):
                now[0] += 5.0
                st.on_models(d, 100)
    assert st.audit_counts() == (500, 500)
    with st.stage("dtp_removal", "removal", skip="removal=False, --no-removal"):
        now[0] += 130.0
    lines = buf.getvalue().splitlines()
    dtp = [line for line in lines if line.startswith("  dtp: ")]
    assert 1 <= len(dtp) <= 80 / 10 and not any("ready" in line for line in lines), lines
    # 50 of the stage's 300 expected models after 10 s; the audit's 150 of about 400 after 60 s: 0.4 s a model
    assert dtp[0] == ("  dtp: 50/300 models, 10 s so far, about 50 s left; audit: 150 of about 400 models, "
                      "1 min 0 s so far, about 1 min 40 s left"), dtp
    assert "  dtp done in 80.0 s (400 models); audit: 500 models, 2 min 10 s so far" in lines, lines
    assert ("  dtp_removal done in 130.0 s, 50% of the audit's time so far (removal=False, --no-removal skips it); "
            "audit: 500 models, 4 min 20 s so far") in lines, lines


def test_run_plan_tells_the_progress_each_steps_models():
    """The plan's estimates reach the progress before any step runs; a step that does not run expects none."""
    from leakaudit.audit.result.checks import Analysis
    from leakaudit.audit.plan import Plan, Step, run_plan

    st = StageProgress(False)
    seen = []
    steps = (Step("a", "a", "first", lambda *a: 0, lambda ctx, done: seen.append(dict(st._expected)) or Analysis("a"),
                  models=lambda ctx, done: 7),
             Step("b", "b", "second", lambda *a: 0, lambda ctx, done: Analysis("b"), models=lambda ctx, done: 5,
                  when=lambda ctx, done: False))
    run_plan(Plan(steps, ()), None, st, {})
    assert seen == [{"a": 7, "b": 5}] and st._expected == {"a": 0, "b": 0}


def test_input_stage_lines_are_held_until_the_inputs_are_accepted():
    buf = io.StringIO()
    st = StageProgress(True, stream=buf, tty=False)
    with pytest.raises(ValueError):
        with st.stage("data", "loading"):
            raise ValueError("bad column")
    assert buf.getvalue() == ""  # a refused input: its error line stays alone
    st = StageProgress(True, stream=buf, tty=False)
    with st.stage("data", "loading"):
        pass
    assert buf.getvalue() == ""
    with st.stage("target", "model"):
        pass
    assert re.fullmatch(r"data: loading: done in [0-9.]+ s\ntarget: model: done in [0-9.]+ s\n", buf.getvalue())


def test_terminal_progress_uses_a_transient_bar():
    buf = io.StringIO()
    st = StageProgress(True, stream=buf, tty=True, hold_until=None)
    with st.stage("membership", "attacks"):
        st.on_models(0, 8, "")
        st.on_models(8, 8, "")
    text = buf.getvalue()
    assert "\x1b[" in text and "membership done in" in text and st._bar is None


def test_engine_reports_models_done_of_the_total_including_cached(tmp_path):
    from sklearn.tree import DecisionTreeClassifier

    from leakaudit.engine import Engine
    from leakaudit.learners import SklearnLearner

    X = np.arange(40.0).reshape(-1, 1)
    y = (X[:, 0] > 20).astype(int)
    subsets = [np.arange(0, 40, 2) + (k % 2) for k in range(5)]
    for _ in range(2):  # trained, then read from the cache
        calls = []
        Engine(chunk_size=2, cache_dir=tmp_path, on_progress=lambda d, t, s: calls.append((d, t))).predict_many(
            SklearnLearner(DecisionTreeClassifier()), X, y, subsets, 0, X[:3])
        assert calls == [(0, 5), (2, 5), (4, 5), (5, 5)]
    with pytest.raises(Exception, match="on_progress"):
        Engine(on_progress=3)


def test_summary_lines_of_a_result_without_skips():
    class V:
        outcome, finding, checks = "publish", "all 3 checks were measured.", []
        burden_of_proof, policy, counts = "leakage shown", "leakage-shown", {}

    class R:
        verdict, skipped = V, []

    assert summary_lines(R) == ["checks: 0 exceeded, 0 shown below, 0 undecided, 0 not measurable; policy "
                                "leakage-shown (leakage shown)",
                                "verdict: PUBLISH. All 3 checks were measured."]
