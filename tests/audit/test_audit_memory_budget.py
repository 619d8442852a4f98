"""An audit whose reference outputs exceed the memory budget holds them on disk and gives the same results."""

import json

import pandas as pd
import pytest

from leakaudit.audit import make_config, run_audit
from leakaudit.cli import main

SMALL = dict(profile="smoke", n_members=150, n_nonmembers=150, epochs=3, seed=3)


def test_a_one_byte_budget_puts_the_outputs_on_disk_and_changes_no_number(tmp_path):
    runs = {}
    for name, budget in (("memory", None), ("disk", 1)):
        run_audit(make_config(**SMALL, cache_dir=tmp_path / f"cache-{name}"), tmp_path / name, verbose=False,
                  memory_budget=budget)
        runs[name] = json.loads((tmp_path / name / "results.json").read_text())
    on_disk = {k: r["resources"]["reference_models"]["outputs_on_disk"] for k, r in runs.items()}
    assert on_disk == {"memory": False, "disk": True}
    for d in runs.values():
        d.pop("created"), d.pop("timings"), d.pop("resources"), d["config"].pop("cache_dir")
    assert runs["memory"] == runs["disk"]
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "memory" / "records.csv"),
                                  pd.read_csv(tmp_path / "disk" / "records.csv"))
    assert not list((tmp_path / "cache-disk").glob("*/*.tmp*"))  # the file had no name: nothing is left


@pytest.mark.parametrize("bad", ["lots", "0", "-3GB"])
def test_a_bad_memory_budget_is_one_line_and_exit_2(bad, tmp_path, capsys):
    code = main(["audit", "--profile", "smoke", "--memory-budget", bad, "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "memory_budget" in err
    assert not (tmp_path / "o").exists()
