"""The schema of ``results.json`` (versioned; fields never change meaning, new ones are optional)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar, Literal, Optional

from pydantic import Field, PrivateAttr

from .._results import Result
from .checks import STATUSES as STATUS_ORDER
from .checks import Check

__all__ = ["AuditResult", "Verdict", "SCHEMA_VERSION", "EXIT_CODES", "results_json_schema"]

SCHEMA_VERSION = 2  # 2: the verdict's burden of proof and policy, each check's decision

#: Process status of ``leakaudit audit --exit-code`` per outcome (2 stays "bad input").
EXIT_CODES = {"publish": 0, "do not publish": 3, "inconclusive": 4}


class Verdict(Result):
    """The outcome, every check it rests on, and the thresholds they were judged against.

    ``outcome``: "do not publish" (a check that describes the given model is exceeded at the stated confidence),
    "publish" (under the ``burden_of_proof`` "safety shown": every check that can show safety is shown below its
    threshold; under "leakage shown": every check ran with enough data and none is exceeded) or "inconclusive"
    (neither). Each check carries its ``decision`` (above, below, undecided). ``policy``: the release policy applied
    (a built-in name or the policy file); ``release`` and ``threat_model``: the release context the analyses were
    chosen for (:mod:`leakaudit.audit.release`). ``publish`` is ``outcome == "publish"``. ``reasons``, ``passed``,
    ``not_measurable`` and ``undecided`` are the sentences of the exceeded, passed, unmeasurable and passed-but-not-
    shown-below checks (the last empty under "leakage shown"). ``confidence`` is the family-wise confidence of the verdict:
    each of its ``n_checks`` checks is judged at ``check_confidence`` (Bonferroni). ``recipe``: does retraining
    reproduce the given model (the test, its p-value and a sentence)? ``exit_code``: the process status
    ``--exit-code`` gives (0 publish, 3 do not publish, 4 inconclusive).
    """

    publish: bool
    headline: str
    reasons: list[str]
    passed: list[str]
    thresholds: dict[str, Optional[float]]
    outcome: Literal["publish", "do not publish", "inconclusive"] = "publish"
    not_measurable: list[str] = Field(default_factory=list)
    checks: list[Check] = Field(default_factory=list)
    confidence: Optional[float] = None
    check_confidence: Optional[float] = None
    n_checks: int = 0
    recipe: Optional[dict[str, Any]] = None
    dtp_rule: str = "statistical"
    undecided: list[str] = Field(default_factory=list)
    burden_of_proof: Literal["safety shown", "leakage shown"] = "safety shown"
    policy: str = "default"
    release: Optional[str] = None
    threat_model: str = ""
    exit_code: int = 0


_property = property


class AuditResult(Result):
    """Everything an audit measured (``to_dict()`` adds ``schema_version`` and ``type``).

    Sections
    --------
    config : the full :class:`~leakaudit.audit.config.AuditConfig` (enough to re-run)
    data : sizes, label, classes, sensitive columns, where the data came from
    target : what was audited (kind, accuracy on members and non-members)
    membership : per attack, ``MembershipMetrics`` fields (auc, auc_ci, advantage, tpr_at_fpr)
    dtp : PDTP summary, records above the threshold, noise floor
    attribute, property, mip : each capability's summary
    dp : with a claimed epsilon, the one-run audit of the DP-SGD recipe (``DpsgdAudit`` fields; optional, schema 1)
    dataset_inference : a language-model audit with ``dataset_inference``: the members as a set
        (``DatasetInference`` fields, ``comparable`` and ``verdict``; optional, schema 2)
    skipped : analyses that could not run, each with its reason
    verdict : :class:`Verdict`
    timings : seconds per stage; resources : peak memory, models trained or read from the cache per stage
    settings : the profile's settings (reference models, shadow-attack models, PDTP records, ...) and, for a
        torch module target, the recipe its retrained instances follow (optional; added in 0.x, schema 1)
    """

    schema_version: ClassVar[int] = SCHEMA_VERSION

    leakaudit_version: str
    created: str
    command: str
    config: dict[str, Any]
    data: dict[str, Any]
    target: dict[str, Any]
    membership: dict[str, Any] = Field(default_factory=dict)
    dtp: dict[str, Any] | None = None
    attribute: dict[str, Any] = Field(default_factory=dict)
    property: dict[str, Any] = Field(default_factory=dict)
    mip: dict[str, Any] | None = None
    dp: dict[str, Any] | None = None
    dataset_inference: dict[str, Any] | None = None
    skipped: list[dict[str, Any]] = Field(default_factory=list)
    verdict: Verdict
    timings: dict[str, float]
    resources: dict[str, Any]
    settings: dict[str, Any] = Field(default_factory=dict)
    record_risk: Optional[dict[str, Any]] = None

    _records: Any = PrivateAttr(default=None)
    _evidence: Any = PrivateAttr(default=None)
    # the field ``property`` above shadows the builtin in this class body

    # -- in memory ----------------------------------------------------------------------------------------------
    def with_records(self, records) -> "AuditResult":
        """This result, holding its per-record table (``records.csv``'s rows); returns ``self``."""
        self._records = records
        return self

    def with_evidence(self, evidence: dict) -> "AuditResult":
        """This result, holding its evidence record (``evidence.json``); returns ``self``."""
        self._evidence = evidence
        return self

    @_property
    def evidence(self) -> dict | None:
        """The evidence record (:func:`leakaudit.audit.evidence.build_evidence`, made when the audit ran: the
        SHA-256 of every input file, the versions, the policy and each threshold's source, the release context,
        every check and the attack classes tested or not); what ``save`` writes as evidence.json. None for a result
        read back from results.json alone."""
        return self._evidence

    @_property
    def records(self):
        """pandas.DataFrame of shape (n_members + n_nonmembers, n_columns): one row per audited record, members
        first (``record``, ``source``, ``row``, ``is_member``, ``label``, the record's values, ``score_ATTACK`` per
        membership attack, ``pdtp``, ``risk_rank``); what ``save`` writes as records.csv. None for a result read
        back from results.json alone."""
        return self._records

    @_property
    def outcome(self) -> str:
        """"publish", "do not publish" or "inconclusive"."""
        return self.verdict.outcome

    @_property
    def checks(self) -> list[Check]:
        """Every check the verdict rests on."""
        return list(self.verdict.checks)

    def checks_frame(self):
        """The checks as a pandas.DataFrame, one row each (id, name, status, decision, value, interval, threshold,
        sentence)."""
        import pandas as pd

        rows = [{"id": c.id, "name": c.name, "status": c.status, "decision": c.decision, "value": c.value,
                 "low": None if c.interval is None else c.interval[0],
                 "high": None if c.interval is None else c.interval[1], "threshold": c.threshold,
                 "describes": c.describes, "sentence": c.sentence, "fix": c.fix} for c in self.verdict.checks]
        return pd.DataFrame(rows, columns=["id", "name", "status", "decision", "value", "low", "high", "threshold",
                                           "describes", "sentence", "fix"])

    def save(self, out: str | Path) -> Path:
        """Write results.json, records.csv, report.html and evidence.json into the folder ``out`` (created if
        missing), exactly as ``leakaudit audit --out`` writes them: together or not at all. Returns ``out``."""
        from .output import check_out_writable, write_audit_files

        if self._records is None:
            from ..exceptions import InvalidParameterError

            raise InvalidParameterError("this result holds no per-record table (it was read from results.json "
                                        "alone); save needs the result leakaudit.audit returned")
        out = Path(out)
        check_out_writable(out)
        write_audit_files(out, self.to_dict(), self._records, evidence=self._evidence)
        return out

    def __repr__(self) -> str:
        counts = {s: sum(c.status == s for c in self.verdict.checks) for s in STATUS_ORDER}
        return (f"AuditResult(outcome={self.verdict.outcome!r}, checks: {counts['exceeded']} exceeded, "
                f"{counts['passed']} passed, {counts['not measurable']} not measurable; "
                f"{self.data.get('n_members')} members, {self.data.get('n_nonmembers')} non-members)")

    def _repr_html_(self) -> str:
        """A notebook's view: the verdict, its headline and every check."""
        from html import escape

        colour = {"publish": "#1a7f37", "do not publish": "#cf222e", "inconclusive": "#9a6700"}[self.outcome]
        rows = "".join(
            f"<tr><td>{escape(c.name)}</td><td>{escape(c.status)}</td>"
            f"<td>{'' if c.value is None else f'{c.value:.4g}'}</td>"
            f"<td>{'' if c.interval is None else f'[{c.interval[0]:.4g}, {c.interval[1]:.4g}]'}</td>"
            f"<td>{'' if c.threshold is None else f'{c.threshold:g}'}</td></tr>" for c in self.verdict.checks)
        return (f"<div><p><b style='color:{colour}'>{escape(self.outcome.upper())}</b>: "
                f"{escape(self.verdict.headline)}</p>"
                f"<p>{self.data.get('n_members')} members, {self.data.get('n_nonmembers')} non-members; "
                f"{escape(str(self.target.get('description', '')))}</p>"
                "<table><thead><tr><th>check</th><th>status</th><th>value</th><th>interval</th><th>threshold</th>"
                f"</tr></thead><tbody>{rows}</tbody></table></div>")


_MEASURED = {"type": ["number", "null"], "description": "a measured value; null: could not be measured (NaN, inf)"}
_INTERVAL = {"type": ["array", "null"], "items": {"type": ["number", "null"]}, "minItems": 2, "maxItems": 2,
             "description": "[low, high] confidence interval; null (or null ends) where it could not be computed"}


def results_json_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of ``results.json``, published as ``docs/results.schema.json``.

    Every top-level key is described; the verdict, its checks, the skipped analyses and the membership metrics
    in detail; the other sections by their main keys (their objects may gain optional keys in later versions, so
    they allow more). ``config`` is :class:`~leakaudit.audit.config.AuditConfig`'s own schema. Numbers that could not
    be measured are ``null`` (results.json is strict JSON: never ``NaN`` or ``Infinity``).
    """
    from .checks import STATUSES
    from .config import AuditConfig

    config = AuditConfig.model_json_schema(mode="serialization")
    config_defs = config.pop("$defs", {})
    obj = {"type": "object"}
    counters = {"type": "object", "properties": {
        "n_models": {"type": "integer", "minimum": 0}, "trained": {"type": "integer", "minimum": 0},
        "chunks_from_cache": {"type": "integer", "minimum": 0}, "chunks_trained": {"type": "integer", "minimum": 0},
        "corrupt_cache_entries": {"type": "integer", "minimum": 0}, "cache_dir": {"type": ["string", "null"]}}}
    check = {
        "type": "object",
        "description": "One claim the verdict rests on (leakaudit.audit.checks.Check).",
        "required": ["id", "analysis", "name", "status", "sentence"],
        "additionalProperties": False,
        "properties": {
            "id": {"type": "string", "pattern": r"^[a-z_]+\..+", "description": "analysis.subject.metric, stable"},
            "analysis": {"type": "string", "enum": ["membership", "dtp", "attribute", "property", "mip", "dp",
                                                          "structural", "dataset_inference"]},
            "name": {"type": "string", "minLength": 1},
            "status": {"enum": list(STATUSES)},
            "value": _MEASURED,
            "interval": _INTERVAL,
            "threshold": {"type": ["number", "null"]},
            "confidence": {"type": ["number", "null"], "exclusiveMinimum": 0, "maximum": 1},
            "sentence": {"type": "string", "minLength": 1},
            "fix": {"type": "string", "description": "for 'not measurable' or undecided: what would decide it"},
            "describes": {"enum": ["model", "recipe"]},
            "shows": {"enum": ["both", "leakage only"],
                      "description": "'leakage only': a lower bound, which can show leakage but never its absence"},
            "decision": {"enum": ["above", "below", "undecided", None],
                         "description": "shown above its threshold, shown below it, or neither (schema 2)"},
        },
        "allOf": [{"if": {"properties": {"status": {"const": "not measurable"}}},
                   "else": {"properties": {"value": {"type": "number"}}}}],
    }
    verdict = {
        "type": "object",
        "description": "The outcome and every check it rests on (leakaudit.audit.results.Verdict).",
        "required": ["publish", "headline", "reasons", "passed", "thresholds", "outcome", "not_measurable", "checks",
                     "n_checks", "exit_code"],
        "additionalProperties": False,
        "properties": {
            "publish": {"type": "boolean", "description": "outcome == 'publish'"},
            "outcome": {"enum": list(EXIT_CODES)},
            "headline": {"type": "string", "minLength": 1},
            "reasons": {"type": "array", "items": {"type": "string"}},
            "passed": {"type": "array", "items": {"type": "string"}},
            "not_measurable": {"type": "array", "items": {"type": "string"}},
            "thresholds": {"type": "object", "additionalProperties": {"type": ["number", "null"]}},
            "checks": {"type": "array", "items": {"$ref": "#/$defs/check"}},
            "confidence": {"type": ["number", "null"]},
            "check_confidence": {"type": ["number", "null"]},
            "n_checks": {"type": "integer", "minimum": 0},
            "recipe": {"type": ["object", "null"], "description": "does retraining reproduce the given model?",
                       "properties": {"reproduces": {"type": ["boolean", "null"]}, "p_value": _MEASURED,
                                      "sentence": {"type": "string"}, "test": {"type": "string"}}},
            "dtp_rule": {"enum": ["statistical", "long"]},
            "undecided": {"type": "array", "items": {"type": "string"},
                          "description": "passed checks not shown below their thresholds (safety shown only)"},
            "burden_of_proof": {"enum": ["safety shown", "leakage shown"]},
            "policy": {"type": "string", "description": "the release policy: a built-in name or its file"},
            "release": {"enum": ["weights", "scores", "labels", None],
                        "description": "the declared release context (null: not declared)"},
            "threat_model": {"type": "string", "description": "what an adversary of that release can do"},
            "exit_code": {"enum": sorted(set(EXIT_CODES.values()))},
        },
    }
    attack = {
        "type": "object",
        "description": "One membership attack's metrics (members vs non-members by its scores).",
        "required": ["n_members", "n_nonmembers", "auc", "auc_ci", "advantage", "tpr_at_fpr"],
        "properties": {
            "n_members": {"type": "integer", "minimum": 0}, "n_nonmembers": {"type": "integer", "minimum": 0},
            "auc": _MEASURED, "auc_ci": _INTERVAL, "auc_ci_method": {"type": "string"}, "advantage": _MEASURED,
            "confidence": {"type": ["number", "null"]},
            "tpr_at_fpr": {"type": "object", "description": "keyed by the FPR as a string ('0.01')",
                           "propertyNames": {"pattern": r"^[0-9.eE+-]+$"},
                           "additionalProperties": {"type": "object", "required": ["tpr", "ci"],
                                                    "properties": {"tpr": _MEASURED, "ci": _INTERVAL}}},
            "epsilon": {"type": ["object", "null"], "properties": {"epsilon_lb": _MEASURED,
                                                                  "measurable": {"type": "boolean"},
                                                                  "reason": {"type": "string"}}},
        },
    }
    skipped = {
        "type": "object", "description": "An analysis that could not run: why, and what would enable it.",
        "required": ["name", "reason"], "additionalProperties": False,
        "properties": {"name": {"type": "string", "minLength": 1}, "reason": {"type": "string", "minLength": 1},
                       "fix": {"type": "string"},
                       "missing": {"type": "array", "items": {"type": "string"},
                                   "description": "the inputs it lacked (population, model, or an attack input "
                                                  "such as reference); absent when none is named"}},
    }
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://github.com/leakaudit/leakaudit/docs/results.schema.json",
        "title": "leakaudit results.json",
        "description": "What `leakaudit audit` measured (leakaudit.audit.results.AuditResult, schema_version "
                       f"{SCHEMA_VERSION}). Strict JSON: a value that could not be measured is null. Fields never "
                       "change meaning; new ones are optional. Generated by "
                       "leakaudit.audit.results.results_json_schema(); tests/audit/test_results_schema.py keeps "
                       "this file equal to it.",
        "type": "object",
        "required": ["schema_version", "type", "leakaudit_version", "created", "command", "config", "data", "target",
                     "membership", "dtp", "attribute", "property", "mip", "skipped", "verdict", "timings",
                     "resources"],
        "additionalProperties": False,
        "properties": {
            "schema_version": {"const": SCHEMA_VERSION},
            "type": {"const": "AuditResult"},
            "leakaudit_version": {"type": "string", "minLength": 1},
            "created": {"type": "string", "format": "date-time", "description": "UTC, ISO 8601, seconds"},
            "command": {"type": "string", "description": "the command line that produced it"},
            "config": {"$ref": "#/$defs/AuditConfig"},
            "data": {**obj, "description": "the audited records: sizes, label, classes, sensitive columns, sources "
                                           "(for a language model, kind 'text': the texts, with no label)",
                     "required": ["n_members", "n_nonmembers"],
                     "if": {"not": {"required": ["kind"], "properties": {"kind": {"const": "text"}}}},
                     "then": {"required": ["label", "class_names"]},
                     "properties": {"name": {"type": "string"}, "description": {"type": "string"},
                                    "n_members": {"type": "integer", "minimum": 1},
                                    "n_nonmembers": {"type": "integer", "minimum": 1},
                                    "n_population": {"type": "integer", "minimum": 0},
                                    "n_features": {"type": "integer", "minimum": 1},
                                    "label": {"type": "string"},
                                    "class_names": {"type": "array", "items": {"type": "string"}, "minItems": 2},
                                    "sensitive": {"type": "array", "items": {"type": "string"}},
                                    "files": {"type": "object", "additionalProperties": {"type": "string"}},
                                    "record_columns": {"type": "array", "items": {"type": "string"}},
                                    "kind": {"type": "string"}, "text_column": {"type": "string"},
                                    "n_tokens": {"type": "integer", "minimum": 0},
                                    "n_truncated": {"type": "integer", "minimum": 0}}},
            "target": {**obj, "description": "what was audited",
                       "required": ["kind", "description"],
                       "properties": {"kind": {"type": "string"}, "description": {"type": "string"},
                                      "train_accuracy": _MEASURED, "test_accuracy": _MEASURED,
                                      "retrainable": {"type": "boolean"}}},
            "membership": {**obj, "description": "per attack (loss, lira, rmia, shadow): its metrics; {} if none ran",
                           "additionalProperties": {"$ref": "#/$defs/attack"}},
            "dtp": {"type": ["object", "null"], "description": "PDTP of the training records and the DTP-1 rule; "
                                                                "null when it did not run (see skipped)",
                    "properties": {"n_records": {"type": "integer", "minimum": 0}, "max": _MEASURED,
                                   "mean": _MEASURED, "n_above": {"type": "integer", "minimum": 0},
                                   "records_above": {"type": "array"}, "rule": {"type": "string"},
                                   "noise_floor": {"type": ["object", "null"]}, "test": {"type": ["object", "null"]}}},
            "attribute": {**obj, "description": "per sensitive column: attribute inference; {} if none ran",
                          "additionalProperties": {**obj, "required": ["advantage", "advantage_ci"],
                                                   "properties": {"advantage": _MEASURED, "advantage_ci": _INTERVAL,
                                                                  "member_accuracy": _MEASURED,
                                                                  "nonmember_accuracy": _MEASURED,
                                                                  "baseline_accuracy": _MEASURED,
                                                                  "n_members": {"type": "integer"},
                                                                  "n_nonmembers": {"type": "integer"}}}},
            "property": {**obj, "description": "per group (column=value): its estimated share of the training "
                                               "data; {} if none ran",
                         "additionalProperties": {**obj, "properties": {"true_share": _MEASURED,
                                                                        "estimate": _MEASURED,
                                                                        "estimate_interval": _INTERVAL,
                                                                        "model_helps": {"type": ["boolean", "null"]},
                                                                        "sentence": {"type": "string"}}}},
            "mip": {"type": ["object", "null"], "description": "MIP noise (Izzo et al.) and its accuracy cost; null "
                                                               "when it did not run (see skipped)",
                    "properties": {"eta": {"type": "number"}, "accuracy_cost": _MEASURED,
                                   "accuracy_cost_interval": _INTERVAL, "sentence": {"type": "string"}}},
            "dp": {"type": ["object", "null"],
                   "description": "with claimed_epsilon: the one-run audit of the DP-SGD recipe (Steinke et al. "
                                  "2023), the claim and the verdict; null or absent otherwise",
                   "properties": {"claimed_epsilon": {"type": "number"}, "accounted_epsilon": _MEASURED,
                                  "epsilon_lower_bound": _MEASURED, "confidence": {"type": "number"},
                                  "violated": {"type": "boolean"}, "verdict": {"type": "string"}}},
            "dataset_inference": {
                "type": ["object", "null"],
                "description": "a language-model audit with dataset_inference: the members as a set against the "
                               "non-members (Maini et al. 2024), the set-level test, the blind baseline's guard and "
                               "the power curve; null or absent otherwise",
                "properties": {"verdict": {"enum": ["used", "not detected", "not comparable"]},
                               "sentence": {"type": "string"}, "comparable": {"type": "boolean"},
                               "alpha": {"type": "number"}, "test": obj, "power": {"type": ["object", "null"]},
                               "features": {"type": "array", "items": {"type": "string"}}}},
            "skipped": {"type": "array", "items": {"$ref": "#/$defs/skipped"}},
            "verdict": {"$ref": "#/$defs/verdict"},
            "timings": {**obj, "description": "seconds per stage",
                        "additionalProperties": {"type": "number", "minimum": 0}},
            "resources": {**obj, "description": "peak memory; per stage, models trained or read from the cache",
                          "properties": {"peak_memory_mb": _MEASURED},
                          "additionalProperties": {"anyOf": [counters, {"type": ["object", "number", "string"]}]}},
            "record_risk": {"type": ["object", "null"],
                            "description": "per-record risk: how records.csv's p_ATTACK and flagged_by columns were "
                                           "computed and how many members each attack and check flags "
                                           "(leakaudit.audit.record_risk; schema 2)",
                            "properties": {"method": {"type": "string"}, "false_discovery_rate": {"type": "number"},
                                           "flagged": {"type": "object"}, "n_members_flagged": {"type": "integer"},
                                           "resolution": {"type": "string"}}},
            "settings": {**obj, "description": "the profile's settings and, for a torch module, its retraining "
                                               "recipe",
                         "properties": {"profile": {"enum": ["smoke", "standard", "thorough"]}}},
        },
        "$defs": {"check": check, "verdict": verdict, "attack": attack, "skipped": skipped,
                  "AuditConfig": config, **config_defs},
    }
