"""No import cycles between the package's modules.

Every ``import`` and ``from ... import`` anywhere in a module counts, including those inside functions: a
function-level import that closes a cycle only hides it until the function runs. An import of a package
counts as an import of its ``__init__``; one under ``if TYPE_CHECKING:`` (a type named in an annotation, never
imported at run time) does not count; a package's ``__init__`` importing its own modules, and those
modules importing names of their own package (which Python resolves from the half-initialised package),
are not cycles.
"""

import ast
from pathlib import Path

import leakaudit
from test_layers import type_checking_only

ROOT = Path(leakaudit.__file__).parent
PACKAGE = "leakaudit"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


MODULES = {_module_name(p): p for p in ROOT.rglob("*.py")}


def _is_package(name: str) -> bool:
    return MODULES.get(name, Path()).name == "__init__.py"


def _target(name: str) -> str | None:
    """The module ``name`` names, or its nearest enclosing module (``pkg.mod.func`` -> ``pkg.mod``)."""
    while name:
        if name in MODULES:
            return name
        name = name.rpartition(".")[0]
    return None


def _imports(name: str, path: Path) -> set[str]:
    """Modules of the package that module ``name`` imports (anywhere in its body)."""
    package = name if _is_package(name) else name.rpartition(".")[0]
    found: set[str] = set()
    tree = ast.parse(path.read_text(), filename=str(path))
    skip = type_checking_only(tree)
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            found.update(filter(None, (_target(a.name) for a in node.names if a.name.startswith(PACKAGE))))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            elif node.module and node.module.split(".")[0] == PACKAGE:
                module = node.module
            else:
                continue
            for a in node.names:  # "from pkg import mod" imports the module pkg.mod
                t = _target(f"{module}.{a.name}")
                if t is not None:
                    found.add(t)
    return found


def _graph() -> dict[str, set[str]]:
    graph = {}
    for name, path in MODULES.items():
        edges = set()
        for t in _imports(name, path):
            if t == name:
                continue
            if _is_package(t) and name.startswith(t + "."):  # a module taking names from its own package
                continue
            edges.add(t)
        graph[name] = edges
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            v, children = work[-1]
            for w in children:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    component = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        component.append(w)
                        if w == v:
                            break
                    if len(component) > 1:
                        out.append(sorted(component))
    return out


def test_cycle_finder_finds_a_cycle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert _cycles(graph) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_imports_are_resolved_to_modules():
    graph = _graph()
    assert "leakaudit.mip.calibrate" in graph["leakaudit.mip.noise"]
    assert "leakaudit.engine" in graph["leakaudit.membership._base"]  # a package: its __init__


def test_no_import_cycles():
    cycles = _cycles(_graph())
    assert not cycles, "import cycles between modules:\n" + "\n".join(" <-> ".join(c) for c in cycles)
