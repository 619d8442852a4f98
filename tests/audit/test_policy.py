"""Release policies: the TOML file, its sources, the built-in policies and the default documented in docs/verdict.md."""

import re
from pathlib import Path

import pytest

from leakaudit.audit.config import AuditConfig, Thresholds
from leakaudit.audit.policy import (
    DEFAULT_POLICY,
    LEAKAGE_SHOWN_POLICY,
    Policy,
    load_policy,
    policy_toml,
)
from leakaudit.exceptions import InvalidParameterError

DOCS = Path(__file__).resolve().parents[2] / "docs" / "verdict.md"


def _write(tmp_path, text, name="policy.toml"):
    p = tmp_path / name
    p.write_text(text)
    return p


def _same(a: Policy, b: Policy) -> bool:
    return a.model_dump(exclude={"origin"}) == b.model_dump(exclude={"origin"})


def test_default_agrees_with_the_audit_defaults():
    """The default policy's thresholds, confidence and DTP rule are the audit's own defaults."""
    cfg = AuditConfig()
    s = DEFAULT_POLICY.audit_settings()
    assert s["thresholds"] == Thresholds() == cfg.thresholds
    assert (s["confidence"], s["dtp_rule"], s["epsilon_budget"], s["epsilon_delta"]) == (
        cfg.confidence, cfg.dtp_rule, cfg.epsilon_budget, cfg.epsilon_delta)
    assert DEFAULT_POLICY.burden_of_proof == "safety shown"
    assert LEAKAGE_SHOWN_POLICY.burden_of_proof == "leakage shown"
    assert LEAKAGE_SHOWN_POLICY.thresholds == DEFAULT_POLICY.thresholds


def test_every_setting_has_a_source():
    rows = DEFAULT_POLICY.table()
    assert [r["key"] for r in rows] == Policy.setting_names()
    assert all(r["source"].strip() for r in rows)
    # a source names a document or says it is leakaudit's own choice
    for r in rows:
        assert re.search(r"leakaudit's choice|Long et al\.|SACRO-ML|ICO|EDPB", r["source"]), r


def test_toml_round_trip(tmp_path):
    for policy in (DEFAULT_POLICY, LEAKAGE_SHOWN_POLICY):
        loaded = load_policy(_write(tmp_path, policy_toml(policy)))
        assert _same(loaded, policy)
        assert loaded.origin.endswith("policy.toml")


def test_built_in_names_and_none():
    assert load_policy(None) is DEFAULT_POLICY
    assert load_policy("default") is DEFAULT_POLICY
    assert load_policy("leakage-shown") is LEAKAGE_SHOWN_POLICY


def test_partial_file_keeps_defaults_and_states_sources(tmp_path):
    p = _write(tmp_path, 'burden_of_proof = "leakage shown"\n[thresholds]\nmin_leaf_records = 10\nmax_auc = 0.55\n'
                         '[sources]\nmin_leaf_records = "ACRO default safe_threshold"\n', name="tre.toml")
    pol = load_policy(p)
    assert pol.name == "tre" and pol.burden_of_proof == "leakage shown"
    assert pol.thresholds.min_leaf_records == 10 and pol.thresholds.max_auc == 0.55
    assert pol.thresholds.max_dtp == DEFAULT_POLICY.thresholds.max_dtp
    assert pol.sources["min_leaf_records"] == "ACRO default safe_threshold"
    assert pol.sources["max_auc"] == "set by tre.toml, no source stated"
    assert pol.sources["burden_of_proof"] == "set by tre.toml, no source stated"
    assert pol.sources["max_dtp"] == DEFAULT_POLICY.sources["max_dtp"]
    assert pol.audit_settings()["thresholds"].max_auc == 0.55
    AuditConfig(**pol.audit_settings())  # the audit accepts what the policy sets


@pytest.mark.parametrize("text, key", [
    ("max_auc = 0.7", "'max_auc'"),
    ("[thresholds]\nmax_acu = 0.7", "'thresholds.max_acu'"),
    ("[thresholds]\nmax_auc = 0.4", "thresholds.max_auc"),
    ("[thresholds]\nmin_leaf_records = 2.5", "thresholds.min_leaf_records"),
    ("[thresholds]\nepsilon_budget = -1", "thresholds.epsilon_budget"),
    ("confidence = 1.5", "confidence"),
    ('burden_of_proof = "maybe"', "burden_of_proof"),
    ('dtp_rule = "strict"', "dtp_rule"),
    ('[sources]\nmax_aucc = "a paper"', "sources.max_aucc"),
    ("[sources]\nmax_auc = 1", "sources.max_auc"),
    ("thresholds = 3", "thresholds"),
])
def test_errors_are_one_line_naming_the_key(tmp_path, text, key):
    p = _write(tmp_path, text)
    with pytest.raises(InvalidParameterError) as e:
        load_policy(p)
    msg = str(e.value)
    assert "\n" not in msg and key in msg and str(p) in msg, msg


def test_missing_file_and_bad_toml(tmp_path):
    with pytest.raises(InvalidParameterError, match="neither a policy file nor a built-in policy"):
        load_policy(tmp_path / "nope.toml")
    with pytest.raises(InvalidParameterError, match="not valid TOML"):
        load_policy(_write(tmp_path, "x = ["))


def test_a_policy_must_source_every_setting():
    with pytest.raises(ValueError, match="sources.confidence is missing"):
        Policy(name="x", sources={k: v for k, v in DEFAULT_POLICY.sources.items() if k != "confidence"})


def test_docs_show_the_default_policy():
    """docs/verdict.md's default policy is the one the code uses: its TOML block loads to DEFAULT_POLICY and its table
    lists every setting with the code's value."""
    text = DOCS.read_text()
    section = text[text.index("## The default policy"):]
    block = re.search(r"```toml\n(.*?)```", section, re.S).group(1)
    assert block == policy_toml(DEFAULT_POLICY)
    for row in DEFAULT_POLICY.table():
        value = "none" if row["value"] is None else str(row["value"])
        assert f"| `{row['key']}` | {value} |" in section, row["key"]
