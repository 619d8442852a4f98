"""``--device`` of the commands that train torch models: one line and exit 2 for a device the model cannot use,
checked before any data are read."""

import pytest

from leakaudit.cli import main

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("args, words", [
    (["membership", "--device", "gpu"], "--device must be 'cpu', 'cuda', 'cuda:N' or 'auto'; got 'gpu'"),
    (["membership", "--model", "logreg", "--device", "cuda:0"],
     "--device cuda:0: --model logreg (LogisticRegression) trains on the CPU only"),
    (["dtp", "pdtp", "--model", "nb", "--device", "cuda"], "--device cuda: --model nb (NaiveBayes) trains on the CPU"),
    (["dtp", "reduce", "--device", "tpu"], "--device must be 'cpu', 'cuda', 'cuda:N' or 'auto'; got 'tpu'"),
])
def test_a_device_the_model_cannot_use_is_one_line_exit_2(args, words, capsys, tmp_path):
    assert main([*args, "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("leakaudit: error: ") and words in err
    assert not (tmp_path / "out").exists()


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the refusal on a machine without CUDA")
@pytest.mark.parametrize("args", [["membership"], ["dtp", "pdtp", "--model", "mlp"], ["dp-audit", "--epsilon", "2"]])
def test_cuda_without_cuda_is_one_line_exit_2(args, capsys, tmp_path):
    assert main([*args, "--device", "cuda", "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--device cuda but CUDA is not available here" in err


def test_membership_records_the_device(tmp_path, capsys):
    import json

    out = tmp_path / "m"
    rc = main(["membership", "--model", "logreg", "--attacks", "loss", "--n-members", "40", "--n-nonmembers", "40",
               "--n-population", "0", "--n-boot", "10", "--device", "auto", "--out", str(out)])
    assert rc == 0, capsys.readouterr().err
    assert json.loads((out / "membership.json").read_text())["device"] == "cpu"
