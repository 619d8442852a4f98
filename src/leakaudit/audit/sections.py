"""The sections of ``results.json`` as typed models: what each analysis reports, field by field.

Each section is a :class:`Section`: a frozen pydantic model whose documented fields are typed (``res.dtp.n_above``,
``res.membership["lira"].auc``) and which may carry further keys an analysis adds (a section may gain optional
keys in later versions; they are kept, in the order the analysis wrote them). A section also reads as the mapping it
is written as (``res.dtp["n_above"]``, ``res.dtp.get("test")``), so code written against ``results.json`` works on
the result in memory. ``docs/results.schema.json`` is generated from these models
(:func:`leakaudit.audit.results.results_json_schema`).

Values that could not be measured are NaN in memory and ``null`` in ``results.json`` (strict JSON); the schema
says ``number or null`` for each.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Optional

from pydantic import (BaseModel, ConfigDict, Field, JsonValue, PrivateAttr, WithJsonSchema, model_serializer,
                      model_validator)

from .config import Phrase, Phrased

__all__ = ["Section", "Skipped", "Measured", "Interval", "MEASURED_SCHEMA", "INTERVAL_SCHEMA", "DataSection", "TargetSection", "TprAt", "EpsilonBound",
           "AttackMetrics", "NoiseFloor", "DtpTest", "DtpConfirmation", "DtpSection", "AttributeInference",
           "PropertyEstimate", "MipSection", "DpSection", "DatasetInferenceSection", "RecordRiskSection",
           "StageResources", "Resources", "Settings", "RecipeTest"]

MEASURED_SCHEMA = {"type": ["number", "null"], "description": "a measured value; null: could not be measured (NaN, inf)"}
INTERVAL_SCHEMA = {"type": ["array", "null"], "items": {"type": ["number", "null"]}, "minItems": 2, "maxItems": 2,
                   "description": "[low, high] confidence interval; null (or null ends) where it could not be computed"}
#: a measured number: NaN in memory where it could not be measured, null in results.json
Measured = Annotated[Optional[float], WithJsonSchema(MEASURED_SCHEMA)]
#: a confidence interval [low, high]; null (or null ends) where it could not be computed
Interval = Annotated[Optional[list[Optional[float]]], WithJsonSchema(INTERVAL_SCHEMA)]
_COUNT = Field(default=None, ge=0)


class Section(BaseModel):
    """One section of results.json: typed documented fields, further keys kept in their order, read as a mapping."""

    model_config = ConfigDict(frozen=True, extra="allow", protected_namespaces=())
    _keys: tuple | None = PrivateAttr(default=None)  # the keys given, in order (None: built otherwise)

    @model_validator(mode="wrap")
    @classmethod
    def _remember_order(cls, data: Any, handler):
        from .._results import to_jsonable

        if isinstance(data, dict):
            data = to_jsonable(data)
        inst = handler(data)
        if isinstance(data, dict):
            object.__setattr__(inst, "_keys", tuple(data))
        return inst

    @model_serializer(mode="wrap")
    def _in_order(self, handler) -> dict[str, Any]:
        """Only the keys the analysis gave, in its order (a documented field it did not give is not written)."""
        d = handler(self)
        omit = self._omitted()
        return {k: d[k] for k in self._given() if k in d and k not in omit}

    def _omitted(self) -> set[str]:
        """Keys not written although given (none here)."""
        return set()

    # -- read as the mapping results.json holds ------------------------------------------------------------------
    def _given(self) -> tuple:
        if self._keys is not None:
            return self._keys
        return tuple(type(self).model_fields) + tuple(self.__pydantic_extra__ or ())

    def __getitem__(self, key: str) -> Any:
        if key not in self._given():
            raise KeyError(key)
        return getattr(self, key)

    def get(self, key: str, default: Any = None) -> Any:
        return getattr(self, key) if key in self._given() else default

    def __contains__(self, key: object) -> bool:
        return key in self._given()

    def keys(self) -> tuple:
        return self._given()

    def items(self):
        return [(k, getattr(self, k)) for k in self._given()]

    def __iter__(self):  # type: ignore[override]  # iterate keys, as the dict it replaces did
        return iter(self._given())

    def __len__(self) -> int:
        return len(self._given())

    def to_dict(self) -> dict[str, Any]:
        """This section as results.json writes it (numpy-free, NaN kept)."""
        return self.model_dump(mode="python")

    def __dir__(self) -> list[str]:
        from .._results import public_dir

        return public_dir(self)


class Skipped(Section, Phrased):
    """An analysis that could not run, why, and what would enable it (``fix``: a flag or an input).

    ``missing`` names the inputs it lacked (``population``, ``model``, or an attack input such as ``reference``), so
    a caller can say which argument or flag gives them without reading ``reason``; results.json holds it only when it
    names any. ``reason_parts`` and ``fix_parts``: ``reason`` and ``fix`` with the settings they name as structured
    references (either given as a :class:`~leakaudit.audit.config.Phrase`), said per surface by :meth:`said`."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1)
    reason: str = Field(min_length=1)
    reason_parts: Optional[Phrase] = None
    fix: str = ""
    fix_parts: Optional[Phrase] = None
    missing: list[str] = Field(default_factory=list, description="the inputs it lacked (population, model, or an "
                               "attack input such as reference); absent when none is named")

    def _given(self) -> tuple:
        return tuple(type(self).model_fields)

    def _omitted(self) -> set[str]:
        return {k for k in ("missing", "reason_parts", "fix_parts") if not getattr(self, k)}

    def as_dict(self) -> dict:
        """results.json's entry: name, reason, fix, and ``missing`` when it names any input."""
        return self.model_dump()


class DataSection(Section):
    """The audited records: sizes, label, classes, sensitive columns, where they came from (a language-model audit:
    ``kind`` "text", the texts, no label)."""

    name: Optional[str] = None
    description: Optional[str] = None
    n_members: int = Field(ge=1)
    n_nonmembers: int = Field(ge=1)
    n_population: Optional[int] = _COUNT
    n_features: Optional[int] = Field(default=None, ge=1)
    label: Optional[str] = None
    class_names: Optional[list[str]] = Field(default=None, min_length=2)
    sensitive: Optional[list[str]] = None
    files: Optional[dict[str, str]] = Field(default=None, description="each input: its path or origin")
    record_columns: Optional[list[str]] = None
    kind: Optional[str] = None
    text_column: Optional[str] = None
    n_tokens: Optional[int] = _COUNT
    n_truncated: Optional[int] = _COUNT

    model_config = ConfigDict(json_schema_extra={
        "if": {"not": {"required": ["kind"], "properties": {"kind": {"const": "text"}}}},
        "then": {"required": ["label", "class_names"]}})


class TargetSection(Section):
    """What was audited: its kind, a description, its accuracy on the members and the non-members."""

    kind: str
    description: str
    train_accuracy: Measured = None
    test_accuracy: Measured = None
    retrainable: Optional[bool] = None


class TprAt(Section):
    """TPR at one FPR, with its interval."""

    tpr: Measured
    ci: Interval


class EpsilonBound(Section):
    """The empirical lower bound on epsilon an attack's scores give (a threshold test on a held-out half)."""

    epsilon_lb: Measured = None
    measurable: Optional[bool] = None
    reason: Optional[str] = None


class AttackMetrics(Section):
    """One membership attack's metrics: members against non-members by its scores."""

    n_members: int = Field(ge=0)
    n_nonmembers: int = Field(ge=0)
    auc: Measured
    auc_ci: Interval
    auc_ci_method: Optional[str] = None
    advantage: Measured
    confidence: Optional[float] = None
    tpr_at_fpr: dict[Annotated[str, Field(pattern=r"^[0-9.eE+-]+$")], TprAt] = Field(
        description="keyed by the FPR as a string ('0.01')")
    epsilon: Optional[EpsilonBound] = None
    display: Optional[str] = Field(None, description="the attack's name in words, as the report shows it")
    description: Optional[str] = Field(None, description="what the attack does and whose it is (a tabular attack's "
                                       "registry description; a language-model attack gives its citation as "
                                       "`reference`)")

    def tpr_at(self, fpr: float) -> TprAt | None:
        """The TPR at ``fpr`` (one of the audit's low FPRs) with its interval; None if it was not measured."""
        from ..metrics import tpr_entry

        return tpr_entry(self.tpr_at_fpr, fpr)


class NoiseFloor(Section):
    """How much a record's largest-class log-probability moves between retrainings with other seeds."""

    median: Measured = None
    p90: Measured = None
    n_models: Optional[int] = None
    what: Optional[str] = None


class DtpTest(Section):
    """The statistical DTP-1 rule: each record above the threshold tested on repeated leave-one-out retraining."""

    records: list[int] = Field(default_factory=list)
    p_value: list[Optional[float]] = Field(default_factory=list)
    p_adjusted: list[Optional[float]] = Field(default_factory=list)
    significant: list[bool] = Field(default_factory=list)
    n_repeats: Optional[int] = None
    confidence: Optional[float] = None
    threshold: Optional[float] = None
    method: Optional[str] = None


class DtpConfirmation(Section):
    """Do the given model's outputs show it trained on the records significant for DTP-1?"""

    p_value: Measured = None
    confirmed: Optional[bool] = None
    test: Optional[str] = None


class DtpSection(Section):
    """PDTP of the training records and the DTP-1 rule (Long et al.)."""

    n_records: int = Field(ge=0)
    max: Measured
    mean: Measured
    n_above: int = Field(ge=0)
    records_above: list[int] = Field(description="members by records.csv's `record` key (0 = the first member), as "
                                     "every list of records here; sentences and the report name each record by its "
                                     "file and row, or its DataFrame index label")
    rule: str
    noise_floor: Optional[NoiseFloor] = None
    test: Optional[DtpTest] = None
    n_significant: Optional[int] = _COUNT
    records_significant: Optional[list[int]] = None
    records_untested: Optional[list[int]] = None
    confirmation: Optional[DtpConfirmation] = None
    retrains_exactly: Optional[bool] = Field(
        default=None, description="the recipe retrained on the members gives the given model's outputs exactly (a "
        "learner whose seed does not matter): DTP-1's finding is the given model's, and no confirmation is run")
    screening: Optional[dict[str, Any]] = Field(
        default=None, description="how the members to measure were chosen when not all were")
    removal: Optional[dict[str, Any]] = Field(
        default=None, description="the members that break DTP-1 removed and the recipe retrained (Long et al. Sec. 7)")


class AttributeInference(Section):
    """Attribute inference of one sensitive column: the advantage of members over non-members (Yeom et al.)."""

    advantage: Measured
    advantage_ci: Interval
    member_accuracy: Measured = None
    nonmember_accuracy: Measured = None
    baseline_accuracy: Measured = None
    n_members: Optional[int] = None
    n_nonmembers: Optional[int] = None


class PropertyEstimate(Section):
    """One group's estimated share of the training data, with and without the model (Chase et al.)."""

    true_share: Measured = None
    estimate: Measured = None
    estimate_interval: Interval = None
    model_helps: Optional[bool] = None
    sentence: Optional[str] = None


class MipSection(Section):
    """MIP noise (Izzo et al.) and its accuracy cost."""

    eta: float
    accuracy_cost: Measured = None
    accuracy_cost_interval: Interval = None
    sentence: Optional[str] = None


class DpSection(Section):
    """With a claimed epsilon: the one-run audit of the DP-SGD recipe (Steinke et al. 2023), the claim, the verdict."""

    claimed_epsilon: Optional[float] = None
    accounted_epsilon: Measured = None
    epsilon_lower_bound: Measured = None
    confidence: Optional[float] = None
    violated: Optional[bool] = None
    verdict: Optional[str] = None


class DatasetInferenceSection(Section):
    """A language-model audit with dataset inference: the members as a set against the non-members (Maini et al.
    2024), the set-level test, the blind baseline's guard and the power curve."""

    verdict: Literal["used", "not detected", "not comparable"]
    sentence: Optional[str] = None
    comparable: bool
    alpha: Optional[float] = None
    test: Optional[dict[str, Any]] = None
    power: Optional[dict[str, Any]] = None
    features: Optional[list[str]] = None


class RegisteredAnalysis(BaseModel):
    """The section of an analysis registered from outside leakaudit (:func:`leakaudit.register_analysis`): what it
    is, in its own words, and the plain values it reported, so that the report renders it without the plug-in."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    title: str
    description: str
    values: dict[str, JsonValue]


class RecordRiskSection(Section):
    """How records.csv's p_ATTACK and flagged_by columns were computed, and how many members each flags."""

    method: str
    false_discovery_rate: float
    flagged: dict[str, int]
    n_members_flagged: int = Field(ge=0)
    resolution: Optional[str] = None


class StageResources(Section):
    """Models one stage trained or read from the cache."""

    n_models: Optional[int] = _COUNT
    trained: Optional[int] = _COUNT
    chunks_from_cache: Optional[int] = _COUNT
    chunks_trained: Optional[int] = _COUNT
    corrupt_cache_entries: Optional[int] = _COUNT
    cache_dir: Optional[str] = None


class Resources(Section):
    """Peak memory and, per stage, the models trained or read from the cache."""

    peak_memory_mb: Measured = None

    def stage(self, name: str) -> StageResources | None:
        """One stage's counters (``reference_models``, ``pdtp_models``, ...), or None."""
        v = self.get(name)
        return None if v is None else StageResources.model_validate(v)


class Settings(Section):
    """The profile's settings (reference models, shadow-attack models, PDTP records, ...) and, for a torch module,
    the recipe its retrained instances follow."""

    profile: Optional[Literal["smoke", "standard", "thorough"]] = None
    n_reference: Optional[int] = None
    retraining_recipe: Optional[dict[str, Any]] = None


class RecipeTest(Section):
    """Does retraining reproduce the given model's membership signal?"""

    reproduces: Optional[bool] = None
    p_value: Measured = None
    sentence: Optional[str] = None
    test: Optional[str] = None
