"""membership's --dataset and --model take the names of leakaudit.data.registry and leakaudit.learners.registry."""

import typer

from leakaudit import cli
from leakaudit.cli import main
from leakaudit.data.registry import dataset_names
from leakaudit.learners.registry import learner_names


def _option(command: str, flag: str):
    cmd = typer.main.get_command(cli.app).commands[command]
    return next(p for p in cmd.params if flag in p.opts)


def test_membership_help_lists_the_registries():
    assert _option("membership", "--dataset").help == f"One of: {', '.join(dataset_names())}."
    assert _option("membership", "--model").help == f"One of: {', '.join(learner_names(inputs='encoded'))}."


def test_unknown_names_are_one_line_and_exit_2(tmp_path, capsys):
    base = ["membership", "--n-members", "20", "--n-nonmembers", "20", "--n-population", "0", "--attacks", "loss",
            "--out", str(tmp_path)]
    assert main(base + ["--dataset", "nope"]) == 2
    err = capsys.readouterr().err
    assert err == f"leakaudit: error: --dataset must be one of {', '.join(dataset_names())}; got 'nope'\n"
    assert main(base + ["--dataset", "purchase-like", "--model", "svm"]) == 2
    err = capsys.readouterr().err
    names = ", ".join(learner_names(inputs="encoded"))
    assert err == f"leakaudit: error: --model must be one of {names}; got 'svm'\n"
    assert not any(tmp_path.iterdir())
