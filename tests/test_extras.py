"""The light install: the core dependencies run a scikit-learn audit; every optional package belongs to an extra,
and a feature whose extra is missing says so in one line naming it (``leakaudit._extras.require``)."""

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from leakaudit._extras import EXTRAS, extra_of, require
from leakaudit.exceptions import UnsupportedError

PYPROJECT = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())["project"]


def _name(requirement: str) -> str:
    for stop in "<>=!~[; ":
        requirement = requirement.split(stop)[0]
    return requirement.lower()


def test_every_optional_module_is_in_its_extra_and_not_a_core_dependency():
    core = {_name(r) for r in PYPROJECT["dependencies"]}
    extras = {extra: {_name(r) for r in reqs} for extra, reqs in PYPROJECT["optional-dependencies"].items()}
    for module, (dist, extra) in EXTRAS.items():
        assert dist.lower() in extras[extra], (module, extra)
        assert dist.lower() not in core, module
    # the heavy stacks stay out of the core install
    assert not core & {"torch", "ray", "transformers", "peft", "opacus", "dp-accounting", "pyarrow", "xgboost",
                       "xgboost-cpu", "lightgbm"}


def test_require_imports_or_names_the_extra(monkeypatch):
    import importlib

    assert require("json", "reading JSON").__name__ == "json"
    assert extra_of("dp_accounting.pld") == ("dp-accounting", "dp")

    def absent(name, package=None):
        raise ModuleNotFoundError(f"No module named {name.split('.')[0]!r}", name=name.split(".")[0])

    monkeypatch.setattr(importlib, "import_module", absent)
    with pytest.raises(UnsupportedError) as err:
        require("transformers", "language-model audits")
    assert str(err.value) == ("language-model audits needs transformers, which is not installed: "
                              "pip install 'leakaudit[lm]'")

    def broken(name, package=None):
        raise ImportError("libtorch_cpu.so: cannot open shared object file")

    monkeypatch.setattr(importlib, "import_module", broken)
    with pytest.raises(UnsupportedError, match=r"needs torch, which does not import \(ImportError: libtorch.*"
                                               r"pip install 'leakaudit\[torch\]'$"):
        require("torch", "the torch learners")


# every optional package unimportable, as after `pip install leakaudit`; each feature below names its extra
CODE = r"""
import importlib.abc, sys
BLOCKED = set(sys.argv[1].split(","))
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name.split(".")[0])
sys.meta_path.insert(0, Block())
import numpy as np
from leakaudit.exceptions import UnsupportedError

def says(what, fn):
    try:
        fn()
    except UnsupportedError as e:
        print(what, "|", e)
    else:
        print(what, "| no error")

X = np.random.default_rng(0).random((40, 4)); y = (X[:, 0] > 0.5).astype(int)

def torch_mlp():
    from leakaudit.learners import TorchMLP
    TorchMLP(hidden=(8,), mode="fast", epochs=1, backend="torch").fit(X, y, random_state=0)

def parquet():
    from leakaudit.data import read_table
    read_table(sys.argv[2])

def accounting():
    from leakaudit.learners.dp_sgd import dpsgd_accounted_epsilon
    dpsgd_accounted_epsilon(noise_multiplier=1.0, sampling="poisson", sampling_rate=0.01, steps=100, epochs=1, delta=1e-5)

def ray():
    from leakaudit.engine._backends import RayBackend
    RayBackend(1, None)

def sentiment():
    from leakaudit.property.predicates import _analyzer
    _analyzer()

def language_model():
    from leakaudit.lm.load import load_tokenizer
    load_tokenizer(sys.argv[2])

def xgboost():
    from leakaudit.learners import XGBoostLearner
    XGBoostLearner(n_rounds=2).fit(X, y, random_state=0)

def lightgbm():
    from leakaudit.learners import LightGBMLearner
    LightGBMLearner(n_rounds=2).fit(X, y, random_state=0)

for what, fn in [("torch", torch_mlp), ("parquet", parquet), ("dp", accounting), ("ray", ray),
                 ("text", sentiment), ("lm", language_model), ("xgboost", xgboost), ("lightgbm", lightgbm)]:
    says(what, fn)
print("imported:", " ".join(sorted(m for m in BLOCKED if m in sys.modules)) or "none")
"""


def test_each_feature_without_its_extra_names_the_extra(tmp_path):
    blocked = ",".join(EXTRAS)
    (tmp_path / "t.parquet").write_bytes(b"PAR1")  # refused before it is read
    out = subprocess.run([sys.executable, "-c", CODE, blocked, str(tmp_path / "t.parquet")], capture_output=True,
                         text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    lines = dict(ln.split(" | ", 1) for ln in out.stdout.splitlines() if " | " in ln)
    assert set(lines) == {"torch", "parquet", "dp", "ray", "text", "lm", "xgboost", "lightgbm"}
    for extra, message in lines.items():
        assert message.endswith(f"pip install 'leakaudit[{extra}]'"), (extra, message)
        assert "which is not installed" in message and "\n" not in message, message
    assert out.stdout.splitlines()[-1] == "imported: none"
