"""The benchmark scripts import, their report code works on fake results, and kernel_ab runs at tiny sizes.

No full benchmark runs here."""


import numpy as np
import pytest

pytestmark = pytest.mark.slow

SCRIPTS = ["_common", "run_all", "bench_lira_vs_sacroml", "bench_pdtp_vs_art", "bench_shadow_vs_art",
           "bench_reference_vs_privacymeter", "bench_scaling", "bench_machine_limit", "bench_parallel", "bench_kernels",
           "bench_audit_mlp_target", "bench_membership_throughput", "lira_forest_statistic", "forest_kernel_profile",
           "kernel_ab", "bench_quantile_vs_lira", "bench_lm_scoring", "lm_memorisation", "bench_dp_sgd",
           "dp_audit_soundness", "bench_dpaudit_vs_privacymeter", "bench_bavaria",
           "bench_dpaudit_vs_privacymeter_dpsgd", "lm_blind_guard", "bench_audit_scaling", "pdtp_screening",
           "label_only_adult", "structural_survey", "lm_dataset_inference", "lm_canary_audit",
           "lm_reference_attacks", "lm_canary_audit_dp", "lm_extraction", "gb_leaf_refit_accuracy",
           "bench_pipeline_gb_audit", "lm_window_attacks", "boosted_remedy"]


@pytest.mark.parametrize("name", SCRIPTS)
def test_script_imports(load_benchmark, name):
    mod = load_benchmark(name)
    if name.startswith("bench_") or name in ("run_all", "lira_forest_statistic", "forest_kernel_profile", "kernel_ab",
                                             "lm_memorisation", "dp_audit_soundness", "lm_blind_guard", "label_only_adult",
                                             "structural_survey", "lm_dataset_inference", "lm_canary_audit",
                                             "lm_reference_attacks", "lm_canary_audit_dp", "lm_extraction",
                                             "lm_window_attacks", "boosted_remedy"):
        assert callable(mod.main)


def test_kernel_ab_runs_both_comparisons_and_finds_the_same_numbers(load_benchmark, capsys):
    mod = load_benchmark("kernel_ab")
    mod.main(["mlp-rows", "--refs", "2", "--reps", "1"])
    mod.main(["mlp-onehot", "--refs", "2", "--reps", "1"])
    mod.main(["forest-query", "--models", "2", "--reps", "1"])
    from leakaudit.learners import _forest_native

    native = _forest_native.library() is not None
    if native:
        mod.main(["forest-native", "--models", "2", "--reps", "1"])
    out = capsys.readouterr().out
    assert out.count("bit for bit: True") == (3 if native else 2), out
    assert "rows together (default)" in out and "bitsets (2,000 queried)" in out
    assert "one-hot groups 0 vs 7; largest weight difference" in out


def test_mean_ci_and_the_lm_set_audit_summaries(load_benchmark):
    C = load_benchmark("_common")
    ci = C.mean_ci([0.2, 0.4], clip=(0.3, 1.0))
    assert ci["mean"] == pytest.approx(0.3) and ci["ci95"][0] == 0.3 and ci["ci95"][1] > 1.0 - 1e-12
    assert np.isnan(C.mean_ci([1.0])["ci95"][0])
    K = load_benchmark("lm_canary_audit")
    row = {"epsilon_lower_bound": 1.0, "auc": 0.9, "tpr_at_1pct_fpr": 0.5, "null_epsilon_lower_bound": 0.0,
           "null_auc": 0.5, "null_exceed": 1, "null_redraws": 100}
    summ = K.summarise([{"designs": {d: row for d in K.DESIGNS}}] * 2)
    assert summ["new_token"]["null_redraws_exceeding_0"]["k"] == 2 and summ["rare_token"]["auc"]["mean"] == 0.9
    R = load_benchmark("lm_reference_attacks")
    m = {"auc": 0.6, "tpr_at_0.01": 0.02, "tpr_at_0.001": 0.0}
    text = R.markdown(R.summarise([{"epochs": {1: {"lm_loss": m, "lm_reference": m}}}] * 3))
    assert "| reference-model ratio | 0.600 [0.600, 0.600] | 0.020" in text


def test_quality_hand_computed(load_benchmark):
    C = load_benchmark("_common")
    # members 0.9, 0.4; non-members 0.5, 0.1: 3 of 4 (member, non-member) pairs ordered -> AUC 0.75
    q = C.quality([1, 1, 0, 0], [0.9, 0.4, 0.5, 0.1])
    assert q["auc"] == pytest.approx(0.75)


def test_comparison_row_and_table(load_benchmark):
    C = load_benchmark("_common")
    R = load_benchmark("run_all")
    row = C.comparison("x", "work", "Peer", "1.0", 10.0, 2.0, {"auc": 0.6, "tpr_at_0.1%fpr": 0.01},
                       {"auc": 0.61, "tpr_at_0.1%fpr": 0.02}, 1.0, 2.0, peer_cpu=4.0, our_cpu=1.0)
    assert row["speedup"] == pytest.approx(5.0) and row["cpu_speedup"] == pytest.approx(4.0)
    text = "\n".join(R.comparison_table([row, {"name": "y", "error": "RuntimeError: boom"}], "cmd"))
    assert "**5.0x** / **4.0x**" in text and "`y` did not run" in text and "TPR@0.1% 2.0 %" in text
    assert "runs" not in row["notes"] and "our_runs" not in row
    rep = C.comparison("x", "work", "Peer", "1.0", 10.0, 2.0, None, None, 1.0, 2.0, notes="n",
                       our_runs=[2.0, 1.5, 2.5], peer_runs=[9.0, 10.0, 11.0])
    assert rep["notes"] == "n; each side the median of 3 runs of the same work (ours 1.5-2.5 s, the peer 9-11 s)"
    assert rep["repeat"] == 3 and rep["our_runs"] == [2.0, 1.5, 2.5] and rep["peer_runs"] == [9.0, 10.0, 11.0]


def test_spearman_matches_definition(load_benchmark):
    C = load_benchmark("_common")
    a = np.array([1.0, 2.0, 3.0, 4.0])
    assert C.spearman(a, a ** 3) == pytest.approx(1.0)
    assert C.spearman(a, -a) == pytest.approx(-1.0)


def test_targets_section_flags_each_comparison_against_10x(load_benchmark):
    C = load_benchmark("_common")
    R = load_benchmark("run_all")
    fast = C.comparison("a", "work", "Peer", "1.0", 30.0, 1.0, {"auc": 0.60, "tpr_at_0.1%fpr": 0.01},
                        {"auc": 0.62, "tpr_at_0.1%fpr": 0.03}, 1.0, 1.0)
    slow = C.comparison("b", "work", "Peer", "1.0", 9.0, 1.0, {"auc": 0.60, "tpr_at_0.1%fpr": float("nan")},
                        {"auc": 0.59, "tpr_at_0.1%fpr": float("nan")}, 1.0, 1.0)
    res = {"lira_vs_sacroml_x": {"comparisons": [fast]}, "shadow_vs_art": {"comparisons": [slow]},
           "membership_throughput": {"comparisons": [slow]},  # not a peer tool: not listed
           "machine_limit": {"cases": [{"name": "mlp", "fraction_of_all_threads_peak": 0.48,
                                        "cpu_fraction_of_1thread_peak": 0.53, "work": "nets, dense, native C kernel"},
                                       {"name": "mlp_1thread", "fraction_of_1thread_peak": 0.58}]}}
    text = "\n".join(R.targets_section(res))
    assert "at least 10x" in text and "≥ 10x CPU" in text
    # ratio CPU / wall: these rows give no CPU time ("–"), so only the wall column judges them
    assert "| a (lira_vs_sacroml_x) | – / 30.0x | – | yes | 0.600 → 0.620 (+0.020) | 1.0 % → 3.0 % (+2.0 %) |" in text
    assert "| b (shadow_vs_art) | – / 9.0x | – | **no** | 0.600 → 0.590 (−0.010) | n/a |" in text
    assert "membership_throughput" not in text
    assert "both cores 48.0 % of the 2-thread peak" in text and "one core 58.0 % of the 1-thread peak" in text
    assert "(dense 104-64-2 nets, native C kernel; section" in text  # the kernel that trained, from the row's work


def test_dpaudit_side_by_side_reads_the_peer_functions_and_draws_known_epsilon(load_benchmark, tmp_path):
    mod = load_benchmark("bench_dpaudit_vs_privacymeter")
    (tmp_path / "audit.py").write_text(
        "import torch\n"  # never executed: only the three functions are taken
        "def p_value_DP_audit(m, r, v, eps, delta):\n    return 1.0\n"
        "def get_eps_audit(m, r, v, delta, p):\n    return 0.0\n"
        "def compute_abstain_attack_results(s, t, delta=0, p_value=0.05):\n"
        "    return {'eps_opt': get_eps_audit(len(t), 1, 1, delta, p_value) + np.sqrt(4.0)}\n")
    peer, _ = mod.load_peer(str(tmp_path))
    assert peer["compute_abstain_attack_results"](np.zeros(3), np.zeros(3))["eps_opt"] == 2.0
    (tmp_path / "audit.py").write_text("def p_value_DP_audit(m, r, v, eps, delta):\n    return 1.0\n")
    with pytest.raises(SystemExit, match="lacks"):
        mod.load_peer(str(tmp_path))
    member, scores, eps = mod.canaries("rr-2", 200_000, np.random.default_rng(0))
    assert eps == 2.0
    agree = np.mean((scores > 0.5) == (member == 1))
    assert agree == pytest.approx(np.exp(2) / (1 + np.exp(2)), abs=0.005)
    member, scores, eps = mod.canaries("null", 200_000, np.random.default_rng(0))
    assert eps == 0.0 and abs(np.corrcoef(member, scores)[0, 1]) < 0.01


def test_audit_scaling_digests_ignore_place_and_time_only(load_benchmark, tmp_path):
    import json

    mod = load_benchmark("bench_audit_scaling")
    base = {"created": "2026-01-01T00:00:00Z", "command": "leakaudit audit --out a", "timings": {"dtp": 1.0},
            "resources": {"peak_memory_mb": 100.0}, "config": {"seed": 0, "cache_dir": "/tmp/a"},
            "verdict": {"outcome": "publish"}}
    other_place = {**base, "created": "2027-01-01T00:00:00Z", "command": "leakaudit audit --out b",
                   "timings": {"dtp": 9.0}, "resources": {"peak_memory_mb": 900.0},
                   "config": {"seed": 0, "cache_dir": "/tmp/b"}}
    other_verdict = {**base, "verdict": {"outcome": "do not publish"}}
    digests = []
    for i, res in enumerate((base, other_place, other_verdict)):
        d = tmp_path / str(i)
        d.mkdir()
        (d / "results.json").write_text(json.dumps(res))
        (d / "records.csv").write_text("record,pdtp\n0,1.5\n")
        digests.append(mod.results_digests(d))
    assert digests[0] == digests[1]
    assert digests[0]["results_json"] != digests[2]["results_json"]
    assert digests[0]["records_csv"] == digests[2]["records_csv"]


def test_audit_scaling_exponent_in_reference_models_per_seed_and_over_seeds(load_benchmark):
    mod = load_benchmark("bench_audit_scaling")
    slopes = {0: 0.4, 1: 0.5, 2: 0.6}  # time = c * n_ref ** slope, another c per seed
    rows = [{"n_members": 4000, "n_reference": k, "seed": s, "seconds": (2 + s) * k ** b,
             "cpu_seconds": 3 * k ** b, "peak_memory_mb": 500 + k, "stage_seconds": {"membership": k ** (2 * b)}}
            for s, b in slopes.items() for k in (16, 64, 256)]
    out = mod._reference_over_seeds(rows)
    for key, factor in (("seconds", 1), ("cpu_seconds", 1), ("membership_seconds", 2)):
        assert out[key]["per_seed"] == pytest.approx({s: factor * b for s, b in slopes.items()})
        assert out[key]["mean"] == pytest.approx(factor * 0.5)
        lo, hi = out[key]["interval"]
        assert lo < factor * 0.5 < hi and hi - lo > 0  # three different slopes: a real interval
    assert out["peak_memory_mb"]["per_seed"][0] == out["peak_memory_mb"]["per_seed"][2] > 0


def test_rss_sampler_tells_a_processs_own_arrays_from_a_mapped_files_pages(load_benchmark, tmp_path):
    import subprocess
    import sys

    mod = load_benchmark("bench_audit_scaling")
    child = f"""
import time, numpy as np
a = np.ones(200 * 2**20 // 8)  # 200 MB of the process's own memory
m = np.memmap({str(tmp_path / "f.bin")!r}, dtype=np.float64, mode="w+", shape=(100 * 2**20 // 8,))
m[:] = 1.0  # 100 MB of a file's pages, resident once written
time.sleep(1.5)
"""
    proc = subprocess.Popen([sys.executable, "-c", child])
    sampler = mod.RssSampler(proc.pid, interval=0.05)
    proc.wait()
    got = sampler.stop()
    assert 190 <= got["peak_rss_anon_mb"] < 290, got
    assert 95 <= got["peak_rss_file_mb"], got


def test_pipeline_gb_fit_costs_measure_both_sides(load_benchmark):
    mod = load_benchmark("bench_pipeline_gb_audit")
    out = mod.fit_costs(200, 2)
    assert out["fits"] == 2 and out["cpu_per_fit_sklearn"] > 0 and out["cpu_per_fit_leakaudit"] > 0
    gaps = out["mean_abs_gap_to_sklearn_same_seed"]["values"] + out["mean_abs_gap_sklearn_two_seeds"]["values"]
    assert len(gaps) == 4 and all(0 <= g < 0.2 for g in gaps)
