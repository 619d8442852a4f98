"""A torch-module target (--model weights.pt --module pkg.mod:Class) is retrained from its class: the
reference-model attacks, the shadow attack, PDTP and MIP run instead of being skipped."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

torch = pytest.importorskip("torch")

from leakaudit.audit import make_config, run_audit  # noqa: E402
from leakaudit.audit.inputs.data import prepare_data  # noqa: E402

HELPERS = Path(__file__).resolve().parents[1] / "learners"


def test_torch_module_target_is_retrained(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(HELPERS))
    from leakaudit.learners.torch_module import TorchModuleLearner

    base = dict(profile="smoke", n_members=120, n_nonmembers=120, seed=4)
    data = prepare_data(make_config(**base))
    kwargs = {"n_in": int(data.X_mem.shape[1]), "hidden": 16}
    lrn = TorchModuleLearner(module="_torch_module_helpers:TinyNet", module_kwargs=kwargs, epochs=5)
    model = lrn.fit(data.X_mem, data.y_mem, random_state=0, n_classes=data.n_classes)
    torch.save(model.module.state_dict(), tmp_path / "w.pt")

    cfg = make_config(**base, model=tmp_path / "w.pt", module="_torch_module_helpers:TinyNet", module_kwargs=kwargs,
                      training={"epochs": 5, "optimizer": "adam", "lr": 0.001, "batch_size": 32})
    res = run_audit(cfg, tmp_path / "out", verbose=False)
    assert res.target["kind"] == "torch" and res.target["retrainable"]
    assert "adam lr 0.001, 5 epochs, batch 32" in res.target["description"]
    assert {"loss", "lira", "informia", "shadow"} == set(res.membership)
    assert res.dtp is not None and res.dtp["n_records"] == 100
    assert res.mip is not None and res.mip["parameters"] == sum(p.numel() for p in model.module.parameters())
    assert not any("training algorithm" in s["reason"] for s in res.skipped)
    rec = pd.read_csv(tmp_path / "out" / "records.csv")
    assert rec["score_shadow"].notna().all() and rec["pdtp"].notna().sum() == 100
    # the audited model's own outputs are what the attacks score: train accuracy matches the loaded weights
    acc = float(np.mean(model.predict_proba(data.X_mem).argmax(1) == data.y_mem))
    assert res.target["train_accuracy"] == pytest.approx(acc)


def test_module_kwargs_that_do_not_fit_are_one_clear_error(tmp_path, monkeypatch):
    from leakaudit.exceptions import InvalidParameterError

    monkeypatch.syspath_prepend(str(HELPERS))
    torch.save({}, tmp_path / "w.pt")
    cfg = make_config(profile="smoke", n_members=50, n_nonmembers=50, model=tmp_path / "w.pt",
                      module="_torch_module_helpers:TinyNet", module_kwargs={"width": 3})
    with pytest.raises(InvalidParameterError, match="module_kwargs"):
        run_audit(cfg, tmp_path / "out", verbose=False)
    with pytest.raises(InvalidParameterError, match="module_kwargs needs module"):
        make_config(profile="smoke", module_kwargs={"n_in": 3})


def test_module_kwargs_flag_must_be_a_json_object(tmp_path, capsys):
    from leakaudit.cli import main

    for bad in ("{n_in: 3", "[1, 2]"):
        rc = main(["audit", "--model", str(tmp_path / "w.pt"), "--module", "x:Y", "--module-kwargs", bad,
                   "--out", str(tmp_path / "out"), "--profile", "smoke"])
        err = capsys.readouterr().err.strip()
        assert rc == 2 and "--module-kwargs" in err and len(err.splitlines()) == 1
    assert not (tmp_path / "out").exists()


def test_a_torch_module_in_memory_is_named_by_its_class_with_its_arguments_in_words(tmp_path, monkeypatch):
    """leakaudit.audit() of a torch module and its learner: the report names the class (never "fresh instances of
    None") and shows its arguments as name=value, never a Python dict."""
    import html as _html

    import leakaudit
    from leakaudit.learners.torch_module import TorchModuleLearner

    monkeypatch.syspath_prepend(str(HELPERS))
    from _torch_module_helpers import TinyNet

    rng = np.random.default_rng(0)
    X = rng.normal(size=(240, 3))
    df = pd.DataFrame(X, columns=["a", "b", "c"]).assign(label=(X[:, 0] > 0).astype(int))
    mem, non = df.iloc[:120], df.iloc[120:]
    kwargs = {"n_in": 3, "hidden": 16}
    lrn = TorchModuleLearner(module="_torch_module_helpers:TinyNet", module_kwargs=kwargs, epochs=3)
    net = TinyNet(**kwargs)
    res = leakaudit.audit(net, mem, non, label="label", learner=lrn, profile="smoke", seed=0)
    recipe = res.settings.retraining_recipe
    assert recipe.algorithm == "fresh instances of TinyNet, trained by leakaudit"
    assert recipe.module_arguments == "n_in=3, hidden=16" and "module_kwargs" not in recipe.parameters
    assert ("as fresh instances of TinyNet(n_in=3, hidden=16), adam lr 0.001, 3 epochs, batch 32, weight decay 0"
            in res.target["description"])
    page = _html.unescape((res.save(tmp_path / "out") / "report.html").read_text())
    assert "fresh instances of TinyNet" in page and "None" not in page and "{'" not in page
