"""The sections of ``results.json`` as typed models: what each analysis reports, field by field.

Each section is a :class:`Section`: a frozen, closed pydantic model whose fields are typed (``res.dtp.n_above``,
``res.membership["lira"].auc``), written in the order the analysis gave them; a key it does not declare is refused
(a section may gain optional keys in later schema versions). A section also reads as the mapping it is written as
(``res.dtp["n_above"]``, ``res.dtp.get("test")``), so code written against ``results.json`` works on the result in
memory. ``docs/results.schema.json`` is generated from these models
(:func:`leakaudit.audit.results.results_json_schema`).

Values that could not be measured are NaN in memory and ``null`` in ``results.json`` (strict JSON); the schema
says ``number or null`` for each.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Optional, Union

from .config import ProfileSettings
from pydantic import (BaseModel, ConfigDict, Field, JsonValue, PrivateAttr, WithJsonSchema, create_model,
                      model_serializer, model_validator)

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
    """One section of results.json: typed fields, written in the order given, read as a mapping; closed."""

    model_config = ConfigDict(frozen=True, extra="forbid", protected_namespaces=())
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
        return tuple(type(self).model_fields) + tuple(getattr(self, "__pydantic_extra__", None) or ())

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


class Skipped(Section):
    """An analysis that could not run, why, and what would enable it (``fix``: a flag or an input).

    ``missing`` names the inputs it lacked (``population``, ``model``, or an attack input such as ``reference``), so
    a caller can say which argument or flag gives them without reading ``reason``; results.json holds it only when it
    names any."""

    name: str = Field(min_length=1)
    reason: str = Field(min_length=1)
    fix: str = ""
    missing: list[str] = Field(default_factory=list, description="the inputs it lacked (population, model, or an "
                               "attack input such as reference); absent when none is named")

    def _omitted(self) -> set[str]:
        return set() if self.missing else {"missing"}

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
    mean_loss_members: Measured = Field(None, description="a language model: its mean loss on the member texts")
    mean_loss_nonmembers: Measured = None
    context_length: Optional[int] = None
    reference_models: Optional[list[str]] = Field(None, description="a language model's reference models")


class TprAt(Section):
    """TPR at one FPR, with its interval."""

    tpr: Measured
    ci: Interval


class EpsilonBound(Section):
    """The empirical lower bound on epsilon an attack's scores give (a threshold test on a held-out half)."""

    epsilon_lb: Measured = None
    measurable: Optional[bool] = None
    reason: Optional[str] = None
    threshold: Measured = None
    direction: Optional[str] = None
    tpr: Measured = None
    fpr: Measured = None
    tpr_lower: Measured = None
    fpr_upper: Measured = None
    n_select: Optional[int] = None
    n_eval: Optional[int] = None
    n_eval_members: Optional[int] = None
    n_eval_nonmembers: Optional[int] = None
    delta: Optional[float] = None
    confidence: Optional[float] = None
    method: Optional[str] = None


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
    reference: Optional[str] = None
    comparable: Optional[bool] = Field(None, description="the blind baseline: the texts alone do not tell the sets "
                                       "apart")
    attacks_standing: Optional[list[str]] = Field(None, description="the blind baseline: the attacks whose checks "
                                                  "stand")

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


#: a list of members by name, as every sentence names them
RECORDS = ("members named as every sentence names them (leakaudit._results.record_name): the file and its 1-based row "
           "('train.csv, row 248'), or for a table given in memory its DataFrame index label ('members.loc[1234]'), "
           "as records.csv's source and row (or index) columns give them; a schema-3 file read back: 'records.csv, "
           "record N' (its 0-based record key)")
Records = Annotated[list[str], Field(description=RECORDS)]
_Floats = list[Optional[float]]


class DtpTest(Section):
    """The statistical DTP-1 rule: each record above the threshold tested on repeated leave-one-out retraining
    (:class:`leakaudit.dtp.DTP1TestResult`; its per-record lists follow ``records``)."""

    records: Records = Field(default_factory=list)
    stage2_mean: _Floats = Field(default_factory=list)
    sd: _Floats = Field(default_factory=list)
    decisive_class: list[int] = Field(default_factory=list)
    lower_bound: _Floats = Field(default_factory=list)
    p_value: _Floats = Field(default_factory=list)
    p_adjusted: _Floats = Field(default_factory=list)
    significant: list[bool] = Field(default_factory=list)
    untested: Records = Field(default_factory=list)
    n_repeats: Optional[int] = None
    confidence: Optional[float] = None
    threshold: Optional[float] = None
    bin_width: Optional[float] = None
    n_tests: Optional[int] = None
    method: Optional[str] = None
    loo_method: Optional[str] = None
    learner: Optional[str] = None


class DtpConfirmation(Section):
    """Do the given model's outputs show it trained on the records significant for DTP-1?"""

    p_value: Measured = None
    confirmed: Optional[bool] = None
    test: Optional[str] = None
    p_value_raw_lira: Measured = Field(None, description="the same test on the records' raw LiRA scores (biased)")


class UnmeasuredBound(Section):
    """What a random sample of ``m`` unmeasured members, ``k`` of them counted, says about all ``n_unmeasured``
    (:func:`leakaudit.dtp.unmeasured_bound`), against the ``allowance``."""

    k: int
    m: int
    share: Measured = None
    share_interval: Interval = None
    count_upper: Optional[int] = None
    n_unmeasured: int
    what: Optional[str] = None
    allowance: Optional[int] = None
    within_allowance: Optional[bool] = None


class Doubling(Section):
    """The ranked top's last doubling decision: ``tail_hits`` of its last ``tail_n`` against ``sample_hits`` of the
    ``sample_n`` sampled (members ``counted`` "above" the threshold or "significant"); ``grow``: it doubled."""

    counted: str
    n_top: Optional[int] = None
    tail_hits: Optional[int] = None
    tail_n: Optional[int] = None
    sample_hits: Optional[int] = None
    sample_n: Optional[int] = None
    grow: Optional[bool] = None


class DtpScreening(Section):
    """How the members to measure were chosen when not all were: a ranked top and a random sample of the rest
    (:func:`leakaudit.dtp.screened_pdtp`), or a uniform sample (``ranking`` "none")."""

    method: Optional[str] = None
    ranking: Literal["oob", "reference", "none"]
    n_members: int
    n_top: int
    n_sample: int
    n_measured: int
    n_unmeasured: int
    extensions: Optional[int] = None
    capped: Optional[bool] = None
    doubling: Optional[Doubling] = None
    sample_planned: Optional[int] = None
    sample_needed: Optional[int] = None
    sample_budget: int
    sample_records: Records
    sample_above: int
    sample_spearman: Measured = None
    unmeasured: Optional[UnmeasuredBound] = None


class RemovalScreening(Section):
    """The re-measurement after the removal, screened: its top, its sample and what the sample says of the rest."""

    n_top: int
    n_sample: int
    capped: bool
    sample_above: int
    n_unmeasured: int
    unmeasured_above: UnmeasuredBound


class DtpRemoval(Section):
    """The members that break DTP-1 removed and the recipe retrained (:class:`leakaudit.dtp.RemovalEffect`, Long et
    al. Sec. 7): PDTP and DTP-1 after, the accuracy cost."""

    removed: Records
    n_records: int
    threshold: float
    records_measured: int
    screening: Optional[RemovalScreening] = None
    max_after: Measured
    argmax_after: Optional[str] = Field(description="the member of the largest PDTP after, by name; null: none")
    records_above_after: Records
    records_significant_after: Optional[Records] = None
    records_untested_after: Records
    confidence: float
    n_seeds: int
    n_eval: int
    accuracy_before: Measured
    accuracy_before_interval: Interval
    accuracy_after: Measured
    accuracy_after_interval: Interval
    accuracy_cost: Measured
    accuracy_cost_interval: Interval
    max_before: Measured = None
    n_significant_before: Optional[int] = None
    what: Optional[str] = None


class DtpSection(Section):
    """PDTP of the training records and the DTP-1 rule (Long et al.)."""

    n_records: int = Field(ge=0)
    max: Measured
    mean: Measured
    n_above: int = Field(ge=0)
    records_above: Records
    rule: Literal["statistical", "long"]
    seed_policy: Optional[str] = None
    bin_width: Optional[float] = None
    kind: Optional[str] = None
    noise_floor: Optional[NoiseFloor] = None
    test: Optional[DtpTest] = None
    n_significant: Optional[int] = _COUNT
    records_significant: Optional[Records] = None
    records_untested: Optional[Records] = None
    confirmation: Optional[DtpConfirmation] = None
    retrains_exactly: Optional[bool] = Field(
        default=None, description="the recipe retrained on the members gives the given model's outputs exactly (a "
        "learner whose seed does not matter): DTP-1's finding is the given model's, and no confirmation is run")
    screening: Optional[DtpScreening] = None
    removal: Optional[DtpRemoval] = None


class AttributeInference(Section):
    """Attribute inference of one sensitive column: the advantage of members over non-members (Yeom et al.)."""

    values: Optional[list[str]] = Field(None, description="the values inferred among")
    advantage: Measured
    advantage_ci: Interval
    member_accuracy: Measured = None
    nonmember_accuracy: Measured = None
    baseline_accuracy: Measured = None
    alternative_advantage: Measured = None
    alternative_advantage_ci: Interval = None
    n_members: Optional[int] = None
    n_nonmembers: Optional[int] = None
    method: Optional[str] = None


class PropertyEstimate(Section):
    """One group's estimated share of the training data, with and without the model (Chase et al.)."""

    true_share: Measured = None
    estimate: Measured = None
    error: Measured = None
    shadow_cv_mae: Measured = None
    population_share: Measured = None
    n_shadow_models: Optional[int] = None
    method: Optional[str] = None
    estimate_interval: Interval = None
    no_model_estimate: Measured = None
    no_model_interval: Interval = None
    model_error_upper: Measured = None
    no_model_error_lower: Measured = None
    model_helps: Optional[bool] = None
    confidence: Optional[float] = None
    sentence: Optional[str] = None
    no_model_source: Optional[str] = None


class MipSection(Section):
    """MIP noise (Izzo et al.) and its accuracy cost."""

    eta: float
    M: Measured = None
    B: Optional[int] = None
    constant_c: Measured = None
    parameters: Optional[int] = None
    parameters_with_noise: Optional[int] = None
    noise_norm: Measured = None
    parameter_norm: Measured = None
    test_accuracy_without_noise: Measured = None
    test_accuracy_without_noise_interval: Interval = None
    test_accuracy_with_noise: Measured = None
    test_accuracy_with_noise_interval: Interval = None
    accuracy_cost: Measured = None
    accuracy_cost_interval: Interval = None
    n_test: Optional[int] = None
    confidence: Optional[float] = None
    sentence: Optional[str] = None
    method: Optional[str] = None


class DpSection(Section):
    """With a claimed epsilon: the one-run audit of the DP-SGD recipe (Steinke et al. 2023), the claim, the verdict
    (:class:`leakaudit.dpaudit.DpsgdAudit`'s fields)."""

    claimed_epsilon: Optional[float] = None
    delta: Optional[float] = None
    accounted_epsilon: Measured = None
    accounting: Optional[str] = None
    confidence: Optional[float] = None
    bound: Optional[str] = None
    epsilon_lower_bound: Measured = None
    gdp_epsilon_lower_bound: Measured = None
    steinke_epsilon_lower_bound: Measured = None
    fdp_epsilon_lower_bound: Measured = None
    recipe_curve_rejected: Optional[bool] = None
    noise_check_epsilon_lower_bound: Measured = None
    noise_check_min_ratio: Measured = None
    noise_check_violated: Optional[bool] = None
    noise_check_verdict: Optional[str] = None
    violated: Optional[bool] = None
    verdict: Optional[str] = None
    canaries: Optional[str] = None
    m: Optional[int] = None
    n_included: Optional[int] = None
    guesses: Optional[int] = None
    correct: Optional[int] = None
    k_plus: Optional[int] = None
    k_minus: Optional[int] = None
    n_candidates: Optional[int] = None
    n_train: Optional[int] = None
    noise_multiplier: Optional[float] = None
    max_grad_norm: Optional[float] = None
    sampling: Optional[str] = None
    sampling_rate: Optional[float] = None
    steps: Optional[int] = None
    epochs: Optional[int] = None
    lr: Optional[float] = None
    train_accuracy: Measured = None
    bug: Optional[str] = None
    trainer: Optional[str] = None
    seconds: Optional[float] = None
    cpu_seconds: Optional[float] = None


class SetTest(Section):
    """Dataset inference's set-level test (:class:`leakaudit.lm.dataset_inference.SetTest`)."""

    p_value: Measured
    statistic: Measured = None
    mean_difference: Measured = None
    auc: Measured = None
    coef: dict[str, Optional[float]] = Field(default_factory=dict, description="feature -> weight (standardised)")
    n_fit: list[int] = Field(default_factory=list, description="(suspect, unseen) texts fitting the combination")
    n_test: list[int] = Field(default_factory=list, description="(suspect, unseen) texts in the test halves")
    test: Literal["welch", "permutation"] = "welch"


class PowerCurve(Section):
    """How often the set-level test detects use at each set size (:class:`leakaudit.lm.dataset_inference.
    PowerCurve`)."""

    sizes: list[int]
    rate: list[Optional[float]]
    interval: list[Interval]
    n_repeats: int
    alpha: float
    target: float
    smallest_detected: Optional[int] = None


class DatasetInferenceSection(Section):
    """A language-model audit with dataset inference: the members as a set against the non-members (Maini et al.
    2024), the set-level test, the blind baseline's guard and the power curve."""

    verdict: Literal["used", "not detected", "not comparable"]
    sentence: Optional[str] = None
    comparable: bool
    alpha: Optional[float] = None
    test: Optional[SetTest] = None
    power: Optional[PowerCurve] = None
    features: Optional[list[str]] = None
    blind_auc: Measured = None
    blind_p_value: Measured = None
    n_suspect: Optional[int] = None
    n_unseen: Optional[int] = None
    feature_auc: dict[str, Optional[float]] = Field(default_factory=dict)


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
    """What one stage spent: the models it trained or read from the cache (the shadow attack: its attack model's
    training), and its seconds."""

    n_models: Optional[int] = _COUNT
    trained: Optional[int] = _COUNT
    chunks_from_cache: Optional[int] = _COUNT
    chunks_trained: Optional[int] = _COUNT
    corrupt_cache_entries: Optional[int] = _COUNT
    cache_dir: Optional[str] = None
    backend: Optional[str] = None
    outputs_on_disk: Optional[bool] = None
    n_shadow_models: Optional[int] = _COUNT
    n_reference_models: Optional[int] = _COUNT
    attack_training_rows: Optional[int] = _COUNT
    network: Optional[str] = None
    uses_record_features: Optional[bool] = None
    seconds: Optional[float] = None


class Resources(Section):
    """Peak memory and, per stage (``reference_models``, ``pdtp_models``, ...), what it spent."""

    model_config = ConfigDict(extra="allow")
    __pydantic_extra__: dict[str, StageResources] = Field(init=False)  # every further key is a stage's
    peak_memory_mb: Measured = None

    def stage(self, name: str) -> StageResources | None:
        """One stage's counters, or None."""
        return self.get(name)


class RetrainingRecipe(Section):
    """The recipe the audited model's retrained instances follow (reference, shadow and leave-one-out models)."""

    algorithm: str
    module: Optional[str] = Field(None, description="a torch module: its class, package.module:Class")
    module_arguments: Optional[str] = Field(None, description="a torch module's arguments, name=value")
    parameters: dict[str, Union[bool, int, float, str]] = Field(
        default_factory=dict, description="the algorithm's parameters as plain values: a torch module's [training] "
        "recipe, leakaudit's learner's parameters, a scikit-learn estimator's repr (`estimator`) or a Pipeline's steps "
        "(`step 1: NAME`, ...); a parameter left at the algorithm's default is not listed")
    seeds: Optional[str] = None


def _optional_fields(model: type[BaseModel]) -> dict[str, Any]:
    """``model``'s fields as optional ones (null where not given), with their descriptions: for :func:`create_model`."""
    return {k: (Optional[f.annotation], Field(None, description=f.description)) for k, f in model.model_fields.items()}


class _Settings(Section):
    """The profile's settings (:class:`~leakaudit.audit.config.ProfileSettings`: reference models, shadow-attack
    models, PDTP records, ...), and the recipe the audited model's retrained instances follow; a language model's
    audit: its attacks, blind baseline and scoring."""

    profile: Optional[Literal["smoke", "standard", "thorough"]] = None
    device: Optional[str] = None
    shadow_attack: Optional[str] = None
    retraining_recipe: Optional[RetrainingRecipe] = None
    min_k: Optional[float] = None
    attacks: Optional[str] = None
    blind_baseline: Optional[str] = None
    scoring: Optional[str] = None


Settings = create_model("Settings", __base__=_Settings, __module__=__name__, __doc__=_Settings.__doc__,
                        **_optional_fields(ProfileSettings))


class RecipeTest(Section):
    """Does retraining reproduce the given model's membership signal?"""

    member_loss: Measured = None
    nonmember_loss: Measured = None
    ref_in_loss: Measured = None
    ref_out_loss: Measured = None
    test: Optional[str] = None
    signal: Measured = Field(None, description="the given model's membership signal (AUC of its calibrated loss)")
    ref_signal: Optional[dict[Literal["mean", "sd", "k"], Measured]] = Field(
        None, description="the reference models' signals: mean, sd, and k models")
    p_value: Measured = None
    reproduces: Optional[bool] = None
    sentence: Optional[str] = None
