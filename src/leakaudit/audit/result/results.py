"""The schema of ``results.json`` (versioned; fields never change meaning, new ones are optional)."""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Optional

from pydantic import Field, PrivateAttr, create_model, field_validator, model_validator

from ..._results import Result
from .checks import BELOW, STATUS_COLOURS, STATUSES, UNDECIDED, Check, rank_checks, to_decide
from ..config import AuditConfig, Phrase, Phrased
from .sections import (AttackMetrics, AttributeInference, DataSection, DatasetInferenceSection, DpSection, DtpSection,
                       DuplicatesSection, ExtractionSection, LeakedWindowsSection, MipSection, PropertyEstimate,
                       RecipeTest, RecordRiskSection, RegisteredAnalysis, RemedySection, Resources, Section, Settings,
                       Skipped, TargetSection)

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["AuditResult", "Verdict", "SCHEMA_VERSION", "EXIT_CODES", "read_result", "rerender_report",
           "results_json_schema", "OUTCOME_COLOURS"]

#: results.json's schema: every list of records names its members as sentences do (``"train.csv, row 248"``), every
#: section is closed and typed; files of schema 2 and 3 are read as schema 4 (:meth:`AuditResult.from_dict`).
SCHEMA_VERSION = 4

#: Process status of ``leakaudit audit --exit-code`` per outcome (2 stays "bad input").
EXIT_CODES = {"publish": 0, "do not publish": 3, "inconclusive": 4}


class Verdict(Result, Phrased):
    """The outcome, every check it rests on, and the thresholds they were judged against.

    ``outcome``: "do not publish" (a check that describes the given model is exceeded at the stated confidence),
    "publish" (under the ``burden_of_proof`` "safety shown": every check that can show safety is shown below its
    threshold; under "leakage shown": every check ran with enough data and none is exceeded) or "inconclusive"
    (neither). Each check's ``status`` is exceeded, shown below, undecided or not measurable; ``counts`` holds how
    many have each, adding up to ``n_checks``, and ``checks`` are ranked by strength of evidence (exceeded first).
    ``policy``: the release policy applied
    (a built-in name or the policy file); ``release`` and ``threat_model``: the release context the analyses were
    chosen for (:mod:`leakaudit.audit.result.release`). ``publish`` is ``outcome == "publish"``. ``headline`` is the
    outcome and ``finding`` (one sentence: what was found, how sure, what to do), as "Outcome: finding";
    ``finding_parts`` and ``headline_parts``: the same with the settings they name as structured references, said
    per surface by :meth:`~leakaudit.audit.config.Phrased.said` (None where they name none).
    ``reasons``, ``shown_below``, ``undecided`` and ``not_measurable`` are the sentences of the exceeded, shown-below,
    undecided and unmeasurable checks, ranked. ``confidence`` is the family-wise confidence of the verdict:
    each check is judged at ``check_confidence``, Bonferroni over the ``n_planned`` checks the analyses planned for
    these inputs before any ran (``planned_checks``, per analysis); ``n_checks`` of them ran (a planned check that
    could not run only makes the correction stricter; :meth:`family_sentence` says so in words). ``recipe``: does retraining
    reproduce the given model (the test, its p-value and a sentence)? ``exit_code``: the process status
    ``--exit-code`` gives (0 publish, 3 do not publish, 4 inconclusive).
    """

    publish: bool
    headline: str
    finding: str = ""
    headline_parts: Optional[Phrase] = None
    finding_parts: Optional[Phrase] = None
    reasons: list[str]
    shown_below: list[str]
    thresholds: dict[str, Optional[float]]
    outcome: Literal["publish", "do not publish", "inconclusive"] = "publish"
    not_measurable: list[str] = Field(default_factory=list)
    checks: list[Check] = Field(default_factory=list)
    confidence: Optional[float] = None
    check_confidence: Optional[float] = None
    n_checks: int = 0
    planned_checks: dict[str, int] = Field(default_factory=dict)
    n_planned: int = 0
    recipe: Optional[RecipeTest] = None
    dtp_rule: str = "statistical"
    undecided: list[str] = Field(default_factory=list)
    burden_of_proof: Literal["safety shown", "leakage shown"] = "safety shown"
    policy: str = "default"
    release: Optional[str] = None
    threat_model: str = ""
    exit_code: int = 0
    counts: dict[Literal["exceeded", "shown below", "undecided", "not measurable"], int] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _schema2(cls, data: Any) -> Any:
        """A verdict of results.json's schema 2: ``passed`` (shown below and undecided together) is read from the
        checks, which say which each was; ``counts`` is counted."""
        if isinstance(data, dict) and "passed" in data and "shown_below" not in data:
            data = dict(data)
            data.pop("passed")
            if not isinstance(data.get("checks", []), list):
                raise ValueError("checks must be a list of checks")
            data["checks"] = checks = [Check.model_validate(c) for c in data.get("checks", [])]
            data["shown_below"] = [c.sentence for c in checks if c.status == BELOW]
            data["undecided"] = [c.sentence + (f" ({c.fix})" if c.fix else "") for c in checks if c.status == UNDECIDED]
            data.setdefault("counts", {s: sum(c.status == s for c in checks) for s in STATUSES})
        return data

    @field_validator("confidence", "check_confidence")
    @classmethod
    def _a_confidence(cls, v: Optional[float]) -> Optional[float]:
        """A confidence lies between 0 and 1 (the intervals and the plots' bands are drawn at it)."""
        if v is not None and not 0 < v < 1:
            raise ValueError("a confidence lies between 0 and 1")
        return v

    def to_decide(self) -> list[Check]:
        """The checks that keep this verdict from "publish", the one to decide first leading
        (:func:`~leakaudit.audit.result.checks.to_decide`)."""
        return to_decide(self.checks, self.burden_of_proof == "safety shown")

    def family_sentence(self) -> str:
        """The multiple-testing correction in words, read from ``n_planned``, ``n_checks``, ``check_confidence``
        and ``confidence``: what the report states under the verdict. Empty when no check was judged."""
        if not self.n_checks or self.check_confidence is None or self.confidence is None:
            return ""
        cc, conf = f"{self.check_confidence * 100:.4g}%", f"{self.confidence * 100:g}%"
        planned = self.n_planned or self.n_checks
        checks = f"{planned} check{'' if planned == 1 else 's'}"
        each, over = (f"Each of the {checks}", checks) if planned == self.n_checks else (
            "Each check", f"{checks} planned for these inputs, of which {self.n_checks} ran: a planned check that did "
            "not run only makes the others stricter")
        return (f"{each} is judged at {cc} confidence, so that together they hold at {conf} (Bonferroni over the "
                f"{over}); the intervals below are these {cc} intervals.")


_property = property

#: ``config`` as results.json records it: :class:`~leakaudit.audit.config.AuditConfig`'s fields, typed and closed,
#: without its checks of the inputs (files that may be gone by now, a language model's settings given in memory)
ConfigRecord = create_model("ConfigRecord", __base__=Section, __module__=__name__, __doc__=AuditConfig.__doc__,
                            **{k: (f.annotation, f) for k, f in AuditConfig.model_fields.items()})


class AuditResult(Result):
    """Everything an audit measured (``to_dict()`` adds ``schema_version`` and ``type``).

    Each section is a typed model of :mod:`leakaudit.audit.result.sections` (``res.membership["lira"].auc``,
    ``res.dtp.n_above``) that also reads as the mapping results.json holds (``res.dtp["n_above"]``); a section an
    audit did not make is None (or empty: ``membership``, ``attribute``, ``property``, ``analyses``, ``skipped``).
    ``config`` is the full :class:`~leakaudit.audit.config.AuditConfig` (its field's description says what a library
    call records); ``membership`` holds each attack's metrics by name, ``attribute`` each sensitive column's,
    ``property`` each group's; ``analyses`` the sections of analyses registered from outside leakaudit
    (:func:`leakaudit.register_analysis`); ``skipped`` the analyses that could not run, each with its reason;
    ``timings`` the seconds per stage; ``resources`` peak memory and what each stage trained or read from the cache.
    """

    schema_version: ClassVar[int] = SCHEMA_VERSION

    leakaudit_version: str
    created: str
    command: str
    config: ConfigRecord = Field(description="the full configuration: from the command line, enough to re-run; "
                                 "from leakaudit.audit(), the settings given (the model and records came from memory, "
                                 "so every file key is null; a language model's text_column and dataset_inference "
                                 "stay as given without model_dir)")
    data: DataSection
    target: TargetSection
    membership: dict[str, AttackMetrics] = Field(default_factory=dict)
    dtp: Optional[DtpSection] = None
    remedy: Optional[RemedySection] = None
    attribute: dict[str, AttributeInference] = Field(default_factory=dict)
    property: dict[str, PropertyEstimate] = Field(default_factory=dict)
    mip: Optional[MipSection] = None
    dp: Optional[DpSection] = None
    dataset_inference: Optional[DatasetInferenceSection] = None
    duplicates: Optional[DuplicatesSection] = None
    extraction: Optional[ExtractionSection] = None
    leaked_windows: Optional[LeakedWindowsSection] = Field(
        None, description="a language-model audit: the windows of tokens that carry the membership signal in the "
        "most exposed member texts (their text null when written with --redact), or why none is shown")
    skipped: list[Skipped] = Field(default_factory=list)
    verdict: Verdict
    timings: dict[str, float]
    resources: Resources
    settings: Settings = Field(default_factory=Settings)
    record_risk: Optional[RecordRiskSection] = None
    analyses: dict[str, RegisteredAnalysis] = Field(default_factory=dict)

    @classmethod
    def from_dict(cls, data: dict, *, records: pd.DataFrame | None = None) -> "AuditResult":
        """The result results.json holds; a file of schema 2 or 3 is read as schema 4 (:func:`_schema3`), its
        records named by ``records`` (records.csv's rows) where given."""
        return super().from_dict(_schema3(data, records) if data.get("schema_version", SCHEMA_VERSION) < 4 else data)

    @classmethod
    def read(cls, data: Any, *, where: str = "results", records: pd.DataFrame | None = None) -> "AuditResult":
        """results.json's data (``data``, as ``json.load`` gives it) read as untrusted input (:meth:`from_dict`,
        ``records`` as there); refused in one line naming ``where`` and the first field that does not hold (the
        schema's, or :func:`_json_problem`'s) when it is not an audit's result."""
        from pydantic import ValidationError

        from ...exceptions import DataFileError

        if not isinstance(data, dict) or data.get("type", "AuditResult") != "AuditResult":
            raise DataFileError(f"{where} does not hold an audit's results (no AuditResult)")
        problem = _json_problem(data)
        if problem is not None:
            raise DataFileError(f"{where} does not hold an audit's results: {problem}")
        try:
            return cls.from_dict(data, records=records)
        except ValidationError as exc:
            err = exc.errors()[0]
            field = ".".join(str(p) for p in err.get("loc", ())) or "its top level"
            raise DataFileError(f"{where} does not hold an audit's results: {field}: {err.get('msg')}") from None

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
        """The evidence record (:func:`leakaudit.audit.result.evidence.build_evidence`, made when the audit ran: the
        SHA-256 of every input file, the versions, the policy and each threshold's source, the release context,
        every check and the attack classes tested or not); what ``save`` writes as evidence.json. None for a result
        read back from results.json alone."""
        return self._evidence

    @_property
    def records(self):
        """pandas.DataFrame of shape (n_members + n_nonmembers, n_columns): one row per audited record, members
        first (``record``, ``source``, ``row``: its file's row, or ``index``: its DataFrame's index label for tables
        given in memory, ``is_member``, ``label``, the record's values, ``score_ATTACK`` per
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
        """The checks as a pandas.DataFrame, one row each, ranked by strength of evidence (id, name, status, value,
        low, high, threshold, p_value, describes, sentence, fix)."""
        import pandas as pd

        cols = ["id", "name", "status", "value", "low", "high", "threshold", "p_value", "describes", "sentence", "fix"]
        rows = [{**c.model_dump(include=set(cols)), "low": None if c.interval is None else c.interval[0],
                 "high": None if c.interval is None else c.interval[1]} for c in self.verdict.checks]
        return pd.DataFrame(rows, columns=cols)

    def save(self, out: str | Path, *, redact: bool = False) -> Path:
        """Write results.json, records.csv, report.html and evidence.json into the folder ``out`` (created if
        missing), exactly as ``leakaudit audit --out`` writes them: together or not at all
        (:func:`leakaudit.audit.result.output.save_result`; ``redact=True``, as ``--redact``: records.csv and report.html
        without the records' own values). Returns the folder written: ``out``, with a ``..`` in it resolved. An
        ``out`` that is not a path, or is empty, is refused by name before anything is written."""
        from .output import save_result

        return save_result(self, out, redact=redact)

    def log_to_mlflow(self, tracking_uri: str | None = None, *, experiment: str = "leakaudit",
                      run_name: str | None = None, run_id: str | None = None, nested: bool = False) -> str:
        """Log this audit to MLflow (the ``mlflow`` extra) as a new run, into the run ``run_id`` (the one that
        trained the model, say), or as a child of it (``nested``): the verdict as a tag, each check's value and
        interval as metrics, results.json, evidence.json and report.html as artifacts
        (:func:`leakaudit.audit.result.mlflow_log.log_to_mlflow`). Returns the run's id."""
        from .mlflow_log import log_to_mlflow

        return log_to_mlflow(self, tracking_uri=tracking_uri, experiment=experiment, run_name=run_name,
                             run_id=run_id, nested=nested)

    def __repr__(self) -> str:
        counts = ", ".join(f"{self.verdict.counts.get(s, 0)} {s}" for s in STATUSES)
        return (f"AuditResult(outcome={self.verdict.outcome!r}, checks: {counts}; "
                f"{self.data.n_members} members, {self.data.n_nonmembers} non-members)")

    def _repr_html_(self) -> str:
        """A notebook's view: the outcome and what was found, the records and the model, then every check ranked by
        strength of evidence (:func:`rank_checks`), its status in its colour (:data:`STATUS_COLOURS`) and its numbers
        as the report prints them (control and bidirectional characters written out, as in the report)."""
        from html import escape as html_escape

        from ..._results import escape_controls

        def escape(text: str) -> str:
            return html_escape(escape_controls(text))

        title, finding, about, level, rows = self._view()
        left, right = "style='text-align:left'", "style='text-align:right;white-space:nowrap'"
        body = "".join(
            f"<tr><td {left}>{escape(r['name'])}</td>"
            f"<td {left}><b style='color:{STATUS_COLOURS.get(r['status'], '#444444')}'>{escape(r['status'])}</b></td>"
            + "".join(f"<td {right}>{escape(r[k])}</td>" for k in ("value", "interval", "threshold")) + "</tr>"
            for r in rows)
        return (f"<div class='leakaudit-result'><p><b style='color:{OUTCOME_COLOURS.get(self.outcome, '#444444')};"
                f"font-size:1.15em'>{escape(title)}</b>: {escape(finding)}</p>"
                f"<p style='color:#555555'>{escape(about)}</p>"
                f"<table><thead><tr><th {left}>check</th><th {left}>status</th><th {right}>value</th>"
                f"<th {right}>{escape(level)}</th><th {right}>threshold</th></tr></thead><tbody>{body}</tbody></table>"
                "<p style='color:#555555;font-size:0.9em'>Checks ranked by strength of evidence: exceeded (the "
                "strongest evidence first), undecided, shown below, not measurable. <code>result.plot_roc()</code>, "
                "<code>result.plot_records()</code>, <code>result.plot_pdtp()</code> draw the report's plots; "
                "<code>result.save(out)</code> writes the report.</p></div>")

    def _repr_pretty_(self, p, cycle: bool) -> None:
        """IPython's plain-text view: the notebook's view as text."""
        import textwrap

        if cycle:
            p.text(repr(self))
            return
        title, finding, about, level, rows = self._view()
        cols = ("name", "status", "value", "interval", "threshold")
        table = [("check", "status", "value", level, "threshold")] + [tuple(r[k] for k in cols) for r in rows]
        widths = [max(len(row[i]) for row in table) for i in range(len(cols))]
        lines = textwrap.wrap(f"{title}: {finding}", 110) + textwrap.wrap(about, 110) + [""]
        lines += ["  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths))).rstrip()
                  for row in table]
        p.text("\n".join(lines))

    def _view(self) -> tuple[str, str, str, str, list[dict[str, str]]]:
        """What the notebook shows, as text: the outcome ("Do not publish"), the finding, the records and the model,
        the intervals' heading and one row per check (name, status, value, interval, threshold) in
        :func:`rank_checks` order, the numbers formatted as the report's checks table formats them."""
        from ...report.html import check_row

        v = self.verdict
        title = v.outcome[:1].upper() + v.outcome[1:]
        finding = v.finding or v.headline.removeprefix(f"{title}: ")
        about = (f"{self.data.n_members:,} members, {self.data.n_nonmembers:,} non-members; "
                 f"{self.target.description}; profile {self.config.profile}; checks: "
                 + ", ".join(f"{v.counts.get(st, 0)} {st}" for st in STATUSES))
        cc = v.check_confidence
        pct = f"{cc * 100:.4g}%" if cc is not None and math.isfinite(cc) else ""
        level = f"{pct} interval".lstrip()
        rows = []
        for c in rank_checks(v.checks):
            shown = check_row(c, pct)
            rows.append({"name": shown["name"], "status": c.status,
                         **{k: shown[k] for k in ("value", "interval", "threshold")}})
        return title, finding, about, level, rows

    # -- plots --------------------------------------------------------------------------------------------------
    def plot_roc(self, *, ax: Axes | None = None) -> Figure:
        """The membership attacks' ROC curves on log axes, each with its pointwise bootstrap band at the checks'
        confidence and the FPR the verdict judges TPR at: the report's plot
        (:func:`leakaudit.report.plots.roc_figure`), from ``records``' ``is_member`` and ``score_ATTACK`` columns.

        Parameters
        ----------
        ax : matplotlib.axes.Axes, optional
            Draw into it; None: a new Figure, which pyplot does not manage (a notebook cell whose value it is shows
            it once; ``fig.savefig(path)`` writes it).

        Returns
        -------
        matplotlib.figure.Figure

        Raises
        ------
        InvalidInputError
            The result holds no records (one read back from results.json alone: attach records.csv's rows with
            :meth:`with_records`), or no membership attack's scores.
        """
        from ...report.plots import roc_of

        return roc_of(self, self._plotted("plot_roc"), self._scored("plot_roc"), ax=ax)

    def plot_pdtp(self, *, ax: Axes | None = None) -> Figure:
        """Histogram of the members' PDTP (nats; counts on a log axis) with the DTP threshold: the report's plot
        (:func:`leakaudit.report.plots.histogram_figure`), from ``records``' ``pdtp`` column; ``ax`` and the
        figure returned as in :meth:`plot_roc`. InvalidInputError: the result holds no records, or no PDTP was
        measured (the message says why the audit skipped it)."""
        from ...report.plots import pdtp_histogram_of

        return pdtp_histogram_of(self, self._members_pdtp("plot_pdtp"), ax=ax)

    def plot_records(self, attack: str | None = None, *, ax: Axes | None = None) -> Figure:
        """Each member's PDTP against an attack's score, with the DTP threshold: the report's scatter
        (:func:`leakaudit.report.plots.pdtp_vs_score_figure`), from ``records``' ``pdtp`` and ``score_ATTACK``.

        Parameters
        ----------
        attack : str, optional
            The membership attack whose score is drawn (a key of ``membership``, e.g. ``"lira"``); None: the one of
            highest AUC, as in the report.
        ax : matplotlib.axes.Axes, optional
            As in :meth:`plot_roc`, as is the figure returned.

        Raises
        ------
        InvalidInputError
            The result holds no records, no PDTP was measured, or no attack's scores are in records.
        InvalidParameterError
            ``attack`` names no attack with scores in records.
        """
        from ..._validation import check_choice
        from ...exceptions import InvalidParameterError
        from ...report.plots import pdtp_scatter_of, strongest_attack

        members = self._members_pdtp("plot_records")
        scored = self._scored("plot_records")
        if attack is None:
            attack = strongest_attack(self, scored)
            if attack is None:
                raise InvalidParameterError("plot_records() draws the attack of highest AUC, and no attack's AUC was "
                                            f"measured: name one with attack= (one of {', '.join(scored)})")
        check_choice(attack, name="attack", choices=tuple(scored))
        return pdtp_scatter_of(self, members, attack, ax=ax)

    def _plotted(self, what: str) -> pd.DataFrame:
        """``records``, or an error naming ``what`` when the result holds none."""
        from ...exceptions import InvalidInputError

        if self.records is None or not len(self.records):
            raise InvalidInputError(
                f"{what}() draws from the per-record table, and this result holds none (result.records is None: a "
                "result read back from results.json alone); attach records.csv's rows with result.with_records("
                "leakaudit.audit.result.output.read_records_csv(path))")
        return self.records

    def _scored(self, what: str) -> list[str]:
        """The membership attacks whose scores ``records`` holds (``score_ATTACK``), or an error naming ``what``."""
        from ...exceptions import InvalidInputError

        from ...report.plots import scored_attacks

        scored = scored_attacks(self.membership, self._plotted(what))
        if not scored:
            raise InvalidInputError(f"{what}() draws the membership attacks' scores, and records holds none (no "
                                    "score_ATTACK column: no membership attack ran)")
        return scored

    def _members_pdtp(self, what: str) -> pd.DataFrame:
        """The members whose PDTP was measured, or an error naming ``what`` and why PDTP did not run."""
        from ...exceptions import InvalidInputError
        from ...report.plots import measured_members

        members = measured_members(self._plotted(what))
        if not len(members):
            why = next((f" ({s.name}: {s.reason})" for s in self.skipped if "PDTP" in s.name), "")
            raise InvalidInputError(f"{what}() draws the members' PDTP, and this audit measured none{why}")
        return members


#: the colour of the verdict's outcome in the notebook's view, the colour of the status it rests on
OUTCOME_COLOURS = {"do not publish": STATUS_COLOURS["exceeded"], "inconclusive": STATUS_COLOURS["undecided"],
                   "publish": STATUS_COLOURS["shown below"]}


def _schema3(data: dict, records: pd.DataFrame | None = None) -> dict:
    """A result of schema 3 (or 2) as schema 4: each record of the DTP section's lists, a 0-based records.csv
    ``record`` key, named as sentences name it from ``records`` (records.csv's rows), else ``"records.csv, record
    N"`` (results.json alone does not say its file and row); the
    retraining recipe's parameters under ``parameters`` ("module arguments": ``module_arguments``); the dp section
    without the ``schema_version`` and ``type`` of its own."""
    import copy

    from ..._results import record_names

    data = copy.deepcopy(data)
    dtp, removal = _dict(data.get("dtp")), _dict(_dict(data.get("dtp")).get("removal"))
    named = {} if records is None else dict(zip(records["record"].astype(int), record_names(records)))

    def name(r):  # a record key; anything else is left for the schema to refuse by its field
        if not isinstance(r, int) or isinstance(r, bool):
            return r
        return None if r < 0 else named.get(r, f"records.csv, record {r}")

    for sec, keys in ((dtp, ("records_above", "records_significant", "records_untested")),
                      (_dict(dtp.get("test")), ("records", "untested")),
                      (_dict(dtp.get("screening")), ("sample_records",)),
                      (removal, ("removed", "records_above_after", "records_significant_after",
                                 "records_untested_after"))):
        sec.update({k: [name(r) for r in sec[k]] for k in keys if isinstance(sec.get(k), list)})
    if "argmax_after" in removal:
        removal["argmax_after"] = name(removal["argmax_after"])
    recipe = _dict(data.get("settings")).get("retraining_recipe")
    if isinstance(recipe, dict):
        top = {"algorithm": "algorithm", "module": "module", "module arguments": "module_arguments"}
        data["settings"]["retraining_recipe"] = {
            **{top[k]: v for k, v in recipe.items() if k in top},
            "parameters": {k: v for k, v in recipe.items() if k not in top and k != "seeds"},
            **({"seeds": recipe["seeds"]} if "seeds" in recipe else {})}
    for k in ("schema_version", "type"):
        _dict(data.get("dp")).pop(k, None)
    return data


def _dict(section: Any) -> dict:
    """``section`` where it is a dict (the same object, edited in place), else an empty one: a section of another
    type is left as it was, for the schema to refuse by its field."""
    return section if isinstance(section, dict) else {}


#: deeper than any results.json an audit writes (7 levels), shallow enough for every reader of it
_MAX_DEPTH = 100


def _json_problem(data: Any) -> str | None:
    """The field of results.json's data (as ``json.load`` gives it) that no audit writes and that its readers
    cannot take, in words: nesting deeper than ``_MAX_DEPTH`` levels, an integer beyond a float's range or a
    ``schema_version`` that is no integer; None when there is none."""
    from ..._validation import shown

    todo = [((), data)]
    while todo:
        path, v = todo.pop()
        field = ".".join(map(str, path[:8])) + (" ..." if len(path) > 8 else "")
        if isinstance(v, (dict, list)):
            if len(path) >= _MAX_DEPTH:
                return f"{field}: nested deeper than {_MAX_DEPTH} levels"
            todo += [((*path, k), x) for k, x in (v.items() if isinstance(v, dict) else enumerate(v))]
        elif isinstance(v, int) and abs(v) > sys.float_info.max:
            return f"{field}: an integer of {len(str(abs(v)))} digits, beyond the range of a number"
    version = data.get("schema_version", SCHEMA_VERSION)
    if not isinstance(version, int) or isinstance(version, bool):
        return f"schema_version: {shown(version)} is not a schema's number"
    return None


#: results.json's data as the typed :class:`AuditResult`, refused in one line naming the field that does not hold
read_result = AuditResult.read


def rerender_report(folder: str | Path) -> Path:
    """``folder/report.html`` rendered again from the results.json and, where it is there, the records.csv an
    audit wrote in ``folder``, as ``leakaudit report DIR`` renders it (without records.csv the report says that
    what only it holds, the plots and the riskiest records, is missing). Both files are read as untrusted input: a
    damaged one is refused in one :class:`~leakaudit.exceptions.LeakauditError` naming the file and the field.
    Returns the report's path."""
    from .output import check_out_writable, folder_argument, write_report

    folder = folder_argument(folder, "folder")
    check_out_writable(folder, name="folder")
    write_report(folder, AuditResult)
    return folder / "report.html"


def results_json_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of ``results.json``, published as ``docs/results.schema.json``.

    Generated from the models: :class:`AuditResult`, its sections (:mod:`leakaudit.audit.result.sections`), the
    :class:`Verdict` and its :class:`~leakaudit.audit.result.checks.Check` objects; ``config`` holds
    :class:`~leakaudit.audit.config.AuditConfig`'s fields. Every object is closed (a later schema version may add
    optional keys). Numbers that could not be measured are ``null`` (results.json is strict JSON: never ``NaN`` or
    ``Infinity``).
    """
    schema = AuditResult.model_json_schema(mode="validation", ref_template="#/$defs/{model}")
    defs, props = schema.pop("$defs", {}), schema["properties"]
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://github.com/leakaudit/leakaudit/docs/results.schema.json",
        "title": "leakaudit results.json",
        "description": "What `leakaudit audit` measured (leakaudit.audit.result.results.AuditResult, schema_version "
                       f"{SCHEMA_VERSION}). Strict JSON: a value that could not be measured is null. Fields never "
                       "change meaning; new ones are optional. Generated by "
                       "leakaudit.audit.result.results.results_json_schema() from the result models; "
                       "tests/audit/test_results_schema.py keeps this file equal to it.",
        "type": "object",
        # every key written since schema 1; dp, dataset_inference, settings and record_risk came later (optional)
        "required": ["schema_version", "type", "leakaudit_version", "created", "command", "config", "data", "target",
                     "membership", "dtp", "attribute", "property", "mip", "skipped", "verdict", "timings",
                     "resources"],
        "additionalProperties": False,
        "properties": {"schema_version": {"const": SCHEMA_VERSION}, "type": {"const": "AuditResult"}, **props},
        "$defs": defs,
    }
