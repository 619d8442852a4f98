"""The package's import graph follows its layers (data flows down; see src/leakaudit/__init__.py).

A module imports only from lower layers; within layer 3 the only sibling edges are to ``membership``
(attribute's reductions use membership oracles; dtp uses Long's output binning and attack protocols).
"""

import ast
from pathlib import Path

import leakaudit

ROOT = Path(leakaudit.__file__).parent
LAYER = {
    "exceptions": -1, "_interrupt": 0, "_validation": 0, "_random": 0, "_results": 0, "_resources": 0,
    "data": 1, "metrics": 1, "learners": 1,
    "engine": 2,
    "membership": 3, "dtp": 3, "attribute": 3, "property": 3, "mip": 3,
    "reproduce": 4, "checks": 4, "report": 4, "audit": 4,
    "cli": 5,
}
SIBLING_EDGES = {("dtp", "membership"), ("attribute", "membership"), ("audit", "report")}


def _top(path: Path) -> str:
    rel = path.relative_to(ROOT)
    return rel.parts[0].removesuffix(".py")


def _imported_tops(path: Path):
    tree = ast.parse(path.read_text())
    pkg_parts = list(path.relative_to(ROOT).parent.parts)
    for node in ast.walk(tree):
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
