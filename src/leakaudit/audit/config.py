"""The audit's settings: one pydantic model, read from TOML or flags, recorded in results.json.

Everything needed to re-run an audit is here; ``results.json`` stores it whole.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from ..exceptions import InvalidParameterError
from .thresholds import Thresholds

__all__ = ["AuditConfig", "Flag", "flag_of", "Thresholds", "ProfileSettings", "PROFILES", "TorchTraining",
           "RunOptions", "load_config", "load_config_and_options", "PATH_KEYS", "OUTPUT_FILES",
           "check_outputs_spare_inputs", "settings_table", "in_words", "Setting", "Phrase", "Phrased",
           "phrase", "recorded_config"]


class Flag:
    """How a setting is given to ``leakaudit audit``, declared on the setting itself (``Annotated[type, Flag(...)]``):
    its flag names (a switch as ``--x/--no-x``; the first long name is the flag) and ``default``, the words of the
    help's "(default: ...)" where the setting's own default does not say what "not given" means; ``argument``, the
    argument of :func:`leakaudit.audit` that gives the same input in memory, where it is not the setting's own name
    (a file's records, a model's directory). The command's options, their help (the setting's description) and
    docs/config.md's tables are made from these."""

    __slots__ = ("names", "default", "argument")

    def __init__(self, *names: str, default: str = "", argument: str = ""):
        self.names, self.default, self.argument = names, default, argument

    @property
    def name(self) -> str:
        """The flag a setting is given by (a switch's ``--x`` of ``--x/--no-x``)."""
        return self.names[0].split("/")[0]

    def given(self, value: str | None) -> str:
        """The flag as a user types it to give ``value``: a switch's ``--x`` or ``--no-x`` for true or false,
        another flag followed by the value."""
        switch = self.names[0].split("/")
        if len(switch) == 2 and value in ("true", "false"):
            return switch[0] if value == "true" else switch[1]
        return self.name + (f" {value}" if value else "")

    def __repr__(self) -> str:
        extra = "".join(f", {k}={getattr(self, k)!r}" for k in ("default", "argument") if getattr(self, k))
        return f"Flag({', '.join(map(repr, self.names))}{extra})"


def flag_of(field) -> Flag | None:
    """The :class:`Flag` a setting (a pydantic ``FieldInfo``) is declared with, or None for a key of the TOML file
    only."""
    return next((m for m in field.metadata if isinstance(m, Flag)), None)


class Setting(BaseModel):
    """A setting a sentence names: its key (of :class:`AuditConfig` or :class:`RunOptions`, ``thresholds.KEY``, a
    profile's own, or ``records``: the audited records) and the value the sentence asks for, if any."""

    model_config = ConfigDict(frozen=True)

    key: str
    value: str | None = None

    def words(self, *, flags: bool) -> str:
        """The one place a named setting becomes words: with ``flags`` (the command line) its flag (``--profile
        thorough``) or a threshold's key in a --config file; without, the argument of :func:`leakaudit.audit`
        (``profile="thorough"``; ``population``: a file's value means nothing there); else the key."""
        key, value = self.key, self.value
        field = {**AuditConfig.model_fields, **RunOptions.model_fields}.get(key)
        flag = field and flag_of(field)
        if key == "records":
            return ("in the --train / --test files, or --data; the demo: --n-members / --n-nonmembers" if flags
                    else "in the members and nonmembers arguments")
        if flags and flag is not None:
            return flag.given(value)
        if not flags and flag is not None and flag.argument:
            return flag.argument
        if flags and key.startswith("thresholds."):
            return f"{key.removeprefix('thresholds.')}{f' = {value}' if value else ''} in the [thresholds] table of a " \
                   "--config file"
        if value in ("true", "false"):
            value = value.capitalize()
        elif value is not None and not value.isupper() and not value.replace(".", "").isdigit():
            value = f'"{value}"'
        return key + (f"={value}" if value else "")


class Phrase(BaseModel):
    """Words that name settings: ``text`` with ``{0}``, ``{1}``, ... where each of ``settings`` goes; :meth:`words`
    says it for the command line (``flags``) or a library caller, each setting by :meth:`Setting.words`."""

    model_config = ConfigDict(frozen=True)

    text: str = Field(description="the words, with {0}, {1}, ... where each setting goes")
    settings: list[Setting] = Field(default_factory=list)

    def words(self, *, flags: bool) -> str:
        return self.text.format(*(s.words(flags=flags) for s in self.settings))


def phrase(text: str, *settings: str | tuple[str, str]) -> Phrase:
    """A :class:`Phrase`: ``text`` and the settings it names, each a key or a (key, value) pair."""
    return Phrase(text=text, settings=[Setting(key=s) if isinstance(s, str) else Setting(key=s[0], value=s[1])
                                       for s in settings])


class Phrased(BaseModel):
    """A result whose sentence ``name`` (in the library's words) has beside it ``name_parts``, its :class:`Phrase`
    (None: it names no setting); :meth:`said` says it for the command line (``flags``) or a library caller. Such a
    sentence may be given as a Phrase: it is kept as its words and its parts."""

    @model_validator(mode="before")
    @classmethod
    def _phrased(cls, data: Any) -> Any:
        names = [n for n in (f.removesuffix("_parts") for f in cls.model_fields if f.endswith("_parts"))
                 if isinstance(data, dict) and isinstance(data.get(n), (Phrase, dict))]
        if names:
            data = dict(data)
        for n in names:
            said = Phrase.model_validate(data[n])
            data[n], data[f"{n}_parts"] = said.words(flags=False), said if said.settings else None
        return data

    def said(self, name: str, *, flags: bool) -> str:
        parts = getattr(self, f"{name}_parts", None)
        return parts.words(flags=flags) if parts is not None else getattr(self, name)


def escaped(text: str) -> str:
    """``text`` as a :class:`Phrase`'s text holds it where no setting goes (its braces doubled)."""
    return text.replace("{", "{{").replace("}", "}}")


def in_words(text: str, *, flags: bool) -> str:
    """Prose that names a setting as `key` (or `key = value`) as docs/config.md does, for its reader (the
    settings' descriptions as --help; error messages, one string each): each setting by :meth:`Setting.words`."""
    import re

    fields = {**AuditConfig.model_fields, **RunOptions.model_fields}
    return re.sub(r"`([a-z_]+)(?: = ([^`]+))?`", lambda m: Setting(key=m.group(1), value=(m.group(2) or "").strip(
        chr(34)) or None).words(flags=flags) if m.group(1) in fields else m.group(0), text)


def _type_words(annotation) -> str:
    """A setting's type as docs/config.md writes it (path, int, list[str], one of [...], table, ...)."""
    import typing

    kinds = [a for a in (typing.get_args(annotation) if typing.get_origin(annotation) in (typing.Union, type(int | None))
                         else (annotation,)) if a is not type(None)]
    if len(kinds) > 1:
        return " or ".join(_type_words(k) for k in kinds)
    (a,) = kinds
    if typing.get_origin(a) is Literal:
        return f"one of {list(typing.get_args(a))}"
    if typing.get_origin(a) is list:
        return f"list[{_type_words(typing.get_args(a)[0])}]"
    if typing.get_origin(a) is dict or (isinstance(a, type) and issubclass(a, BaseModel)):
        return "table"
    return {Path: "path"}.get(a, getattr(a, "__name__", str(a)))


def _toml_default(value) -> str:
    """A default as docs/config.md writes it (TOML spelling)."""
    if value is None:
        return "(none)"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, (str, Path)):
        return f'`"{value}"`'
    if isinstance(value, BaseModel):
        return "(table below)"
    if isinstance(value, dict) and not value:
        return "`{}`"
    return f"`{value!r}`".replace("'", '"')


def _flag_words(flag: Flag | None) -> str:
    if flag is None:
        return "–"
    longs = [n for n in flag.names if n.startswith("--")]
    short = "".join(f" (`{n}`)" for n in flag.names if not n.startswith("--"))
    if "/" in longs[0]:
        on, off = longs[0].split("/")
        return f"`{on}`{short} / `{off}`"
    return ", ".join(f"`{n}`" for n in longs) + short


def settings_table(model: type[BaseModel]) -> list[str]:
    """docs/config.md's table of one settings model, made from the model: each key, its flag, type, default and
    meaning (the field's description). tests/cli/test_config_doc.py keeps the page equal to it."""
    rows = ["| key | flag | type | default | meaning |", "|---|---|---|---|---|"]
    for name, f in model.model_fields.items():
        default = f.default_factory() if f.default_factory else f.default
        rows.append(f"| `{name}` | {_flag_words(flag_of(f))} | {_type_words(f.annotation)} | {_toml_default(default)} "
                    f"| {f.description or ''} |")
    return rows


class TorchTraining(BaseModel):
    """How fresh instances of a ``--module`` class are trained for reference, shadow and leave-one-out models.

    The audited weights come without their training recipe; this one is stated in the report. Defaults:
    Adam, lr 0.001, 20 epochs, mini-batches of 32, no weight decay (TOML: a ``[training]`` table).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    optimizer: Literal["adam", "sgd"] = Field("adam", description="`adam` or `sgd`.")
    lr: float = Field(1e-3, gt=0, description="Learning rate.")
    epochs: int = Field(20, gt=0, description="Training epochs.")
    batch_size: int = Field(32, gt=0, description="Mini-batch size.")
    weight_decay: float = Field(0.0, ge=0, description="L2 weight decay.")
    momentum: float = Field(0.0, ge=0, lt=1, description="SGD momentum (ignored by Adam).")



class ProfileSettings(BaseModel):
    """How much work each analysis does (``--profile`` picks one; the report names it).

    Attributes
    ----------
    n_reference : int
        Reference models for LiRA / InfoRMIA (complementary pairs of halves of the audited records).
    pdtp_records : int or None
        Training records whose PDTP is measured (None: all members).
    pdtp_repeats : int
        PDTP measurements averaged (Long et al. average 10).
    noise_floor_models : int
        Retrainings with other seeds behind the training-noise floor (Long et al. Fig 7).
    n_boot : int
        Bootstrap resamples behind every interval.
    shadow_models : int
        Shadow models per grid point of the property-inference estimate.
    shadow_attack_models : int or None
        How many of the reference models serve as shadow models of the shadow-model attack
        (Shokri et al. / Long et al. Algorithm 1): their outputs on the audited records are the attack
        network's training rows, ``shadow_attack_models * n_audited`` of them. None: all reference models.
    shadow_attack_batch : int
        Mini-batch of the attack network's SGD (1 is Long et al.'s per-example SGD, run by TorchMLP's compiled
        kernel; larger batches use scikit-learn and step with ``lr * batch``, the linear scaling rule).
        Without the compiled trainer (no compiled MLP kernel: ``leakaudit doctor``) the audit falls
        back to at most ``leakaudit.membership.shadow.FALLBACK_MODELS`` shadow models and batch
        ``FALLBACK_BATCH`` (:func:`leakaudit.membership.shadow.shadow_plan`).
    dtp_test_repeats : int
        Fresh paired leave-one-out repeats behind the statistical DTP-1 rule, for each record whose single PDTP
        exceeds the threshold (:func:`leakaudit.dtp.dtp1_test`). At 8 repeats a forest's binned changes, which
        take few values, can make the t-test too optimistic (measured in tests/dtp/test_significance.py), hence
        16 in the standard profile.
    dtp_test_max_repeats : int
        Repeat budget of a candidate still undecided after ``dtp_test_repeats`` (its mean change above the
        threshold, not significant): it is re-measured in rounds, the repeats doubling up to this, until decided;
        decided ones stop. Each of the L looks is tested at the check's level / L (Bonferroni over the looks), so
        the test's family-wise level is the check's. Equal to ``dtp_test_repeats``: one look, no more repeats.
    pdtp_exact_max : int or None
        Up to this many members, PDTP is measured for every one (exact leave-one-out); beyond it the members are
        screened (:mod:`leakaudit.dtp.screening`): the top of a ranking measured exactly, and a uniform
        ``pdtp_screen_sample`` of the others to bound what the unmeasured records may hold. None: every member.
    pdtp_screen_fraction : float
        Share of ``pdtp_exact_max`` members measured first, from the top of the ranking (the top doubles while its
        tail holds more exceedances than the random sample; a bagged forest's top: :func:`leakaudit.dtp.screened_pdtp`).
    pdtp_screen_sample : int
        Members drawn at random from the rest and measured exactly: at least this many, more where the thresholds'
        ``max_unmeasured_dtp_share`` needs more (:func:`leakaudit.dtp.sample_for_allowance`), up to
        ``pdtp_screen_sample_max``.
    pdtp_screen_sample_max : int
        The random sample's budget. A sample held to it that cannot bound the unmeasured members within the
        allowance makes the DTP-1 check "not measurable", never "shown below".
    pdtp_screen_max_fraction : float
        The measured top grows to at most this share of the members.
    dtp_test_max_records : int
        At most this many candidates are re-measured (the largest single PDTP first); any beyond are reported as
        not measured and make the DTP-1 check "not measurable", never "shown below".
    dtp_removal_seeds : int or None
        When the DTP-1 check is exceeded: the records that exceed it are removed, the recipe retrained and PDTP and
        the DTP-1 test measured again on the remaining members (:func:`leakaudit.dtp.removal_effect`); the accuracy
        on the non-members with and without them is compared over this many paired seeds. None: not measured.
    shadow_attack_max_rows : int
        Cap on the attack network's training rows: fewer shadow models (whole pairs, at least one pair) are used
        when ``shadow_attack_models * n_audited`` would exceed it. The rows are (x, onehot(y), bin(q)) float
        vectors; uncapped, 256 models x 45,000 records would need about 10 GB per copy of them.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    n_reference: int
    pdtp_records: int | None  # None: all members
    pdtp_repeats: int
    noise_floor_models: int
    n_boot: int
    shadow_models: int
    shadow_attack_models: int | None = None
    shadow_attack_batch: int = 1
    shadow_attack_max_rows: int = 256_000
    dtp_test_repeats: int = 16
    dtp_test_max_repeats: int = 64
    dtp_test_max_records: int = 200
    pdtp_exact_max: int | None = None
    pdtp_screen_fraction: float = Field(0.05, gt=0, le=1)
    pdtp_screen_sample: int = Field(500, ge=0)
    pdtp_screen_sample_max: int = Field(2000, ge=0)
    pdtp_screen_max_fraction: float = Field(0.25, gt=0, le=1)
    dtp_removal_seeds: int | None = Field(5, ge=2)

    @model_validator(mode="after")
    def _budget_holds_the_repeats(self):
        if self.dtp_test_max_repeats < self.dtp_test_repeats:
            raise ValueError(f"dtp_test_max_repeats ({self.dtp_test_max_repeats}) must be at least dtp_test_repeats "
                             f"({self.dtp_test_repeats})")
        return self


PROFILES: dict[str, ProfileSettings] = {
    "smoke": ProfileSettings(n_reference=8, pdtp_records=100, pdtp_repeats=1, noise_floor_models=4, n_boot=200,
                             shadow_models=4, shadow_attack_models=4, dtp_test_repeats=8, dtp_test_max_records=50,
                             dtp_test_max_repeats=8, dtp_removal_seeds=None),
    "standard": ProfileSettings(n_reference=64, pdtp_records=None, pdtp_repeats=1, noise_floor_models=10,
                                n_boot=1000, shadow_models=10, pdtp_exact_max=4000),
    "thorough": ProfileSettings(n_reference=256, pdtp_records=None, pdtp_repeats=10, noise_floor_models=20,
                                n_boot=2000, shadow_models=20, dtp_removal_seeds=10, dtp_test_max_repeats=128),
}


class AuditConfig(BaseModel):
    """Settings of one audit. With no data given, the bundled Adult demo runs.

    Data: ``train`` (members) and ``test`` (non-members) as CSV or Parquet, or one
    ``data`` file with a ``membership_column`` (1 = member). Model: a skops file
    (``model``), a torch state_dict (``model``) with ``module = "pkg.mod:Class"``
    (built as ``Class(**module_kwargs)``; retrained with the ``training`` recipe),
    or predictions only (``predictions_train`` / ``predictions_test``: CSV files of
    class probabilities). With none, the demo's training algorithm is used.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    # data
    dataset: str = Field("adult", description="Bundled dataset of the demo (used when no `train`/`data` is given).")
    train: Annotated[Path | None, Flag("--train", "--members", default="none: the bundled Adult demo",
                                       argument="members")] = Field(
        None, description="The members: records the model was trained on (CSV or Parquet; with `model_dir` JSONL "
                          "too). Needs `test`.")
    test: Annotated[Path | None, Flag("--test", "--nonmembers", argument="nonmembers")] = Field(
        None, description="The non-members: records of the same distribution the model never saw.")
    data: Annotated[Path | None, Flag("--data")] = Field(
        None, description="Instead of `train`/`test`: one file with a 0/1 membership column (`membership_column`).")
    membership_column: Annotated[str | None, Flag("--membership-column")] = Field(
        None, description="With `data`: the column that is 1 for members, 0 for non-members.")
    label: Annotated[str | None, Flag("--label", default="none; the demo uses income")] = Field(
        None, description="The label column the model predicts (required with your own data; the demo uses `income`).")
    sensitive: Annotated[list[str] | None,
                         Flag("--sensitive", default="none; the demo uses sex,race,marital_status")] = Field(
        None, description="Sensitive columns for attribute and property inference: a list, or one comma-separated "
                          "string as the flag takes it (a numeric column must be binned into text categories first). "
                          "Demo: sex, race, marital_status.")
    population: Annotated[Path | None, Flag("--population", argument="population")] = Field(
        None, description="Extra records of the same distribution, neither members nor non-members: reference models "
                          "train on them; InfoRMIA needs them.")
    unit: Annotated[str | None, Flag("--unit")] = Field(
        None, description="The privacy unit: a column of the members and non-members naming the person (or any "
                          "group) each row belongs to. Not a feature: dropped before the model sees the records. "
                          "Membership attacks then score each unit (the mean of its rows' scores) and their metrics "
                          "count units; PDTP, DTP-1 and the removal analysis leave out all of a unit's rows. A unit "
                          "among both the members and the non-members is refused (docs/config.md, 'The privacy unit').")
    n_members: Annotated[int, Flag("--n-members")] = Field(
        1000, gt=1, description="Demo only: members drawn from Adult.")
    n_nonmembers: Annotated[int, Flag("--n-nonmembers")] = Field(
        1000, gt=1, description="Demo only: non-members drawn from Adult.")
    # model
    model: Annotated[Path | None, Flag("--model", default="none: the demo's MLP is trained on the members",
                                       argument="model")] = Field(
        None, description="The model to audit: a skops file, an XGBoost JSON/UBJSON, LightGBM text or CatBoost "
                          "JSON/cbm model file, a model registered in MLflow by its URI (`models:/NAME/VERSION`, "
                          "`runs:/RUN_ID/PATH`; safe flavours only, docs/input.md), or a torch state_dict with "
                          "`module`.")
    module: Annotated[str | None, Flag("--module")] = Field(
        None, description="With a torch state_dict `model`: its class, `package.module:Class`.")
    module_kwargs: Annotated[dict[str, Any], Flag("--module-kwargs")] = Field(
        default_factory=dict, description="Constructor arguments of `module` (a TOML table; the flag takes JSON).")
    training: TorchTraining = Field(
        default_factory=TorchTraining, description="How fresh instances of `module` are trained for reference and "
                                                   "leave-one-out models (the `[training]` table below).")
    model_input: Annotated[Literal["auto", "columns", "encoded"], Flag("--model-input")] = Field(
        "auto", description="What `model` takes: `auto`, `columns` (the table's feature columns as they are) or "
                            "`encoded` (leakaudit's encoding); see [input.md](input.md).")
    predictions_train: Annotated[Path | None, Flag("--predictions-train", argument="predictions")] = Field(
        None, description="Instead of a model: its class probabilities on the members (CSV, one row per `train` "
                          "record, one column per class). Only attacks that need no retraining run.")
    predictions_test: Annotated[Path | None, Flag("--predictions-test", argument="predictions")] = Field(
        None, description="With `predictions_train`: the probabilities on the non-members.")
    # a causal language model (audit/steps/lm.py): its directory, the texts' column, tokenizer and reference models
    model_dir: Annotated[Path | None, Flag("--model-dir", argument="model")] = Field(
        None, description="A causal language model to audit: a local transformers directory (`config.json` and "
                          "`*.safetensors`; a pickle checkpoint is refused), or a peft adapter directory whose base "
                          "model is local; see [lm.md](lm.md). Needs `text_column`.")
    text_column: Annotated[str | None, Flag("--text-column")] = Field(
        None, description="With `model_dir`: the column of the texts in the members and non-members files (JSONL, CSV "
                          "or Parquet).")
    tokenizer: Annotated[Path | None,
                         Flag("--tokenizer", default="none: --model-dir's own", argument="tokenizer")] = Field(
        None, description="With `model_dir`: the tokenizer's directory, when it is not `model_dir`'s own.")
    logprobs_column: Annotated[str | None, Flag("--logprobs-column")] = Field(
        None, description="Instead of `model_dir` (scores only): the column of each text's per-token "
                          "log-probabilities computed by any framework (a list in JSONL or Parquet, a JSON list in "
                          "CSV); needs `text_column` (the blind baseline and the zlib ratio read the texts). Min-K%++ "
                          "and the reference attacks do not run.")
    reference_dir: Annotated[list[Path] | None, Flag("--reference-dir", argument="references")] = Field(
        None, description="With `model_dir`: reference language models (e.g. the base before fine-tuning) for the "
                          "reference-ratio, LiRA, RMIA and WBC window-vote attacks; a list, or one path; the flag "
                          "is repeated.")
    dataset_inference: Annotated[bool, Flag("--dataset-inference/--no-dataset-inference")] = Field(
        False, description="With `model_dir` or `logprobs_column`: also test the members as a set (dataset inference, "
                           "Maini et al. 2024: was this collection used?): the attacks' scores combined on one half, "
                           "a one-sided set-level test on the other, its power curve; one more check "
                           "(`dataset_inference.set_test`, which can show use, never safety), guarded by the blind "
                           "baseline.")
    extraction: Annotated[bool, Flag("--extraction/--no-extraction")] = Field(
        True, description="With `model_dir`: also measure extraction (Hayes et al. 2024's (n, p)-extraction): for each "
                          "text and prefix length, the probability that the attacker's sampler emits the next "
                          "`extraction_suffix` tokens, the share of members' suffixes extractable against the "
                          "non-members' (the base rate), greedy and sampled generations on a sample, the members' most "
                          "extractable spans; one more check (`extraction.suffixes.rate_difference`), guarded by the "
                          "blind baseline ([lm.md](lm.md)).")
    extraction_prefix: Annotated[list[int], Flag("--extraction-prefix")] = Field(
        default_factory=lambda: [32], description="With `extraction`: the prefix lengths in tokens (a list; the flag is "
                                                  "repeated); a text counts as extractable when its suffix after any "
                                                  "of them is.")
    extraction_suffix: Annotated[int, Flag("--extraction-suffix")] = Field(
        32, ge=1, description="With `extraction`: the target suffix's length in tokens.")
    extraction_n: Annotated[list[int], Flag("--extraction-n")] = Field(
        default_factory=lambda: [1, 10, 100, 1000], description="With `extraction`: the numbers of tries n the "
                                                                "rates are given for (the flag is repeated); the "
                                                                "check reads the largest.")
    extraction_p: Annotated[float, Flag("--extraction-p")] = Field(
        0.9, gt=0, lt=1, description="With `extraction`: a suffix is (n, p)-extractable when n tries emit it at least "
                                     "once with probability at least p.")
    extraction_temperature: Annotated[float, Flag("--extraction-temperature")] = Field(
        1.0, gt=0, description="With `extraction`: the attacker's sampling temperature.")
    extraction_top_k: Annotated[int, Flag("--extraction-top-k")] = Field(
        40, ge=0, description="With `extraction`: the attacker samples from the k most probable tokens (1: greedy "
                              "decoding; 0: all tokens).")
    hidden: list[int] = Field(
        default_factory=lambda: [64], description="Demo learner: hidden layer sizes.")
    activation: Literal["tanh", "relu"] = Field("tanh", description="Demo learner: activation.")
    epochs: int = Field(30, gt=0, description="Demo learner: training epochs.")
    # running
    profile: Annotated[Literal["smoke", "standard", "thorough"], Flag("--profile")] = Field(
        "standard", description="How much work: `smoke` (a sample of each analysis, to try the inputs: the demo in about "
                                "10 s of CPU, a forest of 50 trees in minutes), `standard`, `thorough` (the papers' "
                                "repeats).")
    seed: Annotated[int, Flag("--seed")] = Field(
        0, ge=0, description="Random seed of every stage: the same seed and inputs give the same results.")
    backend: Annotated[Literal["inprocess", "process", "ray"], Flag("--backend")] = Field(
        "inprocess", description="Where reference and leave-one-out models train: `inprocess`, `process` (every "
                                 "core), `ray`.")
    address: Annotated[str | None, Flag("--address", default="none: a local Ray instance")] = Field(
        None, description="With `backend = \"ray\"`: the cluster address (`auto`, `ray://host:10001`); none starts a "
                          "local instance.")
    device: Annotated[str, Flag("--device")] = Field(
        "cpu", description="Where torch models train (the demo's network, a `--module`, an `MLPClassifier`'s "
                           "retraining) and language models score: `cpu`, `cuda`, `cuda:N` or `auto` (a GPU when one "
                           "is visible). The compiled kernels and scikit-learn learners train on the CPU only: with a "
                           "GPU device, a target whose retraining learner is not a torch one is refused. CPU results "
                           "do not depend on this setting's presence.")
    cache_dir: Annotated[Path | None, Flag("--cache-dir", default="$LEAKAUDIT_CACHE, else OUT/.leakaudit-cache")] = Field(
        None, description="Where trained models' outputs are kept so a stopped audit resumes; none: "
                          "`$LEAKAUDIT_CACHE`, else `.leakaudit-cache` inside the output folder (nothing is "
                          "written outside it unless named).")
    release: Annotated[Literal["weights", "scores", "labels"] | None,
                       Flag("--release", default="none: not declared, analysed as scores")] = Field(
        None, description="How the model is released, which selects the analyses an adversary with that access could "
                          "run (docs/verdict.md, \"Release context\"): `weights` (the model file) adds the structural "
                          "checks before any training; `scores` (a service returning class scores) runs the audit as "
                          "it is; `labels` (a service returning labels only) runs the label-only membership attacks "
                          "instead of the score-based ones, and neither PDTP nor attribute inference. None: not "
                          "declared, analysed as scores. The report and evidence.json state the threat model.")
    policy: Annotated[str, Flag("--policy")] = Field(
        "default", description="The release policy the verdict applies: `default` (burden of proof \"safety shown\"), "
                               "`leakage-shown` (the rule before policies), or a TOML policy file (docs/verdict.md, "
                               "\"Release policies\"). A policy other than `default` sets `confidence`, `thresholds`, "
                               "`dtp_rule`, `epsilon_budget`, `epsilon_delta` and `burden_of_proof`; giving one of "
                               "them too with another value is refused. A relative file path in a config file is "
                               "taken relative to that file.")
    burden_of_proof: Literal["safety shown", "leakage shown"] = Field(
        "safety shown", description="`safety shown`: publish only when every check that can show safety is shown "
                                    "below its threshold (its interval's upper end below it); `leakage shown`: "
                                    "withhold only when a check is shown above its threshold, publish when none is "
                                    "and each could have been. A policy sets it.")
    confidence: float = Field(0.95, gt=0.5, lt=1, description="Family-wise confidence of the verdict's checks (each "
                                                              "is judged at a Bonferroni-corrected level).")
    thresholds: Thresholds = Field(
        default_factory=Thresholds, description="When the verdict says \"do not publish\" (the `[thresholds]` table "
                                                "below).")
    dtp_rule: Annotated[Literal["statistical", "long"], Flag("--dtp-rule")] = Field(
        "statistical", description="`statistical`: a record counts against DTP-1 only when its change is significant "
                                   "against training randomness and binning; `long`: Long et al.'s raw rule on single "
                                   "PDTP values.")
    removal: Annotated[bool, Flag("--removal/--no-removal")] = Field(
        True, description="When DTP-1 is exceeded, measure what removing the records that break it would change "
                          "(PDTP again without them, and the accuracy cost): it retrains the recipe over the "
                          "profile's `dtp_removal_seeds` paired seeds, often the audit's longest stage (results.json's "
                          "`timings` give its seconds as `dtp_removal`). Informational: it adds no check.")
    tiers: Annotated[Literal["auto", "on", "off"], Flag("--tiers")] = Field(
        "auto", description="Run a tabular audit in tiers: first the checks that train no model (the loss attack, "
                            "attribute inference and, for a released model file, the structural checks), then the "
                            "reference models (LiRA, InfoRMIA, the shadow-model attack) and PDTP only when those leave "
                            "the verdict open. A check of the model already exceeded there withholds it (\"do not "
                            "publish\", the same check at the same corrected confidence as in the full audit), and "
                            "the analyses it made unnecessary are listed as not run; \"publish\" and "
                            "\"inconclusive\" always come from the full audit. `auto`: on at profile `standard`, off "
                            "at `smoke` and `thorough`; `on`; `off`: run everything.")
    epsilon_budget: Annotated[float | None, Flag("--epsilon-budget", default="none: no epsilon check")] = Field(
        None, ge=0, description="Fail when an attack's empirical epsilon lower bound exceeds this; none: no epsilon "
                                "check.")
    epsilon_delta: float = Field(1e-5, ge=0, lt=1, description="The delta of the empirical epsilon lower bounds.")
    claimed_epsilon: Annotated[float | None, Flag("--claimed-epsilon")] = Field(
        None, gt=0, description="The model was trained with differential privacy at this epsilon (delta: "
                                "`epsilon_delta`): the report shows it beside every attack's empirical epsilon lower "
                                "bound; the demo then trains its network by DP-SGD calibrated to it (Poisson batches "
                                "of 64 expected rows, clip 1, lr 0.5, `epochs` epochs) and a one-run audit of that "
                                "recipe (gradient canaries; see [dpaudit.md](dpaudit.md)) checks the claim.")
    exit_code: Annotated[bool,
                         Flag("--exit-code/--no-exit-code", default="--no-exit-code: 0 whatever the verdict")] = Field(
        False, description="Exit status carries the verdict: 0 publish, 3 do not publish, 4 inconclusive (2 stays bad "
                           "input).")

    @model_validator(mode="before")
    @classmethod
    def _apply_policy(cls, data: Any) -> Any:
        """A policy other than the default sets its keys (:meth:`~leakaudit.audit.policy.Policy.audit_settings` and
        ``burden_of_proof``); a key given too with another value is refused, so that an audit run under a policy
        applies exactly that policy."""
        if not isinstance(data, dict) or data.get("policy") in (None, "default"):
            return data
        from .policy import load_policy

        try:
            pol = load_policy(str(data["policy"]))
        except InvalidParameterError as exc:
            raise ValueError(str(exc)) from None
        sets = {**pol.audit_settings(), "burden_of_proof": pol.burden_of_proof}
        clash = [k for k, v in sets.items() if data.get(k) is not None and _setting(data[k]) != _setting(v)]
        if clash:
            raise ValueError(f"{', '.join(clash)} {'is' if len(clash) == 1 else 'are'} set by the policy "
                             f"{data['policy']}: change {'it' if len(clash) == 1 else 'them'} in the policy, or "
                             "leave the policy out")
        return {**data, **sets}

    @field_validator("dataset")
    @classmethod
    def _registered_dataset(cls, v: str) -> str:
        """The demo's dataset is a name of :mod:`leakaudit.data.registry` (the names ``--dataset`` takes)."""
        from ..data.registry import dataset_names

        if v not in dataset_names():
            raise ValueError(f"unknown dataset {v!r}; choose from {', '.join(dataset_names())}")
        return v

    @field_validator("device")
    @classmethod
    def _device_form(cls, v: str) -> str:
        from ..learners import DEVICE_CHOICES, check_device

        try:
            return check_device(v, name="device")
        except InvalidParameterError:
            raise ValueError(f"must be {DEVICE_CHOICES}") from None

    @field_validator("seed", mode="before")
    @classmethod
    def _integer_seed(cls, v: Any) -> int:
        try:
            return check_seed(v)
        except InvalidParameterError as exc:  # the message is prefixed with the key already
            raise ValueError(str(exc).removeprefix("seed ")) from None

    @field_validator("sensitive", mode="before")
    @classmethod
    def _comma_separated(cls, v: Any) -> Any:
        """``sensitive = "sex,race"`` (as the flag takes it) reads as ``["sex", "race"]``."""
        if isinstance(v, str):
            return [c.strip() for c in v.split(",") if c.strip()]
        return v

    @field_validator("extraction_prefix", "extraction_n")
    @classmethod
    def _positive_counts(cls, v: list[int]) -> list[int]:
        """At least one prefix length (tokens) or number of tries, each at least 1."""
        if not v:
            raise ValueError("give at least one value")
        if min(v) < 1:
            raise ValueError(f"every value must be at least 1; got {min(v)}")
        return v

    @field_validator("reference_dir", mode="before")
    @classmethod
    def _one_or_more(cls, v: Any) -> Any:
        """``reference_dir = "base"`` reads as ``["base"]``."""
        return [v] if isinstance(v, (str, Path)) else v

    @model_validator(mode="after")
    def _consistent(self) -> "AuditConfig":
        problems = self._language_model_problems()
        if (self.train is None) != (self.test is None):
            problems.append("give both train (members) and test (non-members), or neither")
        if self.data is not None and (self.train is not None):
            problems.append("give either data with membership_column, or train and test, not both")
        if self.data is not None and not self.membership_column:
            problems.append("data needs membership_column naming the 0/1 member column")
        user_data = self.train is not None or self.data is not None
        if user_data and not self.label and not self.is_lm:
            problems.append("label (the label column) is required with your own data")
        if (self.predictions_train is None) != (self.predictions_test is None):
            problems.append("give both predictions_train and predictions_test, or neither")
        if self.module and not self.model:
            problems.append("module needs model (the state_dict file)")
        if self.module_kwargs and not self.module:
            problems.append("module_kwargs needs module (package.module:Class)")
        if self.model is not None and self.predictions_train is not None:
            problems.append("give a model or predictions, not both")
        if self.model_input != "auto" and self.model is None:
            problems.append(f"model_input {self.model_input!r} describes a model file: give model too")
        if problems:
            raise ValueError("; ".join(problems))
        return self

    def _language_model_problems(self) -> list[str]:
        """What a language-model audit (model_dir) cannot be combined with, and what it needs."""
        if self.logprobs_column is not None and self.model_dir is not None:
            return ["give model_dir or logprobs_column (scores computed elsewhere), not both"]
        if not self.is_lm:
            return [f"{k} needs model_dir (a language model directory) or logprobs_column" for k in
                    ("text_column", "tokenizer", "reference_dir", "dataset_inference") if getattr(self, k)]
        what = "model_dir" if self.model_dir is not None else "logprobs_column"
        problems = [] if self.text_column else [f"{what} needs text_column (the column of the texts)"]
        if self.release not in (None, "scores"):
            problems.append(f"release {self.release!r}: a language model's audit reads its token log-probabilities "
                            "(a scores release); give release scores, or leave it out")
        if self.logprobs_column is not None:
            problems += [f"{k} needs model_dir (a language model directory)" for k in ("tokenizer", "reference_dir")
                         if getattr(self, k)]
        if self.train is None and self.data is None:
            problems.append(f"{what} needs the member and non-member texts (train and test, or data)")
        clash = [k for k in ("model", "module", "predictions_train", "label", "sensitive", "population", "unit")
                 if getattr(self, k)]
        if clash:
            problems.append(f"{what} (a language model) cannot be combined with {', '.join(clash)}")
        return problems

    @property
    def is_lm(self) -> bool:
        """A causal language model is audited (``model_dir``, or its scores: ``logprobs_column``)."""
        return self.model_dir is not None or self.logprobs_column is not None

    @property
    def tiered(self) -> bool:
        """Whether the audit runs in tiers (``tiers``; ``auto``: at profile ``standard`` only)."""
        return self.tiers == "on" or (self.tiers == "auto" and self.profile == "standard")

    @property
    def settings(self) -> ProfileSettings:
        return PROFILES[self.profile]

    @property
    def is_demo(self) -> bool:
        return self.train is None and self.data is None


class RunOptions(BaseModel):
    """How ``leakaudit audit`` runs, not what it measures: accepted in the TOML file beside the settings, never
    recorded in results.json's ``config`` (moving the output folder does not change an audit)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    out: Annotated[Path, Flag("--out")] = Field(
        Path("runs/audit"), description="Output folder: results.json, records.csv, report.html (inputs.json with "
                                        "`check_inputs`). Relative to the TOML file's folder.")
    check_inputs: Annotated[bool, Flag("--check-inputs/--no-check-inputs")] = Field(
        False, description="Only read the records and the model, check them and write inputs.json (the model's "
                           "accuracy on members and non-members; for a model leakaudit can retrain, the recipe test "
                           "with the smoke profile's 8 reference models: does retraining reproduce the model's "
                           "membership signal, or was it perhaps not trained on these members?); no attacks.")
    quiet: Annotated[bool,
                     Flag("--quiet/--no-quiet", "-q",
                          default="--no-quiet: progress on stderr, plain lines when it is not a terminal")] = Field(
        False, description="No progress on stderr; stdout still gives the verdict and what was not run.")
    redact: Annotated[bool, Flag("--redact/--no-redact")] = Field(
        False, description="Write records.csv and report.html without the records' own values (their columns and "
                           "label), keeping each record's file and row, its scores and the verdict: without it both "
                           "hold personal data (evidence.json says which). `AuditResult.save(out, redact=True)` in "
                           "the library.")
    memory_budget: Annotated[int | str | None,
                             Flag("--memory-budget", default="none: a quarter of physical memory")] = Field(
        None, description="Memory that trained models' outputs may take: bytes, or a size such as `\"4GB\"` or "
                          "`\"512MB\"` (powers of 1,024). Larger outputs (many reference models over many records and "
                          "classes) are kept in an unnamed temporary file in the cache folder, removed when the audit "
                          "ends, and read in chunks; the results are the same. None: a quarter of physical memory.")

    work_budget: Annotated[int | str | None,
                           Flag("--work-budget", default="none: $LEAKAUDIT_WORK_BUDGET, else 1e13")] = Field(
        None, description="Work one model a model file asks for may take, in steps (an int or a string such as "
                          "`\"1e13\"`): a file declaring more trees, layers or iterations is refused before any "
                          "training, naming the estimate and the budget (docs/input.md). None: "
                          "`$LEAKAUDIT_WORK_BUDGET`, else 1e13, one to two hours of one core.")

    mlflow: Annotated[str | None, Flag("--mlflow", default="none: not logged; the flag alone: "
                                                       "MLFLOW_TRACKING_URI")] = Field(
        None, description="Log the audit as an MLflow run at this tracking URI (the `mlflow` extra): the verdict as a "
                          "tag, each check's value and interval as metrics, the settings, sizes and model's digest as "
                          "parameters, results.json, evidence.json and report.html as artifacts (docs/api.md, "
                          "\"Logging to MLflow\"). The store is checked before the audit starts; a logging failure "
                          "after it is exit status 5 (docs/input.md). The same store resolves a `model` given as "
                          "`models:/NAME/VERSION` or `runs:/RUN_ID/PATH`. `\"MLFLOW_TRACKING_URI\"`: that "
                          "variable's store.")
    mlflow_run: Annotated[str | None, Flag("--mlflow-run", default="none: a new run")] = Field(
        None, description="Log into this existing MLflow run (the run that trained the model, say) of the store "
                          "`mlflow` names, instead of a new run.")
    mlflow_nested: Annotated[bool, Flag("--mlflow-nested/--no-mlflow-nested")] = Field(
        False, description="Log a new MLflow run nested under `mlflow_run` (its child, in its experiment).")

    @model_validator(mode="after")
    def _mlflow_run(self) -> "RunOptions":
        """`mlflow_run` and `mlflow_nested` say where in the store `mlflow` names the audit is logged."""
        if self.mlflow is None and (self.mlflow_run is not None or self.mlflow_nested):
            raise ValueError("`mlflow_run` and `mlflow_nested` say where in MLflow the audit is logged: give `mlflow`")
        if self.mlflow_nested and self.mlflow_run is None:
            raise ValueError("`mlflow_nested` makes the audit's run a child of a run: give `mlflow_run`")
        return self

    @field_validator("memory_budget", "work_budget")
    @classmethod
    def _budget(cls, v: Any, info) -> Any:
        """A size :func:`leakaudit.engine.parse_memory_size` reads, or an amount of steps
        :func:`leakaudit.engine.parse_work_amount` reads (checked before any work is done)."""
        if v is not None:
            from ..engine import parse_memory_size, parse_work_amount

            parse = parse_memory_size if info.field_name == "memory_budget" else parse_work_amount
            try:
                parse(v, name=info.field_name)
            except InvalidParameterError as exc:  # the message is prefixed with the key already
                raise ValueError(str(exc).removeprefix(f"{info.field_name} ")) from None
        return v


def check_seed(value: Any, name: str = "seed") -> int:
    """An audit's seed (``name``: how the message names it): an int or a numpy integer, at least 0. A bool or a
    text is refused, not read as 1 or parsed: ``seed=True`` or ``random_state="0"`` is a mistake to name."""
    import numbers

    integer = isinstance(value, numbers.Integral) and not isinstance(value, bool)
    if not integer or value < 0:
        raise InvalidParameterError(f"{name} must be an integer of at least 0 (an int or a numpy integer), not "
                                    f"{'a negative number' if integer else 'a ' + type(value).__name__}")
    return int(value)


#: The audit seed's child seeds, one per stage, so stages do not share streams (the tabular plan's slots,
#: :data:`leakaudit.audit.plan.PLAN`). New slots go at the end: the seeds of the earlier ones do not change.
SEED_SLOTS = ("target", "reference", "pdtp", "noise_floor", "attribute", "property", "bootstrap", "mip", "shadow",
              "dtp_test", "epsilon", "removal", "quantile", "dp", "label_only")


#: Keys of the TOML file that are paths, read relative to the file's folder.
PATH_KEYS = ("train", "test", "data", "population", "model", "predictions_train", "predictions_test", "cache_dir",
             "out", "model_dir", "tokenizer", "reference_dir")


def _setting(v: Any) -> Any:
    """A setting in a comparable form (a thresholds table given as a model or as a dict)."""
    return v.model_dump() if isinstance(v, BaseModel) else ({**Thresholds().model_dump(), **v} if isinstance(v, dict)
                                                             and set(v) <= set(Thresholds.model_fields) else v)


def _format_validation_error(exc: ValidationError) -> str:
    """pydantic's errors as ``key: message``, joined by "; "."""
    parts = []
    for e in exc.errors():
        msg = e["msg"].removeprefix("Value error, ")
        parts.append(f"{'.'.join(str(x) for x in e['loc'])}: {msg}" if e["loc"] else msg)
    return "; ".join(parts)


#: settings that apply to some audits only: (the keys, whether they apply given the target's kind and text data)
_APPLIES = (
    (("dataset", "n_members", "n_nonmembers", "hidden", "activation", "epochs"), lambda kind, text: kind == "demo"),
    (("module", "module_kwargs", "training"), lambda kind, text: kind == "torch"),
    (("device",), lambda kind, text: text or kind in ("demo", "torch", "sklearn")),
    (("model_dir", "text_column", "tokenizer", "logprobs_column", "reference_dir", "dataset_inference", "extraction",
      "extraction_prefix", "extraction_suffix", "extraction_n", "extraction_p", "extraction_temperature",
      "extraction_top_k"), lambda kind, text: text),
    (("label", "sensitive", "population", "unit", "model", "model_input", "predictions_train", "predictions_test",
      "backend", "address", "removal", "tiers", "claimed_epsilon"), lambda kind, text: not text),
)


def recorded_config(cfg: AuditConfig, *, kind: str, text: bool) -> dict:
    """results.json's ``config``: every setting that applies to an audit of a ``kind`` target (``demo``, ``torch``,
    ``xgboost``, ...; ``text``: a language model's), and any other given a value other than its default (the
    demo's network settings for the demo only, a torch module's recipe for a torch module, a language model's
    settings for one)."""
    out, default = cfg.model_dump(mode="json"), AuditConfig.model_construct().model_dump(mode="json")
    for keys, applies in _APPLIES:
        if not applies(kind, text):
            out = {k: v for k, v in out.items() if k not in keys or v != default[k]}
    return out


def _validated(model: type[BaseModel], kwargs: dict):
    """``model(**kwargs)``, pydantic's errors turned into one :class:`InvalidParameterError`."""
    try:
        return model(**kwargs)
    except ValidationError as exc:
        raise InvalidParameterError(f"invalid audit settings: {_format_validation_error(exc)}") from None


def make_config(**kwargs) -> AuditConfig:
    """Build an :class:`AuditConfig`, turning pydantic's errors into one :class:`InvalidParameterError`."""
    return _validated(AuditConfig, kwargs)


def make_run_options(**kwargs) -> RunOptions:
    """Build :class:`RunOptions`, turning pydantic's errors into one :class:`InvalidParameterError`."""
    return _validated(RunOptions, kwargs)


def _merge_audit_table(raw: dict, path: Path) -> dict:
    """The file's settings: its top-level keys together with those of its ``[audit]`` table.

    A key given both at the top level and under ``[audit]`` is refused (neither silently wins), and so is an
    ``audit`` key that is not a table. Keys beside ``[audit]`` are settings like any other: a ``[thresholds]``
    table after ``[audit]`` is the audit's thresholds, ``exit_code = true`` above it the audit's exit code.
    """
    if "audit" not in raw:
        return raw
    table = raw["audit"]
    if not isinstance(table, dict):
        raise InvalidParameterError(f"config file {path}: [audit] must be a table of settings")
    top = {k: v for k, v in raw.items() if k != "audit"}
    both = sorted(set(top) & set(table))
    if both:
        raise InvalidParameterError(
            f"config file {path}: {', '.join(map(repr, both))} given both at the top level and under [audit]; "
            "give each setting once")
    return {**top, **table}


def load_config(path: str | Path, **overrides) -> AuditConfig:
    """Read a TOML config file; flags given on the command line override its values.

    Relative paths in the file are taken relative to the file's folder. The file may also hold the
    :class:`RunOptions` keys (``out``, ``check_inputs``, ``quiet``); :func:`load_config_and_options` returns them.
    """
    return load_config_and_options(path, **overrides)[0]


def load_config_and_options(path: str | Path, **overrides) -> tuple[AuditConfig, RunOptions]:
    """The settings and the run options of a TOML config file (keys at the top level, under ``[audit]``, or both:
    a key given in both places is refused, never silently dropped).

    ``overrides`` (the command line's flags; None means "not given") win over the file. Relative paths in the
    file, ``out`` included, are taken relative to the file's folder; paths given as overrides are left as they are.
    """
    from .._validation import check_linked_file

    path = Path(path)
    if not path.is_file():
        raise InvalidParameterError(f"config file {path} does not exist")
    check_linked_file(path, what="config file")
    try:
        raw = tomllib.loads(path.read_text())
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise InvalidParameterError(f"config file {path} is not valid TOML: {exc}") from None
    raw = _merge_audit_table(raw, path)
    unknown = sorted(set(raw) - set(AuditConfig.model_fields) - set(RunOptions.model_fields))
    if unknown:
        raise InvalidParameterError(
            f"config file {path}: unknown key{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))} "
            "(the keys are the audit's flags with _ for -, e.g. cache_dir; docs/config.md lists them all)")
    from .policy import POLICIES

    if isinstance(raw.get("policy"), str) and raw["policy"] not in POLICIES:  # a file, beside this one
        raw["policy"] = str(path.parent / raw["policy"])
    def beside(v: Any) -> Any:
        return str(path.parent / v) if isinstance(v, str) and not Path(v).is_absolute() else v

    for key in (k for k in PATH_KEYS if k in raw):  # reference_dir: a list of folders
        raw[key] = [beside(v) for v in raw[key]] if isinstance(raw[key], list) else beside(raw[key])
    raw.update({k: v for k, v in overrides.items() if v is not None})
    run = {k: raw.pop(k) for k in RunOptions.model_fields if k in raw}
    return make_config(**raw), make_run_options(**run)


#: The files ``leakaudit audit`` writes into its output folder (``inputs.json``: with ``check_inputs``).
OUTPUT_FILES = ("results.json", "records.csv", "report.html", "evidence.json", "inputs.json")


def check_outputs_spare_inputs(cfg: AuditConfig, out: str | Path) -> None:
    """Refuse, before any work, an input file that the audit's outputs in ``out`` would overwrite.

    ``--train out/records.csv --out out`` would read the members and then replace them with the audit's own
    records.csv. Paths are compared after resolving links, so a link to an output file is caught as well.
    """
    import os

    out_dir = Path(os.path.realpath(Path(out).expanduser()))
    written = {out_dir / name: name for name in OUTPUT_FILES}
    for key in PATH_KEYS:
        if key in ("out", "cache_dir"):
            continue
        value = getattr(cfg, key, None)
        for p in (value if isinstance(value, list) else [value]):
            if p is None:
                continue
            resolved = Path(os.path.realpath(Path(p).expanduser()))
            if resolved in written:
                raise InvalidParameterError(
                    f"`{key}` {p} is the {written[resolved]} that the audit writes into `out` {out}: it would be "
                    "overwritten; give another `out` folder, or move the input file out of it")
