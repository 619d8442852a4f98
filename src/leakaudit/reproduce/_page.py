"""Which profile each reproduction runs at for docs/reproduction.md, and why where that is not ``full``.

The page is made by one command, ``leakaudit reproduce --all --out docs/reproduction --gather docs/reproduction.md``
(``_registry.run_all``): every reproduction at its page profile, over seeds 0-4. The rule: ``full`` wherever the
paper's scale fits in about an hour on 2 cores, ``reduced`` otherwise, with the cost that rules full out written here.
Every stored run records the digest of the code its reproduction ran (:func:`code_digest`: its module and every
leakaudit module that imports); an interrupted ``--all`` keeps the runs whose code is unchanged and runs the rest, so a
killed run loses only the reproduction it was in, and a change to one paper's code reruns only its reproductions.
"""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass
from pathlib import Path

__all__ = ["PAGE", "PageEntry", "code_digest", "code_files", "page_entry"]


@dataclass(frozen=True)
class PageEntry:
    """The profile a reproduction's section of the page is run at; ``why``: why it is not ``full`` (None if it is)."""

    profile: str
    why: str | None = None


_FULL = PageEntry("full")

# reproductions whose paper scale does not fit in an hour on 2 cores: the cost that rules full out (measured where
# the text says so; otherwise scaled from the stored reduced run by the number of models each profile trains)
PAGE: dict[str, PageEntry] = {
    "chase-fig1": PageEntry(
        "reduced", "full trains the paper's shadow models per source (Census k = 500, q = 1,000; Enron k = 1,000, "
                   "q = 500) for five properties at eleven poisoning rates: measured at seed 0, p = 0.10, one property "
                   "and rate costs 25.5 s (Census) and 31.4 s (SpamAssassin) after a 13-14 s Algorithm 2, so the "
                   "five seeds take about 8,000 s, 2.2 hours in one process (docs/chase.md, Fig. 1)"),
    "chase-fig1-mlp": PageEntry(
        "reduced", "full trains the paper's 500 shadow MLPs per world (200 epochs each) at eleven poisoning rates: "
                   "55,000 shadow networks for five seeds, about 5 CPU hours at chase-table2's measured 0.33 CPU s "
                   "a network"),
    "chase-fig3-curves": PageEntry(
        "reduced", "full runs four curves on the paper's axis (k = 50 to 2,000 shadow models per world) with r = 1,000 "
                   "and 100 targets: chase-fig3's Census random curve took 1,164 s over five seeds, so the four take "
                   "about 4,700 s, 1.3 hours in one process"),
    "chase-table2": PageEntry(
        "reduced", "full trains the paper's 600 shadow MLPs per world for five depths and 1,000 per world at "
                   "n = 10,000, 200 epochs each: 58,000 networks for five seeds, about 5.3 CPU hours at the measured "
                   "0.33 CPU s a network (docs/chase.md, Table II)"),
    "yeom-fig2c": PageEntry(
        "reduced", "full trains CNNs of size 1 to 128 on 8,750 images, 100 epochs each, over five seeds: one CNN at "
                   "s = 64 takes about 30 CPU minutes (measured, yeom-table1) and one at s = 128 several times that, "
                   "so well over 10 CPU hours"),
    "yeom-fig4": PageEntry(
        "reduced", "full trains two CNNs a size (s = 1 to 128, the colluding one on 4 x 8,750 images), 100 epochs, "
                   "over five seeds: one CNN at s = 64 and n = 8,750 takes about 30 CPU minutes (measured), so tens of "
                   "CPU hours"),
    "yeom-table1": PageEntry(
        "reduced", "full trains 21 CNNs at s = 64 on 8,750 images (the target and 20 shadow models), 100 epochs at "
                   "batch size 32, per seed: about 30 CPU minutes each (measured), some 50 CPU hours for five seeds"),
}


def page_entry(name: str) -> PageEntry:
    """The page profile of reproduction ``name`` (``full`` unless :data:`PAGE` says otherwise)."""
    return PAGE.get(name, _FULL)


# modules that choose a reproduction's profile, judge, count or draw its rows, and compute none of its values: gather
# re-judges, re-classifies, re-counts and redraws every stored run with the current ones, so a change to them leaves a
# stored run current
_BOOKKEEPING = frozenset({"reproduce/__init__.py", "reproduce/_registry.py", "reproduce/_page.py",
                          "reproduce/_judge.py", "reproduce/_kinds.py", "reproduce/_ledger.py", "reproduce/_tally.py",
                          "reproduce/_figures.py", "reproduce/_figure_data.py"})


def _package_root(root: str | Path | None) -> Path:
    if root is not None:
        return Path(root)
    import leakaudit

    return Path(leakaudit.__file__).parent


def _module_file(root: Path, module: str) -> Path | None:
    """The file of ``module`` (``leakaudit.a.b``) under ``root``: ``a/b.py`` or ``a/b/__init__.py``; None if neither."""
    parts = module.split(".")[1:]
    for f in (root.joinpath(*parts).with_suffix(".py") if parts else None, root.joinpath(*parts, "__init__.py")):
        if f is not None and f.is_file():
            return f
    return None


def _imported_modules(path: Path, module: str, is_package: bool) -> set[str]:
    """The leakaudit modules that the file ``path`` of ``module`` imports anywhere in it (functions included), with
    the packages that importing them runs (``leakaudit.a`` for ``leakaudit.a.b``). The top package is read at its
    module level only: its ``__getattr__`` imports the public names (``leakaudit.audit``, ...) when a caller first
    asks for them, which a reproduction does not."""
    import ast

    package = module if is_package else module.rpartition(".")[0]
    found: set[str] = set()
    tree = ast.parse(path.read_bytes(), filename=str(path))
    nodes = tree.body if module == "leakaudit" else ast.walk(tree)
    for node in nodes:
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            found.add(target)
            found.update(f"{target}.{a.name}" for a in node.names)  # a name may be a submodule
    out = set()
    for name in found:
        parts = name.split(".")
        if parts[0] == "leakaudit":
            out.update(".".join(parts[:i]) for i in range(1, len(parts) + 1))
    return out


def code_files(module: str, root: str | Path | None = None) -> list[str]:
    """The files, relative to the package, whose code a reproduction registered in ``module`` runs: its module and
    every leakaudit module it imports, directly or through others (imports inside functions included), with the
    packages those imports run and the ``.c`` sources of any package directory among them (the compiled kernels are
    opened by name, not imported). The page's bookkeeping (``_BOOKKEEPING``) is left out. ``root``: the package
    directory to read (default: the installed one)."""
    root = _package_root(root)
    seen: set[str] = set()
    files: set[Path] = set()
    todo = [module]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        f = _module_file(root, name)
        if f is None or f.relative_to(root).as_posix() in _BOOKKEEPING:
            continue
        files.add(f)
        files.update(f.parent.glob("*.c"))
        todo.extend(_imported_modules(f, name, f.name == "__init__.py"))
    return sorted(f.relative_to(root).as_posix() for f in files)


def code_digest(module: str, root: str | Path | None = None) -> str:
    """SHA-256 (first 16 hex digits) of the code a reproduction registered in ``module`` runs (:func:`code_files`):
    a stored run with another digest was made by other code, so ``--all`` runs it again. A change elsewhere in the
    package (another paper's module, the CLI, the report) leaves it unchanged. ``root``: the package directory to
    read (default: the installed one, whose digests are computed once a process)."""
    if root is None:
        return _installed_digest(module)
    root = Path(root)
    h = hashlib.sha256()
    for rel in code_files(module, root):
        h.update(rel.encode() + b"\0" + (root / rel).read_bytes() + b"\0")
    return h.hexdigest()[:16]


@functools.cache
def _installed_digest(module: str) -> str:
    return code_digest(module, _package_root(None))
