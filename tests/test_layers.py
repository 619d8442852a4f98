"""The package's import graph follows its layers (data flows down; see src/leakaudit/__init__.py).

A module imports only from lower layers; within layer 3 the only sibling edges are to ``membership``
(attribute's reductions use membership oracles; dtp uses Long's output binning and attack protocols; lm calibrates
language-model scores with membership's LiRA and RMIA) and from ``lm`` to ``dpaudit`` (the canary audit of
fine-tuning turns canary scores into the one-run epsilon lower bound).
``cli`` (a package: one module per command) is the top layer and imports its commands statically, so this
walk sees every edge; no module loads one of ours by a name in a string (``import_module``), which it would not.
"""

import ast
import re
from pathlib import Path

import leakaudit

ROOT = Path(leakaudit.__file__).parent
LAYER = {
    "exceptions": -1, "_text": -1, "_interrupt": 0, "_names": 0, "_validation": 0, "_random": 0, "_results": 0, "_resources": 0, "_extras": 0,
    "data": 1, "metrics": 1, "learners": 1,
    "engine": 2,
    "membership": 3, "dtp": 3, "attribute": 3, "property": 3, "mip": 3, "dpaudit": 3, "lm": 3,
    "reproduce": 4, "checks": 4, "report": 4, "audit": 4,
    "cli": 5,
}
SIBLING_EDGES = {("dtp", "membership"), ("attribute", "membership"), ("lm", "membership"), ("lm", "dpaudit"),
                 ("audit", "report")}


def _top(path: Path) -> str:
    rel = path.relative_to(ROOT)
    return rel.parts[0].removesuffix(".py")


def type_checking_only(tree: ast.Module) -> set[int]:
    """ids of the import nodes under ``if TYPE_CHECKING:``: types named in annotations, never imported at run time
    (the report names the audit's result types it reads; the audit imports the report to write it)."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            out |= {id(n) for b in node.body for n in ast.walk(b)}
    return out


def _imported_tops(path: Path):
    tree = ast.parse(path.read_text())
    pkg_parts = list(path.relative_to(ROOT).parent.parts)
    skip = type_checking_only(tree)
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = pkg_parts[: len(pkg_parts) - (node.level - 1)] if node.level - 1 <= len(pkg_parts) else []
                parts = base + (node.module.split(".") if node.module else [])
                if not parts:  # "from .. import x": names are modules of the package root
                    for a in node.names:
                        yield a.name
                    continue
                yield parts[0]
            elif node.module and node.module.startswith("leakaudit."):
                yield node.module.split(".")[1]
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("leakaudit."):
                    yield a.name.split(".")[1]


def test_imports_follow_layers():
    problems = []
    for path in sorted(ROOT.rglob("*.py")):
        src = _top(path)
        if src not in LAYER:
            continue
        for dst in set(_imported_tops(path)):
            if dst == src or dst not in LAYER or dst == "__version__":
                continue
            ok = LAYER[dst] < LAYER[src] or (src, dst) in SIBLING_EDGES
            if not ok:
                problems.append(f"{path.relative_to(ROOT)} (layer {LAYER[src]}) imports {dst} (layer {LAYER[dst]})")
    assert not problems, "\n".join(problems)


def _is_string_import(call: ast.Call) -> bool:
    f = call.func
    name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
    return name in ("import_module", "__import__")


def _own_package(arg: ast.expr) -> bool:
    """``f"{__name__}.{x}"`` or ``__package__ + ...``: a package loading its own modules (reproduce's registry)."""
    first = arg.values[0].value if isinstance(arg, ast.JoinedStr) and arg.values else arg
    if isinstance(first, ast.FormattedValue):
        first = first.value
    while isinstance(first, ast.BinOp):
        first = first.left
    return isinstance(first, ast.Name) and first.id in ("__name__", "__package__")


_OUR_MODULE = re.compile(r"^(leakaudit(\.\w+)+|\.+\w+(\.\w+)*)$")


def string_imports_of_ours(source: str) -> list[str]:
    """Where ``source`` loads one of our modules by name: ``import_module`` / ``__import__`` given a literal
    leakaudit (or relative) name, or given anything when the module also spells a leakaudit module name in a
    string (a table of names looped over); a package loading its own modules from ``__name__`` is allowed."""
    tree = ast.parse(source)
    names = [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
             and _OUR_MODULE.match(n.value) and n.value.startswith("leakaudit.")]
    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and _is_string_import(node) and node.args):
            continue
        arg = node.args[0]
        if _own_package(arg):
            continue
        literal = arg.value if isinstance(arg, ast.Constant) and isinstance(arg.value, str) else None
        if isinstance(arg, ast.JoinedStr) and arg.values and isinstance(arg.values[0], ast.Constant):
            literal = arg.values[0].value
        if (literal is not None and (literal.startswith(("leakaudit", ".")))) or names:
            found.append(f"line {node.lineno}: {ast.unparse(node)}" + (f" (names {names})" if names else ""))
    return found


def test_no_module_loads_ours_by_a_string_name():
    problems = [f"{path.relative_to(ROOT)} {p}" for path in sorted(ROOT.rglob("*.py"))
                for p in string_imports_of_ours(path.read_text())]
    assert not problems, "\n".join(problems)


def test_the_string_import_check_sees_the_old_registration_loop():
    old = (
        '_COMMAND_MODULES = ("leakaudit.audit.cli", "leakaudit.membership.cli")\n'
        "def register(app):\n"
        "    from importlib import import_module\n"
        "    for mod in _COMMAND_MODULES:\n"
        "        import_module(mod).register(app)\n"
    )
    assert string_imports_of_ours(old)
    assert string_imports_of_ours('import importlib\nimportlib.import_module("leakaudit.dtp.cli")\n')
    assert string_imports_of_ours('__import__(f"leakaudit.{name}.cli")\n')
    assert not string_imports_of_ours('from importlib import import_module\nimport_module(f"{__name__}.{m}")\n')
    assert not string_imports_of_ours('import importlib\nimportlib.import_module(user_spec)\n')


def test_cli_is_a_package_whose_commands_are_imported_statically():
    pkg = ROOT / "cli"
    assert (pkg / "__init__.py").is_file() and not (ROOT / "cli.py").exists()
    imported = {a.name for node in ast.walk(ast.parse((pkg / "__init__.py").read_text()))
                if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module is None for a in node.names}
    commands = {p.stem for p in pkg.glob("*.py") if not p.stem.startswith("_")}
    assert commands <= imported, f"command modules not imported by cli/__init__.py: {sorted(commands - imported)}"
    for path in sorted(ROOT.rglob("cli.py")):
        raise AssertionError(f"{path.relative_to(ROOT)}: command-line code belongs in the cli package")
