"""``leakaudit property`` on synthetic data, and ``--theory``."""

import json

from leakaudit.cli import main


def test_theory_only(capsys):
    assert main(["property", "--t0", "0.3", "--t1", "0.7", "--poison", "0.1", "--theory"]) == 0
    out = capsys.readouterr().out
    assert "window (0.159,0.370]" in out and "poison 1-f" in out


def test_synthetic_run_writes_json_and_plot(tmp_path, capsys):
    rc = main(["property", "--dataset", "synthetic", "--t0", "0.05", "--t1", "0.15", "--poison", "0,0.1",
               "--n-train", "200", "--shadow", "10", "--ensemble", "10", "--queries", "50", "--targets", "20",
               "--rows", "3000", "--out", str(tmp_path)])
    assert rc == 0
    d = json.loads((tmp_path / "property.json").read_text())
    assert [r["poison_rate"] for r in d["results"]] == [0.0, 0.1]
    r = d["results"][1]
    assert r["n_poison"] == 20 and r["n_queries"] == 70 and r["n_shadow_total"] == 20 and r["n_targets"] == 20
    assert 0 <= r["accuracy_ci"][0] <= r["accuracy"] <= r["accuracy_ci"][1] <= 1
    assert (tmp_path / "property.png").exists()


def test_bad_arguments(capsys):
    assert main(["property", "--t0", "0.7", "--t1", "0.3", "--theory"]) == 2
    assert "t0 must be smaller" in capsys.readouterr().err
    assert main(["property", "--t0", "0.1", "--t1", "0.3", "--poison", "x", "--theory"]) == 2
    assert main(["property", "--dataset", "nope", "--t0", "0.1", "--t1", "0.3"]) == 2


def test_matched_shadows_option(tmp_path, capsys):
    rc = main(["property", "--dataset", "synthetic", "--t0", "0.05", "--t1", "0.15", "--poison", "0.1",
               "--n-train", "200", "--shadow", "5", "--ensemble", "10", "--queries", "40", "--targets", "10",
               "--rows", "3000", "--matched-shadows", "--out", str(tmp_path)])
    assert rc == 0
    r = json.loads((tmp_path / "property.json").read_text())["results"][0]
    assert r["n_poison"] == 20 and r["n_shadow_total"] == 10 and r["n_targets"] == 10


def test_cache_dir_reruns_without_training(tmp_path, capsys):
    """--cache-dir: a second run reuses every trained model (the engine's statistics say none was trained) and
    gives the same result."""
    args = ["property", "--dataset", "synthetic", "--t0", "0.05", "--t1", "0.15", "--poison", "0.1",
            "--n-train", "200", "--shadow", "5", "--ensemble", "10", "--queries", "40", "--targets", "10",
            "--rows", "3000", "--cache-dir", str(tmp_path / "cache")]
    runs = []
    for k in range(2):
        assert main(args + ["--out", str(tmp_path / f"run{k}")]) == 0
        runs.append(json.loads((tmp_path / f"run{k}" / "property.json").read_text())["results"][0])
    assert runs[0]["engine_stats"]["models_trained"] > 0
    assert runs[1]["engine_stats"]["models_trained"] == 0
    strip = lambda r: {k: v for k, v in r.items() if k != "engine_stats" and not k.startswith("seconds")}  # noqa: E731
    assert strip(runs[0]) == strip(runs[1])
