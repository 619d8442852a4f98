"""The sections of ``results.json`` as typed models: what each analysis reports, field by field.

Each section is a :class:`Section`: a frozen, closed pydantic model whose fields are typed (``res.dtp.n_above``,
``res.membership["lira"].auc``), written in the order the analysis gave them; a key it does not declare is refused
(a section may gain optional keys in later schema versions). A section also reads as the mapping it is written as
(``res.dtp["n_above"]``, ``res.dtp.get("test")``), so code written against ``results.json`` works on the result in
memory. ``docs/results.schema.json`` is generated from these models
(:func:`leakaudit.audit.result.results.results_json_schema`).

Values that could not be measured are NaN in memory and ``null`` in ``results.json`` (strict JSON); the schema
says ``number or null`` for each.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal, Optional, Union

from pydantic import (BaseModel, ConfigDict, Field, JsonValue, PrivateAttr, WithJsonSchema, create_model,
                      model_serializer, model_validator)

from ..config import Phrase, Phrased, ProfileSettings

__all__ = ["Section", "Skipped", "Measured", "Interval", "MEASURED_SCHEMA", "INTERVAL_SCHEMA", "DataSection", "UnitSection", "TargetSection", "TprAt", "RiskBound", "EpsilonBound",
           "AttackMetrics", "NoiseFloor", "DtpTest", "DtpConfirmation", "DtpSection", "AttributeInference",
           "PropertyEstimate", "MipSection", "DpSection", "DatasetInferenceSection", "DuplicatesSection", "RecordRiskSection",
           "StageResources", "Resources", "Settings", "RecipeTest", "Records", "DtpScreening", "DtpRemoval",
           "UnmeasuredBound", "Doubling", "RemovalScreening", "SetTest", "PowerCurve", "RetrainingRecipe",
           "ExtractionSection", "RemedySetting", "RemedySection", "LeakedWindow", "ExposedText",
           "LeakedWindowsSection"]

MEASURED_SCHEMA = {"type": ["number", "null"], "description": "a measured value; null: could not be measured (NaN, inf)"}
INTERVAL_SCHEMA = {"type": ["array", "null"], "items": {"type": ["number", "null"]}, "minItems": 2, "maxItems": 2,
                   "description": "[low, high] confidence interval; null (or null ends) where it could not be computed"}
#: a measured number: NaN in memory where it could not be measured, null in results.json
Measured = Annotated[Optional[float], WithJsonSchema(MEASURED_SCHEMA)]
#: a confidence interval [low, high]; null (or null ends) where it could not be computed
Interval = Annotated[Optional[list[Optional[float]]], WithJsonSchema(INTERVAL_SCHEMA)]
_COUNT = Field(default=None, ge=0)


def _all(kind: Any, names: str) -> dict[str, Any]:
    """Fields of type ``kind`` named by ``names`` (space-separated), for :func:`_section`."""
    return dict.fromkeys(names.split(), kind)


def _section(name: str, doc: str, **fields: Any) -> type[Section]:
    """A :class:`Section` ``name`` of many plain fields: each ``name=type`` (null where not given) or
    ``name=(type, default)`` (``...``: required)."""
    return create_model(name, __base__=Section, __module__=__name__, __doc__=doc,
                        **{k: v if isinstance(v, tuple) else (v, None) for k, v in fields.items()})


class Section(BaseModel):
    """One section of results.json: typed fields, written in the order given, read as a mapping; closed."""

    model_config = ConfigDict(frozen=True, extra="forbid", protected_namespaces=())
    _keys: tuple | None = PrivateAttr(default=None)  # the keys given, in order (None: built otherwise)
    #: a section written field by field in their order, not as given: these fields only when they say something
    _when_set: ClassVar[tuple[str, ...] | None] = None

    @model_validator(mode="wrap")
    @classmethod
    def _remember_order(cls, data: Any, handler):
        from ..._results import to_jsonable

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
        omit = {k for k in self._when_set or () if not getattr(self, k)}
        return {k: d[k] for k in self._given() if k in d and k not in omit}

    # -- read as the mapping results.json holds ------------------------------------------------------------------
    def _given(self) -> tuple:
        if self._keys is not None and self._when_set is None:
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
        from ..._results import public_dir

        return public_dir(self)


class Skipped(Section, Phrased):
    """An analysis that could not run, why, and what would enable it (``fix``: a flag or an input).

    ``missing`` names the inputs it lacked (``population``, ``model``, or an attack input such as ``reference``), so
    a caller can say which argument or flag gives them without reading ``reason``; results.json holds it only when it
    names any. ``reason_parts`` and ``fix_parts``: ``reason`` and ``fix`` with the settings they name as structured
    references (either given as a :class:`~leakaudit.audit.config.Phrase`), said per surface by :meth:`said`."""

    name: str = Field(min_length=1)
    reason: str = Field(min_length=1)
    reason_parts: Optional[Phrase] = None
    fix: str = ""
    fix_parts: Optional[Phrase] = None
    missing: list[str] = Field(default_factory=list, description="the inputs it lacked (population, model, or an "
                               "attack input such as reference); absent when none is named")
    _when_set = ("fix", "missing", "reason_parts", "fix_parts")

    as_dict = Section.to_dict  # results.json's entry: name, reason, and fix and missing when they say anything


UnitSection = _section(
    "UnitSection", "The privacy unit (``unit``, ``--unit``): the column naming each row's person or group, the units\n"
    "and rows on each side, the largest unit's rows, and how an attack's row scores become a unit's (``combine``).",
    column=(str, ...), **_all(Optional[int], "n_member_units n_nonmember_units n_member_rows n_nonmember_rows "
                                            "largest_unit"), combine=Optional[str])


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
    unit: Optional[UnitSection] = None

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


RiskBound = _section(
    "RiskBound", "An attack's success bound implied by an epsilon (:func:`leakaudit.dpaudit.risk.risk_bounds`): at most\n"
    "``bound`` where ``baseline`` is its success without the release (``basis``).", **_all(Measured, "baseline bound"),
    **_all(Optional[str], "basis sentence"))
#: re-identification, attribute inference and reconstruction bounded at one epsilon
Risks = Optional[dict[Literal["reidentification", "attribute_inference", "reconstruction"], RiskBound]]
EpsilonBound = _section(
    "EpsilonBound", "The empirical lower bound on epsilon an attack's scores give (a threshold test on a held-out half:\n"
    ":class:`leakaudit.metrics.EpsilonBound`).", measurable=Optional[bool], reason=Optional[str],
    **_all(Measured, "epsilon_lb epsilon_lb_joint_beta threshold tpr fpr tpr_lower fpr_upper"), direction=Optional[str],
    delta=Optional[float],
    **_all(Optional[int], "n_select n_eval n_eval_members n_eval_nonmembers"), confidence=Optional[float],
    method=Optional[str], risk=Risks)
AgainstChance = _section(
    "AgainstChance", "An attack's accuracy and advantage over random guessing (TPR - FPR, Yeom et al.) on held-out\n"
    "records, with intervals (:func:`leakaudit.metrics.against_chance`): OWASP AISVS 11.3.3's quantity.",
    **_all(Measured, "accuracy advantage threshold"), accuracy_ci=Interval, advantage_ci=Interval,
    **_all(Optional[int], "n_eval_members n_eval_nonmembers"), confidence=Optional[float], reason=Optional[str])

class AttackMetrics(Section):
    """One membership attack's metrics: members against non-members by its scores."""

    n_members: int = Field(ge=0)
    n_nonmembers: int = Field(ge=0)
    counts: Optional[Literal["units"]] = Field(None, description="'units' with a privacy unit: n_members and "
                                               "n_nonmembers count units, each scored by the mean of its rows' scores")
    auc: Measured
    auc_ci: Interval
    auc_ci_method: Optional[str] = None
    advantage: Measured = Field(description="the largest TPR - FPR over all thresholds on all records (optimistic, "
                                "no interval; against_chance has the held-out one)")
    against_chance: Optional[AgainstChance] = None
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
    p_value: Measured = Field(None, description="the blind baseline: its permutation p-value (n_permutations, the "
                              "null's sd null_sd), over n_used texts in n_groups near-duplicate groups")
    n_permutations: Optional[int] = None
    null_sd: Measured = None
    n_used: Optional[int] = None
    n_groups: Optional[int] = None
    versus: Optional[dict[str, dict[Literal["auc", "diff", "diff_sd"], Measured]]] = Field(
        None, description="the blind baseline against each attack: its AUC, the difference and its sd")

    def tpr_at(self, fpr: float) -> TprAt | None:
        """The TPR at ``fpr`` (one of the audit's low FPRs) with its interval; None if it was not measured."""
        from ...metrics import tpr_entry

        return tpr_entry(self.tpr_at_fpr, fpr)


NoiseFloor = _section(
    "NoiseFloor", "How much a record's largest-class log-probability moves between retrainings with other seeds.",
    **_all(Measured, "median p90"), n_models=Optional[int], what=Optional[str])

#: a list of members by name, as every sentence names them
RECORDS = ("members named as every sentence names them (leakaudit._results.record_name): the file and its 1-based row "
           "('train.csv, row 248'), or for a table given in memory its DataFrame index label ('members.loc[1234]'), "
           "as records.csv's source and row (or index) columns give them; a schema-3 file read back: 'records.csv, "
           "record N' (its 0-based record key)")
Records = Annotated[list[str], Field(description=RECORDS)]
_Floats = list[Optional[float]]


DtpTest = _section(
    "DtpTest", "The statistical DTP-1 rule: each record above the threshold tested on repeated leave-one-out\n"
    "retraining (:class:`leakaudit.dtp.DTP1TestResult`; its per-record lists follow ``records``).",
    **{k: (Records, Field(default_factory=list)) for k in ("records", "untested")},
    **{k: (_Floats, Field(default_factory=list)) for k in "stage2_mean sd lower_bound p_value p_adjusted".split()},
    decisive_class=(list[int], Field(default_factory=list)), significant=(list[bool], Field(default_factory=list)),
    **_all(Optional[int], "n_repeats n_tests"), **_all(Optional[float], "confidence threshold bin_width"),
    **_all(Optional[str], "method loo_method learner"),
    repeats=(Optional[list[int]], Field(None, description="each record's repeats: more for one still undecided")),
    looks=(Optional[list[int]], Field(None, description="the repeat counts at which a record is tested")),
    look_level=(Optional[float], Field(None, description="each look's level (Bonferroni over the looks)")))

DtpConfirmation = _section(
    "DtpConfirmation", "Do the given model's outputs show it trained on the records significant for DTP-1?\n"
    "(``p_value_raw_lira``: the same test on the records' raw LiRA scores, biased.)",
    **_all(Measured, "p_value p_value_raw_lira"), confirmed=Optional[bool], test=Optional[str])

UnmeasuredBound = _section(
    "UnmeasuredBound", "What a random sample of ``m`` unmeasured members, ``k`` of them counted, says about all\n"
    "``n_unmeasured`` (:func:`leakaudit.dtp.unmeasured_bound`), against the ``allowance``.",
    **_all((int, ...), "k m n_unmeasured"), share=Measured, share_interval=Interval, count_upper=Optional[int],
    what=Optional[str], allowance=Optional[int], within_allowance=Optional[bool])

Doubling = _section(
    "Doubling", "The ranked top's last doubling decision: ``tail_hits`` of its last ``tail_n`` against\n"
    "``sample_hits`` of the ``sample_n`` sampled (members ``counted`` \"above\" the threshold or \"significant\");\n"
    "``grow``: it doubled.", counted=(str, ...), **_all(Optional[int], "n_top tail_hits tail_n sample_hits sample_n"),
    grow=Optional[bool])

DtpScreening = _section(
    "DtpScreening", "How the members to measure were chosen when not all were: a ranked top and a random sample of\n"
    "the rest (:func:`leakaudit.dtp.screened_pdtp`), or a uniform sample (``ranking`` \"none\").",
    method=Optional[str], ranking=(Literal["oob", "reference", "none"], ...), capped=Optional[bool],
    **_all((int, ...), "n_members n_top n_sample n_measured n_unmeasured sample_budget sample_above"),
    **_all(Optional[int], "extensions sample_planned sample_needed"), doubling=Optional[Doubling],
    sample_records=(Records, ...), sample_spearman=Measured, unmeasured=Optional[UnmeasuredBound])

RemovalScreening = _section(
    "RemovalScreening", "The re-measurement after the removal, screened: its top, its sample and what the sample\n"
    "says of the rest.", **_all((int, ...), "n_top n_sample sample_above n_unmeasured"), capped=(bool, ...),
    unmeasured_above=(UnmeasuredBound, ...))

DtpRemoval = _section(
    "DtpRemoval", "The members that break DTP-1 removed and the recipe retrained (:class:`leakaudit.dtp.RemovalEffect`,\n"
    "Long et al. Sec. 7): PDTP and DTP-1 after, the accuracy cost.",
    **_all((Records, ...), "removed records_above_after records_untested_after"),
    records_significant_after=Optional[Records], screening=Optional[RemovalScreening],
    argmax_after=(Optional[str], Field(description="the member of the largest PDTP after, by name; null: none")),
    **_all((int, ...), "n_records records_measured n_seeds n_eval"), **_all((float, ...), "threshold confidence"),
    **_all((Measured, ...), "max_after accuracy_before accuracy_after accuracy_cost"),
    **_all((Interval, ...), "accuracy_before_interval accuracy_after_interval accuracy_cost_interval"),
    max_before=Measured, n_significant_before=Optional[int], what=Optional[str])

RemedySetting = _section(
    "RemedySetting", "One setting of a boosted-tree recipe, retrained with it and without it over paired seeds\n"
    "(:mod:`leakaudit.audit.steps.remedy`): ``parameter`` from ``value`` to ``tried``; the loss attack's AUC and the\n"
    "accuracy on the non-members before and after; the PDTP of DTP-1's records after, where it was exceeded.",
    **_all((str, ...), "what parameter"), **_all((float, ...), "value tried"),
    **_all((Measured, ...), "auc_before auc_after auc_change accuracy_before accuracy_after accuracy_cost"),
    **_all((Interval, ...), "auc_change_interval accuracy_before_interval accuracy_after_interval "
                            "accuracy_cost_interval"),
    **_all(Optional[_Floats], "pdtp_before pdtp_after"), records_above_after=Optional[Records])

RemedySection = _section(
    "RemedySection", "What a boosted-tree recipe's leaf and bin settings change, each measured by retraining.",
    settings=(list[RemedySetting], ...), n_seeds=(int, ...), **_all((float, ...), "confidence threshold"),
    records=(Records, ...))


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
    leave_out: Optional[Literal["unit"]] = Field(None, description="'unit' with a privacy unit: each measured row's "
                                                 "leave-out model leaves out all of its unit's rows")
    n_units: Optional[int] = Field(None, ge=0, description="with a unit: the member units measured")
    units_above: Optional[list[str]] = None
    units_significant: Optional[list[str]] = None


AttributeInference = _section(
    "AttributeInference", "Attribute inference of one sensitive column: the advantage of members over non-members\n"
    "(Yeom et al.), among its ``values``.", values=Optional[list[str]], advantage=(Measured, ...),
    advantage_ci=(Interval, ...), **_all(Measured, "member_accuracy nonmember_accuracy baseline_accuracy "
                                                   "alternative_advantage"), alternative_advantage_ci=Interval,
    **_all(Optional[int], "n_members n_nonmembers"), method=Optional[str])

PropertyEstimate = _section(
    "PropertyEstimate", "One group's estimated share of the training data, with and without the model (Chase et al.).",
    **_all(Measured, "true_share estimate error shadow_cv_mae population_share no_model_estimate model_error_upper "
                     "no_model_error_lower"), **_all(Interval, "estimate_interval no_model_interval"),
    n_shadow_models=Optional[int], model_helps=Optional[bool], confidence=Optional[float],
    **_all(Optional[str], "method sentence no_model_source"))

MipSection = _section(
    "MipSection", "MIP noise (Izzo et al.) and its accuracy cost.", eta=(float, ...),
    **_all(Measured, "M constant_c noise_norm parameter_norm test_accuracy_without_noise test_accuracy_with_noise "
                     "accuracy_cost"), **_all(Optional[int], "B parameters parameters_with_noise n_test"),
    **_all(Interval, "test_accuracy_without_noise_interval test_accuracy_with_noise_interval accuracy_cost_interval"),
    confidence=Optional[float], sentence=Optional[str], method=Optional[str])

DpSection = _section(
    "DpSection", "With a claimed epsilon: the one-run audit of the DP-SGD recipe (Steinke et al. 2023), the claim, the\n"
    "verdict (:class:`leakaudit.dpaudit.DpsgdAudit`'s fields); the success each epsilon implies (``claimed_risk``: the\n"
    "claim's, alone when the audit is skipped; ``risk``: the lower bound's).",
    **_all(Optional[float], "claimed_epsilon delta confidence noise_multiplier max_grad_norm sampling_rate lr seconds "
                            "cpu_seconds"),
    **_all(Measured, "accounted_epsilon epsilon_lower_bound gdp_epsilon_lower_bound steinke_epsilon_lower_bound "
                     "fdp_epsilon_lower_bound noise_check_epsilon_lower_bound noise_check_min_ratio train_accuracy"),
    **_all(Optional[bool], "recipe_curve_rejected noise_check_violated violated"),
    **_all(Optional[str], "accounting bound noise_check_verdict verdict canaries sampling bug trainer"),
    **_all(Optional[int], "m n_included guesses correct k_plus k_minus n_candidates n_train steps epochs"),
    risk=Risks, claimed_risk=Risks)

SetTest = _section(
    "SetTest", "Dataset inference's set-level test (:class:`leakaudit.lm.dataset_inference.SetTest`): ``coef``, each\n"
    "feature's weight (standardised); ``n_fit`` and ``n_test``, the (suspect, unseen) texts fitting the combination\n"
    "and in the test halves.", p_value=(Measured, ...), **_all(Measured, "statistic mean_difference auc"),
    coef=(dict[str, Optional[float]], Field(default_factory=dict)),
    **{k: (list[int], Field(default_factory=list)) for k in ("n_fit", "n_test")},
    test=(Literal["welch", "permutation"], "welch"))

PowerCurve = _section(
    "PowerCurve", "How often the set-level test detects use at each set size\n"
    "(:class:`leakaudit.lm.dataset_inference.PowerCurve`).", sizes=(list[int], ...),
    rate=(list[Optional[float]], ...), interval=(list[Interval], ...), n_repeats=(int, ...),
    **_all((float, ...), "alpha target"), smallest_detected=Optional[int],
    test=(Literal["welch", "permutation"], "welch"))

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


class DuplicatesSection(Section, Phrased):
    """Exact and near duplicates among the members and between members and non-members
    (:mod:`leakaudit.audit.inputs.duplicates`, which defines them; ``definition`` says it in one line), and what they do to
    the per-record figures (``sentence``); ``fix``: what would remove the exact duplicates' effect, given when there
    are any; ``examples``: up to five of the members repeated or found among the non-members, by name."""

    definition: str
    n_members: int = Field(ge=0)
    n_nonmembers: int = Field(ge=0)
    members_repeated: int = Field(ge=0, description="members identical to another member")
    member_copies: int = Field(ge=0, description="members beyond the first of each group of identical members")
    member_groups: int = Field(ge=0, description="groups of two or more identical members")
    largest_group: int = Field(ge=0)
    members_in_nonmembers: int = Field(ge=0, description="members identical to a non-member")
    nonmembers_in_members: int = Field(ge=0, description="non-members identical to a member")
    members_near: int = Field(ge=0, description="members with a near duplicate among the members, not exact")
    members_near_nonmembers: int = Field(ge=0, description="members with a near duplicate among the non-members")
    nonmembers_near_members: int = Field(ge=0, description="non-members with a near duplicate among the members")
    sentence: str
    fix: str = ""
    fix_parts: Optional[Phrase] = None
    examples: list[str] = Field(default_factory=list)
    _when_set = ("fix", "fix_parts")


RateCount = _section(
    "RateCount", "``k`` of ``n`` texts, the rate and its Clopper-Pearson interval.", k=(int, ...), n=(int, ...),
    rate=Measured, interval=Interval)

ExtractionRate = _section(
    "ExtractionRate", "(n, p)-extraction at one number of tries ``n``: the least suffix probability that is\n"
    "extractable (``threshold_p_seq``), the members' and non-members' rates and their difference with Newcombe's\n"
    "interval.", n=(int, ...), threshold_p_seq=(float, ...), members=(RateCount, ...), nonmembers=(RateCount, ...),
    difference=Measured, difference_interval=Interval)

PrefixRates = _section("PrefixRates", "The extraction rates of suffixes after one prefix length (tokens).",
                       prefix_length=(int, ...), rates=(list[ExtractionRate], ...))

BoundBits = _section(
    "BoundBits", "The rank bound's ``b`` (bits) over ``n`` texts of a group: the least (the group's easiest text)\n"
    "and the median.", n=(int, ...), min=Measured, median=Measured)

ExtractionBound = _section(
    "ExtractionBound", "Liu, Evans and Xiong 2026's rank bound on extraction (arXiv 2604.18697, Algorithm 2): a span\n"
    "whose tokens have ranks ``r_t`` among the model's logits is emitted by one query of any decoding that keeps the\n"
    "model's order (greedy, temperature, top-k, top-p) with probability at most ``2^-b``, ``b = sum_t log2 r_t``.\n"
    "``rates``: per ``n``, the members' and non-members' suffixes (after any prefix length) that the bound leaves\n"
    "within reach of (n, p)-extraction, ``2^-b >= threshold_p_seq`` (the others are (n, p)-inextractable by every such\n"
    "decoding), an upper bound on the measured rates; ``suffix_bits``: ``b`` of the audited suffixes (the least over\n"
    "the prefix lengths); ``window_bits``: of each text's easiest span of as many tokens.",
    rates=(list[ExtractionRate], ...), **_all((dict[Literal["members", "nonmembers"], BoundBits], ...),
                                             "suffix_bits window_bits"))

GenerationMatch = _section(
    "GenerationMatch", "Continuations of ``n`` prefixes against their true suffixes: exact and near-verbatim matches\n"
    "(each with its Clopper-Pearson interval), mean ROUGE-L F1 and mean normalised edit distance over tokens.",
    **_all((int, ...), "n exact near_verbatim"), **_all(Measured, "exact_rate near_verbatim_rate rouge_l edit_distance"),
    **_all(Interval, "exact_interval near_verbatim_interval"))

Generations = _section(
    "Generations", "The model's greedy and sampled continuations of a seeded sample of prefixes.",
    **_all((int, ...), "prefix_length suffix_length"), near_verbatim_distance=(float, ...),
    **{k: (dict[Literal["members", "nonmembers"], Optional[GenerationMatch]], ...) for k in ("greedy", "sampled")})

PersonalData = _section("PersonalData", "A piece of a span that the personal-data detector marks (``text`` null\n"
                        "when written redacted).", kind=(Literal["e-mail", "phone", "name"], ...), text=Optional[str])

RaisedToken = _section("RaisedToken", "A token of a span's text and how much the audited model raised its\n"
                       "log-probability against the reference model (nats; ``token`` null when written redacted).",
                       token=Optional[str], delta=Measured)

ExtractableSpan = _section(
    "ExtractableSpan", "A member's most extractable span: the record, where the span starts (tokens), ``log p_s`` of\n"
    "it under the sampler given the text before it, its text and up to 60 characters before it, the personal data\n"
    "marked in it, and the tokens the audited model raised most against the reference (null: no reference); the\n"
    "texts (``span``, ``context``, the personal data's and the tokens') null when written redacted.",
    record=(str, ...), start=(int, ...), log_p=Measured, span=Optional[str], context=Optional[str],
    personal_data=(list[PersonalData], Field(default_factory=list)), raised=Optional[list[RaisedToken]])


class ExtractionSection(Section):
    """A language-model audit's extraction (Hayes et al. 2024's (n, p)-extraction): the sampler and grid, the rates
    per prefix length and over all of them (``any_prefix``, what the check reads at the largest ``n``), the rank
    bound on every decoding's extraction of the same suffixes (``bound``), the generations, the members' most
    extractable spans and the personal-data detector. ``redacted``: written with ``--redact``, the spans' texts left
    out (:meth:`without_text`)."""

    sampler: str
    temperature: float
    top_k: Optional[int] = None
    prefix_lengths: list[int]
    suffix_length: int
    n_values: list[int]
    p: float
    confidence: float
    n_members: int
    n_nonmembers: int
    n_eligible_members: int
    n_eligible_nonmembers: int
    by_prefix: list[PrefixRates]
    any_prefix: list[ExtractionRate]
    bound: Optional[ExtractionBound] = None
    generation: Optional[Generations] = None
    spans: list[ExtractableSpan] = Field(default_factory=list)
    n_members_with_personal_data: int = 0
    personal_data_detector: str = ""
    reference: bool = False
    seconds: Optional[float] = None
    cpu_seconds: Optional[float] = None
    redacted: bool = False

    def without_text(self) -> "ExtractionSection":
        """This section as ``--redact`` writes it: every span's text, context, personal data and raised tokens null
        (their kinds, offsets and numbers kept), ``redacted`` true."""
        d = self.to_dict()
        for sp in d.get("spans") or ():
            sp.update(span=None, context=None)
            for pd_ in sp.get("personal_data") or ():
                pd_["text"] = None
            for t in sp.get("raised") or ():
                t["token"] = None
        return type(self).model_validate({**d, "redacted": True})


LeakedWindow = _section(
    "LeakedWindow", "A window of tokens of a member text and its contrast (the mean over its tokens of the per-token\n"
    "contrast the window attacks vote on; above 0: it votes \"member\"). ``start`` and ``end``: the positions of its\n"
    "first and one past its last token among the text's scored tokens (0-based); ``text``: its tokens decoded,\n"
    "``before`` and ``after``: up to 40 characters of the text either side, all three null when written redacted;\n"
    "``n_chars``: the length of ``text``.",
    start=(int, Field(ge=0)), end=(int, Field(ge=0)), contrast=Measured, text=Optional[str], before=Optional[str],
    after=Optional[str], n_chars=(int, Field(ge=0)))

ExposedText = _section(
    "ExposedText", "One of the most exposed member texts: its name (``record``, as every sentence names it), its\n"
    "rank by the attack (1: the highest score), that score, its scored tokens and its windows that vote \"member\"\n"
    "(the highest contrast first; empty: none does).",
    record=(str, ...), rank=(int, Field(ge=1)), score=Measured, n_tokens=(int, Field(ge=0)),
    windows=(list[LeakedWindow], Field(default_factory=list)))


class LeakedWindowsSection(Section):
    """A language-model audit's leaked spans: for the ``k`` member texts that the strongest standing attack
    (``attack``, the highest AUC among the attacks the blind baseline leaves standing) ranks highest, their windows
    of ``window`` tokens that carry the signal (:mod:`leakaudit.lm.windows`). ``reason``: why none is shown (the
    scores were given without a model, so there are no tokens to decode; no attack stands). ``redacted``: written
    with ``--redact``, each window's text and context left out (its length and offsets kept)."""

    attack: Optional[str] = None
    display: Optional[str] = None
    auc: Measured = None
    auc_ci: Interval = None
    contrast: Optional[str] = Field(None, description="the per-token contrast, in words")
    window: Optional[int] = Field(None, ge=1)
    k: Optional[int] = Field(None, ge=0)
    texts: list[ExposedText] = Field(default_factory=list)
    reason: Optional[str] = None
    redacted: bool = False

    def without_text(self) -> "LeakedWindowsSection":
        """This section as ``--redact`` writes it: every window's text and context null, ``redacted`` true."""
        d = self.to_dict()
        for t in d.get("texts") or ():
            for w in t["windows"]:
                w.update(text=None, before=None, after=None)
        return type(self).model_validate({**d, "redacted": True})


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


StageResources = _section(
    "StageResources", "What one stage spent: the models it trained or read from the cache (the shadow attack: its\n"
    "attack model's training), and its seconds; ``values``: what an attack registered from outside leakaudit\n"
    "reported beyond these (:func:`leakaudit.register_attack`'s ``audit_run``).", note=Optional[str],
    values=(dict[str, JsonValue], Field(default_factory=dict)),
    **{k: (Optional[int], _COUNT) for k in ("n_models trained chunks_from_cache chunks_trained corrupt_cache_entries "
                                            "n_shadow_models n_reference_models attack_training_rows").split()},
    **_all(Optional[str], "cache_dir backend network"), **_all(Optional[bool], "outputs_on_disk uses_record_features"),
    seconds=Optional[float])

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


Settings = _section(
    "Settings", "The profile's settings (:class:`~leakaudit.audit.config.ProfileSettings`: reference models,\n"
    "shadow-attack models, PDTP records, ...), and the recipe the audited model's retrained instances follow; a\n"
    "language model's audit: its attacks, blind baseline and scoring.",
    profile=Optional[Literal["smoke", "standard", "thorough"]], **_all(Optional[str], "device shadow_attack"),
    retraining_recipe=Optional[RetrainingRecipe], min_k=Optional[float],
    **_all(Optional[str], "attacks blind_baseline scoring"),
    **{k: (Optional[f.annotation], Field(None, description=f.description))
       for k, f in ProfileSettings.model_fields.items()})


RecipeTest = _section(
    "RecipeTest", "Does retraining reproduce the given model's membership signal? ``signal``: the given model's (AUC of\n"
    "its calibrated loss); ``ref_signal``: the reference models' (mean, sd, and k models).",
    **_all(Measured, "member_loss nonmember_loss ref_in_loss ref_out_loss signal p_value"), test=Optional[str],
    ref_signal=Optional[dict[Literal["mean", "sd", "k"], Measured]], reproduces=Optional[bool],
    sentence=Optional[str])
