"""`leakaudit audit --config FILE`: every flag is a key; `out` is relative to the file; flags override the file."""

import json

import pytest

from leakaudit.audit.config import RunOptions, load_config, load_config_and_options
from leakaudit.cli import main

SMALL = 'profile = "smoke"\nn_members = 200\nn_nonmembers = 200\n'


def test_out_in_the_file_is_relative_to_it_and_a_flag_overrides_it(tmp_path, capsys):
    (tmp_path / "conf").mkdir()
    cfg_file = tmp_path / "conf" / "audit.toml"
    cfg_file.write_text(SMALL + 'out = "sub/dir"\ncheck_inputs = true\nquiet = true\n')
    assert main(["audit", "--config", str(cfg_file)]) == 0
    assert (tmp_path / "conf" / "sub" / "dir" / "inputs.json").is_file()
    assert f"wrote {tmp_path / 'conf' / 'sub' / 'dir'}/inputs.json" in capsys.readouterr().out
    assert main(["audit", "--config", str(cfg_file), "--out", str(tmp_path / "flag")]) == 0
    assert (tmp_path / "flag" / "inputs.json").is_file()


def test_a_full_audit_writes_to_the_files_out(tmp_path, capsys):
    cfg_file = tmp_path / "audit.toml"
    cfg_file.write_text('[audit]\n' + SMALL + 'out = "sub/dir"\nquiet = true\nsensitive = "sex"\n')
    assert main(["audit", "--config", str(cfg_file)]) == 0
    res = json.loads((tmp_path / "sub" / "dir" / "results.json").read_text())
    assert res["data"]["sensitive"] == ["sex"] and "out" not in res["config"]
    cap = capsys.readouterr()
    assert cap.err == ""  # quiet = true in the file
    assert f"wrote {tmp_path / 'sub' / 'dir'}/results.json" in cap.out


def test_every_flag_is_accepted_as_a_key(tmp_path):
    f = tmp_path / "c.toml"
    f.write_text('membership_column = "m"\ndata = "d.csv"\nlabel = "y"\nsensitive = ["a", "b"]\n'
                 'population = "p.csv"\nmodel = "m.pt"\nmodule = "pkg.mod:Net"\nmodule_kwargs = {n_in = 3}\n'
                 'model_input = "encoded"\nprofile = "thorough"\nseed = 3\nbackend = "ray"\naddress = "auto"\n'
                 'cache_dir = "cache"\nn_members = 50\nn_nonmembers = 60\ndtp_rule = "long"\n'
                 'epsilon_budget = 1.5\nexit_code = true\nout = "o"\ncheck_inputs = true\nquiet = true\n')
    cfg, opts = load_config_and_options(f)
    assert cfg.data == tmp_path / "d.csv" and cfg.population == tmp_path / "p.csv" and cfg.model == tmp_path / "m.pt"
    assert cfg.cache_dir == tmp_path / "cache" and cfg.module_kwargs == {"n_in": 3} and cfg.sensitive == ["a", "b"]
    assert (cfg.profile, cfg.seed, cfg.backend, cfg.dtp_rule, cfg.epsilon_budget, cfg.exit_code) == (
        "thorough", 3, "ray", "long", 1.5, True)
    assert opts == RunOptions(out=tmp_path / "o", check_inputs=True, quiet=True)
    assert load_config(f).seed == 3  # the run options are accepted (and dropped) by load_config too
    # flags win over the file; None means "not given"
    cfg, opts = load_config_and_options(f, seed=9, out=tmp_path / "x", quiet=None)
    assert cfg.seed == 9 and opts.out == tmp_path / "x" and opts.quiet


def test_unknown_key_is_one_line_exit_2(tmp_path, capsys):
    f = tmp_path / "c.toml"
    f.write_text('profile = "smoke"\noutput = "x"\n')
    assert main(["audit", "--config", str(f), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unknown key 'output'" in err and "docs/config.md" in err


@pytest.mark.parametrize("line, word", [('quiet = "loud"', "quiet"), ("out = 3", "out")])
def test_bad_run_option_is_one_line_exit_2(tmp_path, capsys, line, word):
    f = tmp_path / "c.toml"
    f.write_text(line + "\n")
    assert main(["audit", "--config", str(f)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and word in err and "Traceback" not in err
