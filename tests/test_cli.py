import subprocess
import sys

from leakaudit import __version__
from leakaudit.cli import main


def test_version(capsys):
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"leakaudit {__version__}"


def test_reproduce_list_one_name_per_line(capsys):
    assert main(["reproduce", "--list"]) == 0
    names = capsys.readouterr().out.split()
    assert names == sorted(names)


def test_unknown_reproduction_is_one_line_exit_2(capsys):
    assert main(["reproduce", "no-such-thing", "--profile", "smoke"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unknown reproduction 'no-such-thing'" in err


def test_usage_error_exit_2_without_traceback():
    p = subprocess.run([sys.executable, "-m", "leakaudit.cli", "reproduce", "--profile"],
                       capture_output=True, text=True)
    assert p.returncode == 2
    assert "Traceback" not in p.stderr
