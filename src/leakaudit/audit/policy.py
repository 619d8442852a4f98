"""A release policy: the thresholds, confidence, DTP rule and burden of proof a verdict applies, each with its source.

A trusted research environment or a data owner states its risk appetite once, in a TOML file, and every audit run
under it records which policy it used. The file::

    name = "our TRE, 2026"
    burden_of_proof = "safety shown"      # or "leakage shown"
    confidence = 0.95
    dtp_rule = "statistical"              # or "long"

    [thresholds]
    max_auc = 0.6
    min_leaf_records = 10

    [sources]
    min_leaf_records = "ACRO default safe_threshold (minimum cell count)"

Every key is optional: a key the file leaves out keeps :data:`DEFAULT_POLICY`'s value and source; a key the file
sets without a ``[sources]`` entry gets the source "set by <file>, no source stated". The threshold keys are those
of :class:`~leakaudit.audit.config.Thresholds` (``min_leaf_records`` and ``max_parameters_per_record`` among them)
plus ``epsilon_budget`` and ``epsilon_delta``. ``docs/verdict.md`` documents the default policy and where each number comes from.

Burden of proof: ``"safety shown"`` publishes only when every applicable check's interval lies below its threshold;
``"leakage shown"`` (leakaudit's rule before policies, kept as :data:`LEAKAGE_SHOWN_POLICY`) withholds only when an
interval lies wholly above a threshold. The verdict applies it; the policy only states it.
"""

from __future__ import annotations

import math
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from ..exceptions import InvalidParameterError
from .thresholds import Thresholds

__all__ = ["Policy", "PolicyThresholds", "DEFAULT_POLICY", "LEAKAGE_SHOWN_POLICY", "POLICIES", "load_policy",
           "policy_toml", "policy_of", "recorded_settings", "BURDENS"]

BURDENS = ("safety shown", "leakage shown")


class PolicyThresholds(Thresholds):
    """The audit's :class:`~leakaudit.audit.config.Thresholds` (the structural minimums among them), with the epsilon
    budget."""

    epsilon_budget: float | None = Field(
        None, ge=0, description="Fail when an attack's empirical epsilon lower bound exceeds this (None: no budget).")
    epsilon_delta: float = Field(1e-5, gt=0, lt=1, description="The delta of the empirical epsilon lower bounds.")


#: settings of a policy that are not thresholds (each has a source too)
_TOP = ("burden_of_proof", "confidence", "dtp_rule")


class Policy(BaseModel):
    """A named set of release rules, each with where it comes from.

    Attributes
    ----------
    name : str
    description : str
    burden_of_proof : {"safety shown", "leakage shown"}
    confidence : float in (0.5, 1)
        Family-wise confidence of the verdict's checks (Bonferroni over the checks).
    dtp_rule : {"statistical", "long"}
    thresholds : PolicyThresholds
    sources : dict of str to str
        For every setting (``burden_of_proof``, ``confidence``, ``dtp_rule`` and each threshold's key), where its
        value comes from.
    origin : str
        Where the policy was read ("built in", or the file's path).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1)
    description: str = ""
    burden_of_proof: Literal["safety shown", "leakage shown"] = "safety shown"
    confidence: float = Field(0.95, gt=0.5, lt=1)
    dtp_rule: Literal["statistical", "long"] = "statistical"
    thresholds: PolicyThresholds = Field(default_factory=PolicyThresholds)
    sources: dict[str, str] = Field(default_factory=dict)
    origin: str = "built in"

    @model_validator(mode="after")
    def _every_setting_sourced(self) -> "Policy":
        keys = set(self.setting_names())
        unknown = sorted(set(self.sources) - keys)
        if unknown:
            raise ValueError(f"sources.{unknown[0]} names no setting of a policy")
        missing = sorted(keys - set(self.sources))
        if missing:
            raise ValueError(f"sources.{missing[0]} is missing: every setting states where it comes from")
        return self

    @staticmethod
    def setting_names() -> list[str]:
        return list(_TOP) + list(PolicyThresholds.model_fields)

    def value(self, key: str):
        """The value of a setting (a top-level key or a threshold's key)."""
        return getattr(self, key) if key in _TOP else getattr(self.thresholds, key)

    def table(self) -> list[dict]:
        """Every setting as ``{"key", "value", "source"}``, top-level keys first (for the evidence record and the
        report)."""
        return [{"key": k, "value": self.value(k), "source": self.sources[k]} for k in self.setting_names()]

    def audit_settings(self) -> dict:
        """The :class:`~leakaudit.audit.config.AuditConfig` keys this policy sets: ``thresholds`` (a
        :class:`~leakaudit.audit.config.Thresholds`), ``confidence``, ``dtp_rule``, ``epsilon_budget``,
        ``epsilon_delta``."""
        t = self.thresholds
        return {"thresholds": Thresholds(**{k: getattr(t, k) for k in Thresholds.model_fields}),
                "confidence": self.confidence, "dtp_rule": self.dtp_rule, "epsilon_budget": t.epsilon_budget,
                "epsilon_delta": t.epsilon_delta}


_CHOICE = "leakaudit's choice"

#: where each default comes from, and why that number (docs/verdict.md, "The default policy", says the same at more
#: length); where no paper or regulator gives the number, the source says "leakaudit's choice" and the reason
_DEFAULT_SOURCES = {
    "burden_of_proof": ("ICO anonymisation guidance (the risk of identification must be 'sufficiently remote') and "
                        "EDPB Opinion 28/2024 (the likelihood of obtaining personal data from the model must be "
                        "'insignificant') put the burden on showing the risk low; neither gives a number"),
    "confidence": (f"{_CHOICE}: 95 % family-wise over the verdict's checks (Bonferroni): the conventional 5 % error "
                   "rate, held for the verdict as a whole rather than for each check, so that adding checks does not "
                   "add false alarms"),
    "dtp_rule": (f"{_CHOICE}: Long et al.'s DTP-1 measurement with a significance test against training noise and "
                 "binning (docs/verdict.md, 'DTP-1, as a statistical statement')"),
    "max_dtp": "Long et al. 2018, the DTP-1 hypothesis: do not publish a model with a record above PDTP 1",
    "max_records_above_dtp": "Long et al. 2018, the DTP-1 hypothesis: no record above the threshold",
    "max_unmeasured_dtp_share": (f"{_CHOICE}: the screened DTP-1 sample's size depends on this share only (about "
                                 "1,235 members at 0.5 %); docs/verdict.md, 'Why 0.5 %'"),
    "low_fpr": (f"{_CHOICE}: 1 % rather than 0.1 %, because the distribution-free TPR interval can exclude a value "
                "only when about ln(alpha / 4) / ln(1 - FPR) non-members lie above the attack's threshold (alpha: one "
                "check's error rate), ten times as many at 0.1 % as at 1 %: thousands, more than most audits have, "
                "so the 0.1 % check would be 'not measurable' in nearly every audit; each audit's evidence record "
                "states the count at its own confidence"),
    "max_tpr_at_low_fpr": f"{_CHOICE}: five times the 1 % a guess achieves at 1 % FPR",
    "max_auc": (f"{_CHOICE}: an AUC of 0.6 means the attack ranks a random member above a random non-member 6 times "
                "in 10, against 5 for guessing; it is the highest AUC any attack can reach on a model trained with "
                "epsilon-differential privacy at epsilon = ln 1.5 = 0.41 (the ROC curve of an epsilon-DP model lies "
                "below TPR = e^epsilon FPR and 1 - TPR = e^-epsilon (1 - FPR), an area of e^epsilon / (1 + "
                "e^epsilon)), a reference for scale, not a claim that the model is private. An AUC averages over all "
                "false-positive rates and can stay low while a few records are exposed (Carlini et al. 2022), hence "
                "the TPR check at low FPR beside it; no regulator gives a number"),
    "max_attribute_advantage": (f"{_CHOICE}: the attack may recover the column for at most 5 percentage points more "
                                "of the members than of the non-members (Yeom et al. 2018's attribute advantage). "
                                "For scale: epsilon-differential privacy bounds a membership adversary's advantage "
                                "by e^epsilon - 1, and Yeom et al. turn an attribute adversary into a membership "
                                "adversary of the same advantage, so 0.05 is that bound at epsilon = ln 1.05 = 0.049; "
                                "no regulator gives a number"),
    "max_extraction_rate_difference": (f"{_CHOICE}: at most 1 member text in 100 more whose suffix comes out of the "
                                       "model within n tries than of text it never saw (the base rate, of text anyone "
                                       "could guess); the EDPB's support-pool report on LLM privacy risks (2025) and "
                                       "the GPAI Code of Practice ask that regurgitation be tested, and Opinion 28/2024 "
                                       "that the likelihood of obtaining personal data from the model be "
                                       "'insignificant'; none gives a number"),
    "epsilon_budget": f"{_CHOICE}: no budget unless the owner states one (no regulator gives an epsilon)",
    "epsilon_delta": (f"{_CHOICE}: the delta of the empirical epsilon lower bounds: 1e-5, the delta DP-SGD results "
                      "commonly report (Abadi et al. 2016), below 1 / n for any audit of fewer than 100,000 records "
                      "(a mechanism that publishes one of the n records at random meets delta = 1 / n)"),
    "min_leaf_records": ("SACRO-ML's safe model rules (AI-SDC/SACRO-ML safemodel/rules.json): min_samples_leaf at "
                         "least 5 for decision trees and random forests; SACRO-ML's structural attack uses ACRO's "
                         "minimum cell count, 10 by default, a stricter choice"),
    "max_parameters_per_record": ("SACRO-ML's structural attack flags fewer than 10 residual degrees of freedom "
                                  "(records minus parameters; ACRO's default safe_dof_threshold); leakaudit keeps "
                                  "the ratio, at most 1 parameter per record, without the margin of 10"),
}

DEFAULT_POLICY = Policy(name="leakaudit default (safety shown)",
                        description="Publish only when every applicable check is shown below its threshold.",
                        sources=_DEFAULT_SOURCES)

LEAKAGE_SHOWN_POLICY = Policy(
    name="leakage shown (leakaudit's rule before policies)",
    description=("Withhold only when a check is shown above its threshold; publish when no check is, and every "
                 "check could have been."),
    burden_of_proof="leakage shown",
    sources={**_DEFAULT_SOURCES, "burden_of_proof": f"{_CHOICE}: the verdict's rule before release policies"})

#: built-in policies by the name ``--policy`` takes
POLICIES = {"default": DEFAULT_POLICY, "leakage-shown": LEAKAGE_SHOWN_POLICY}


def _format_error(exc: ValidationError) -> str:
    e = exc.errors()[0]
    loc = ".".join(str(x) for x in e["loc"])
    msg = e["msg"].removeprefix("Value error, ")
    return f"{loc}: {msg}" if loc else msg


def load_policy(source: str | Path | None = None) -> Policy:
    """A built-in policy by name (``"default"``, ``"leakage-shown"``; None: the default) or a TOML policy file.

    Raises
    ------
    InvalidParameterError
        One line naming the file and the first problem's key (unknown key, wrong type, out of range, a source
        for no setting).
    """
    if source is None:
        return DEFAULT_POLICY
    if isinstance(source, str) and source in POLICIES:
        return POLICIES[source]
    path = Path(source)
    if not path.is_file():
        raise InvalidParameterError(f"policy {source} is neither a policy file nor a built-in policy "
                                    f"({', '.join(POLICIES)})")
    try:
        raw = tomllib.loads(path.read_text())
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise InvalidParameterError(f"policy file {path} is not valid TOML: {exc}") from None
    where = f"policy file {path}"
    top = set(Policy.model_fields) - {"origin", "thresholds", "sources"}
    unknown = [k for k in raw if k not in top | {"thresholds", "sources"}]
    if unknown:
        raise InvalidParameterError(f"{where}: unknown key {unknown[0]!r} (keys: {', '.join(sorted(top))}, "
                                    "[thresholds], [sources])")
    for table in ("thresholds", "sources"):
        if table in raw and not isinstance(raw[table], dict):
            raise InvalidParameterError(f"{where}: {table} must be a table ([{table}])")
    thresholds = raw.get("thresholds", {})
    unknown = [k for k in thresholds if k not in PolicyThresholds.model_fields]
    if unknown:
        raise InvalidParameterError(f"{where}: unknown key 'thresholds.{unknown[0]}' (thresholds: "
                                    f"{', '.join(PolicyThresholds.model_fields)})")
    sources = raw.get("sources", {})
    bad = [k for k, v in sources.items() if not isinstance(v, str) or not v.strip()]
    if bad:
        raise InvalidParameterError(f"{where}: sources.{bad[0]} must be a non-empty string")
    set_keys = [k for k in raw if k in _TOP] + list(thresholds)
    merged_sources = {**DEFAULT_POLICY.sources, **{k: f"set by {path.name}, no source stated" for k in set_keys},
                      **sources}
    base = DEFAULT_POLICY.model_dump(exclude={"thresholds", "sources", "origin", "name", "description"})
    fields = {**base, **{k: raw[k] for k in top if k in raw}}
    fields.setdefault("name", path.stem)
    try:
        return Policy(**fields, thresholds=PolicyThresholds(**{**DEFAULT_POLICY.thresholds.model_dump(),
                                                               **thresholds}),
                      sources=merged_sources, origin=str(path))
    except ValidationError as exc:
        msg = _format_error(exc)
        # a threshold's error comes from PolicyThresholds, whose location lacks the table's name
        first = exc.errors()[0]["loc"]
        if exc.title == "PolicyThresholds" and first:
            msg = f"thresholds.{msg}"
        raise InvalidParameterError(f"{where}: {msg}") from None


def recorded_settings(config: Mapping[str, Any]) -> dict:
    """The policy settings an audit's recorded configuration (``results.json``'s ``config``) holds: its thresholds,
    confidence, DTP rule, epsilon settings and burden of proof (each where recorded)."""
    return {**(config.get("thresholds") or {}),
            **{k: config[k] for k in ("confidence", "dtp_rule", "epsilon_budget", "epsilon_delta", "burden_of_proof")
               if k in config}}


def policy_of(config: Mapping[str, Any]) -> Policy:
    """The policy an audit applied, from its recorded settings (``results.json``'s ``config``): its named policy,
    with each setting the audit's own settings changed (a flag or a config file's key under the default policy)
    taken as recorded and sourced as such. A policy file no longer readable is rebuilt from the record."""
    name = str(config.get("policy") or "default")
    try:
        base = load_policy(name)
    except InvalidParameterError:
        base = DEFAULT_POLICY.model_copy(update={"name": name, "origin": f"{name} (not readable now: its settings "
                                                                        "as results.json records them)"})
    recorded = recorded_settings(config)
    changed = {k: v for k, v in recorded.items() if k in base.setting_names() and base.value(k) != v}
    if not changed:
        return base
    top = {k: v for k, v in changed.items() if k in _TOP}
    thresholds = base.thresholds.model_copy(update={k: v for k, v in changed.items() if k not in _TOP})
    sources = {**base.sources, **{k: "set by this audit's own settings (a flag or its config file), not by the "
                                     "policy" for k in changed}}
    return Policy(**{**base.model_dump(exclude={"thresholds", "sources"}), **top,
                     "name": f"{base.name}, with the audit's own {', '.join(changed)}"},
                  thresholds=thresholds, sources=sources)


def _toml_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return repr(v) if math.isfinite(v) else "nan"
    s = str(v).replace("\\", "\\\\").replace('"', '\\"')
    return f'"{s}"'


def policy_toml(policy: Policy) -> str:
    """``policy`` as a TOML file :func:`load_policy` reads back to the same policy (a threshold that is None,
    ``epsilon_budget`` by default, is left out: absent means none)."""
    lines = [f"name = {_toml_value(policy.name)}"]
    if policy.description:
        lines.append(f"description = {_toml_value(policy.description)}")
    lines += [f"{k} = {_toml_value(getattr(policy, k))}" for k in _TOP]
    lines += ["", "[thresholds]"]
    lines += [f"{k} = {_toml_value(v)}" for k, v in policy.thresholds.model_dump().items() if v is not None]
    lines += ["", "[sources]"]
    lines += [f"{k} = {_toml_value(policy.sources[k])}" for k in policy.setting_names()]
    return "\n".join(lines) + "\n"
