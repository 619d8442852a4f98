"""--help of every command: each option says what it does and its default; no switch shows '<bool>'."""

import re

import pytest
import typer

from leakaudit import cli
from leakaudit.audit.config import AuditConfig, RunOptions


def _commands():
    stack = [("leakaudit", typer.main.get_command(cli.app))]
    while stack:
        path, cmd = stack.pop()
        yield path, cmd
        for name, sub in sorted(getattr(cmd, "commands", {}).items()):
            stack.append((f"{path} {name}", sub))


def _options():
    return [(path, cmd, p) for path, cmd in _commands() for p in cmd.params
            if getattr(p, "param_type_name", "") == "option"]


def _problems(path, cmd, opt) -> list[str]:
    ctx = cmd.make_context(path.split()[-1], [], resilient_parsing=True)
    problems = []
    if not (opt.help or "").strip():
        problems.append("no help text")
    if opt.display_type_rich(ctx) == "<bool>":
        problems.append("shows <bool>")
    record = opt.get_help_record(ctx)
    if not opt.required and "default" not in (record[1] if record else "").lower():
        problems.append("no default in its help")
    return problems


OPTIONS = _options()


def test_the_walk_sees_every_command():
    paths = {path for path, _ in _commands()}
    assert {"leakaudit audit", "leakaudit membership", "leakaudit dtp pdtp", "leakaudit mip audit",
            "leakaudit reproduce", "leakaudit property", "leakaudit attribute"} <= paths
    assert len(OPTIONS) > 80


@pytest.mark.parametrize("path, cmd, opt", OPTIONS, ids=[f"{p} {o.opts[0]}" for p, _, o in OPTIONS])
def test_every_option_has_help_with_its_default_and_no_bool_metavar(path, cmd, opt):
    assert not _problems(path, cmd, opt), f"{path} {opt.opts[0]}: {', '.join(_problems(path, cmd, opt))}"


def test_rendered_help_shows_no_bool_anywhere():
    """No '<bool>' on any help page, groups included: our switches set metavar="" and so does --help itself
    (leakaudit.cli._typer)."""
    from typer.testing import CliRunner

    runner = CliRunner()
    paths = [path for path, _ in _commands()]
    assert {"leakaudit", "leakaudit dtp", "leakaudit mip"} <= set(paths)
    for path in paths:
        res = runner.invoke(cli.app, path.split()[1:] + ["--help"], env={"COLUMNS": "200"})
        assert res.exit_code == 0, (path, res.output)
        assert "--help" in res.output, (path, res.output)
        rows = [line for line in res.output.splitlines() if "<bool>" in line]
        assert not rows, f"{path}: {rows}"


def test_help_option_of_every_command_has_no_metavar():
    for path, cmd in _commands():
        ctx = cmd.make_context(path.split()[-1], [], resilient_parsing=True)
        opt = cmd.get_help_option(ctx)
        assert opt is not None and opt.display_type_rich(ctx) == "", path


def _default_words(value) -> str:
    return str(value) if not isinstance(value, bool) else ""


@pytest.mark.parametrize("name", sorted((set(AuditConfig.model_fields) | set(RunOptions.model_fields))
                                        - {"dataset", "training", "hidden", "activation", "epochs", "confidence",
                                           "thresholds", "epsilon_delta", "burden_of_proof"}))
def test_audit_help_states_the_models_default(name):
    """audit's flags default to None (so the TOML file can fill them); their help names the effective default."""
    cmd = dict(_commands())["leakaudit audit"]
    opt = next(p for p in cmd.params if p.name == name)
    model = AuditConfig if name in AuditConfig.model_fields else RunOptions
    field = model.model_fields[name]
    default = field.default_factory() if field.default_factory else field.default
    m = re.search(r"\(default: ([^)]*)\)", opt.help)
    assert m, f"--{name}: no '(default: ...)' in {opt.help!r}"
    if default is None or default == {}:
        assert m.group(1).startswith(("none", "{}", "$LEAKAUDIT_CACHE")), (name, m.group(1))
    elif isinstance(default, bool):
        assert m.group(1).startswith(f"--no-{name.replace('_', '-')}" if not default else f"--{name}"), m.group(1)
    else:
        assert m.group(1).startswith(_default_words(default)), (name, m.group(1), default)


def test_audit_help_fits_two_screens_and_help_all_gives_each_option_whole():
    """``leakaudit audit --help``: each option in a line or two under its section, about two screens at 80 columns;
    ``--help-all``: each option's whole description. Neither cuts an option's name."""
    from typer.testing import CliRunner

    short, full = (CliRunner().invoke(cli.app, ["audit", flag], env={"COLUMNS": "80"}).output
                   for flag in ("--help", "--help-all"))
    assert len(short.splitlines()) <= 120 and max(map(len, (short + full).splitlines())) <= 80
    for p in dict(_commands())["leakaudit audit"].params:
        names = ", ".join(p.opts).replace("--", "--[no-]", 1) if p.secondary_opts else ", ".join(p.opts)
        assert f"  {names} " in short or f"  {names}\n" in short, names
        assert f"  {names}" in full and " ".join(p.help.split()) in " ".join(full.split()), names
