"""docs/config.md lists every key of the audit's TOML file and every `audit` flag, with the models' own defaults."""

import pathlib
import re
from pathlib import Path

import pytest
import typer

from leakaudit import cli
from leakaudit.audit.config import AuditConfig, RunOptions, Thresholds, TorchTraining

DOC = Path(__file__).resolve().parents[2] / "docs" / "config.md"


def _audit_command():
    return typer.main.get_command(cli.app).commands["audit"]


def _rows() -> dict[tuple[str, str], list[str]]:
    """(section heading, key) -> the row's cells, for every table row of the page."""
    rows, section = {}, ""
    for line in DOC.read_text().splitlines():
        if line.startswith("## "):
            section = line
        m = re.match(r"\| `([a-z_]+)` \|(.*)\|$", line)
        if m:
            rows[(section, m.group(1))] = [c.strip() for c in m.group(2).split("|")]
    return rows


def _toml(value) -> str:
    """A default as the page writes it."""
    if value is None:
        return "(none)"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, (str, pathlib.Path)):
        return f'`"{value}"`'
    if hasattr(type(value), "model_fields"):
        return "(table below)"
    if isinstance(value, dict) and not value:
        return "`{}`"
    return f"`{value!r}`".replace("'", '"')


@pytest.mark.parametrize("model, heading", [(AuditConfig, "(`AuditConfig`)"), (RunOptions, "(`RunOptions`)"),
                                            (Thresholds, "`[thresholds]`"), (TorchTraining, "`[training]`")])
def test_each_table_is_the_one_made_from_its_model(model, heading):
    """A setting is declared once, on its model (type, default, description, flag); the page's table is made from
    it (leakaudit.audit.config.settings_table)."""
    from leakaudit.audit.config import settings_table

    lines = DOC.read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("## ") and heading in line)
    section = lines[start:]
    table = section[next(i for i, line in enumerate(section) if line.startswith("| key |")):]
    table = table[:next((i for i, line in enumerate(table) if not line.startswith("|")), len(table))]
    assert table == settings_table(model), (
        f"docs/config.md {heading} is stale: regenerate its table from leakaudit.audit.config.settings_table")


@pytest.mark.parametrize("model, heading", [(AuditConfig, "(`AuditConfig`)"), (RunOptions, "(`RunOptions`)"),
                                            (Thresholds, "`[thresholds]`"), (TorchTraining, "`[training]`")])
def test_every_key_is_documented_with_its_default(model, heading):
    rows = {k: v for (sec, k), v in _rows().items() if heading in sec}
    assert set(rows) == set(model.model_fields), f"docs/config.md {heading}: keys differ from {model.__name__}"
    for name, field in model.model_fields.items():
        default = field.default_factory() if field.default_factory else field.default
        flag, _type, doc_default, meaning = rows[name]
        assert doc_default == _toml(default), (name, doc_default, default)
        assert meaning, f"{name} has no meaning in docs/config.md"


def test_every_audit_flag_is_documented_and_is_a_key():
    text = DOC.read_text()
    keys = set(AuditConfig.model_fields) | set(RunOptions.model_fields)
    for p in _audit_command().params:
        if getattr(p, "param_type_name", "") != "option" or p.name == "help":
            continue
        for opt in p.opts + p.secondary_opts:
            if opt.startswith("--"):
                assert f"`{opt}`" in text, f"{opt} is not in docs/config.md"
        if p.name not in ("config", "estimate"):  # --estimate: a way to run the command, as leakaudit.estimate()
            assert p.name in keys, f"--{p.name} has no TOML key"


def test_in_words_names_the_flag_or_the_library_argument():
    """Library texts write a setting as `key`: the command line reads its flag, a library call the argument of
    leakaudit.audit() that gives the same input in memory (a file's value means nothing there)."""
    from leakaudit.audit.config import in_words

    text = "give `reference_dir = DIR` with `model_dir`; `population = FILE`; `train` and `test`; `profile = thorough`"
    assert in_words(text, flags=True) == ("give --reference-dir DIR with --model-dir; --population FILE; --train and "
                                          "--test; --profile thorough")
    assert in_words(text, flags=False) == ("give references with model; population; members and nonmembers; "
                                           "profile=\"thorough\"")
    # each library argument named is one leakaudit.audit() takes
    import inspect

    from leakaudit.audit.api import audit

    takes = set(inspect.signature(audit).parameters)
    from leakaudit.audit.config import flag_of

    for name, field in {**AuditConfig.model_fields, **RunOptions.model_fields}.items():
        flag = flag_of(field)
        if flag is not None and flag.argument:
            assert flag.argument in takes, (name, flag.argument)
