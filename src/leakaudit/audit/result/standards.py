"""The standards an auditor checks an AI model against, and which of leakaudit's checks and attack classes evidence
which of their items: one table, read by the evidence record (:mod:`leakaudit.audit.result.evidence`).

The sources, at the versions read (:data:`SOURCES`): OWASP AISVS 1.0 (chapters C11 and C12: controls 11.3.3 and
12.3.2, and the chapters C11.4 and C11.5 by their objectives, as none of their controls asks for an attack test),
NIST AI 100-2e2025 (its predictive-AI privacy attack classes) and MITRE ATLAS 5.6.0 (AML.T0024 and its
sub-techniques, AML.T0057), and ISO/IEC 27559:2022's de-identification framework by its clauses (context, data and
identifiability assessment, governance: only identifiability assessment, 8.2.2 and 8.2.3, is what an audit of a model
measures; the rest needs the controller's organisational evidence). :data:`CHECKS` maps each check id leakaudit makes (a pattern: ``*`` stands for an attack
or a column) to the items it evidences and says what it does not show; :data:`CLASSES` maps each attack class of the
evidence record; :data:`ITEMS` lists every item with what of it leakaudit can evidence. :func:`item_statuses` says,
for one audit, whether each item was "tested", "not applicable" (and why), "not evaluable" (the audit cannot speak to
it, and why) or "not tested" (and why).
docs/verdict.md says the same in prose.
"""

from __future__ import annotations

from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Literal, Optional

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["Item", "CheckMapping", "ClassMapping", "ItemStatus", "CheckStandards", "ClassStandards", "ITEMS", "CHECKS", "CLASSES", "SOURCES", "check_mapping",
           "check_standards", "class_standards", "item_statuses", "identifiability_basis", "finding"]

Standard = Literal["OWASP AISVS 1.0", "NIST AI 100-2e2025", "MITRE ATLAS", "ISO/IEC 27559:2022"]

#: each standard, the version read and where
SOURCES = {
    "OWASP AISVS 1.0": "OWASP Artificial Intelligence Security Verification Standard 1.0, chapters C11 and C12 "
                       "(github.com/OWASP/AISVS, 1.0/en)",
    "NIST AI 100-2e2025": "NIST AI 100-2e2025, Adversarial Machine Learning: A Taxonomy and Terminology of Attacks "
                          "and Mitigations (March 2025): its privacy attack classes",
    "MITRE ATLAS": "MITRE ATLAS 5.6.0 (github.com/mitre-atlas/atlas-data, data/techniques.yaml)",
    "ISO/IEC 27559:2022": "ISO/IEC 27559:2022, Privacy enhancing data de-identification framework: its clauses 6 to 9 "
                          "(read from the table of contents of AS/NZS ISO/IEC 27559:2024, which adopts it identically)",
}


@dataclass(frozen=True)
class Item:
    """One item of a standard: an AISVS control (or a chapter, by its objective), a NIST AI 100-2 attack class, an
    ATLAS technique, an ISO/IEC 27559 clause; ``title`` in the standard's words, shortened; ``not_evaluable``: why
    no audit of a model can speak to it (None: one can)."""

    standard: Standard
    id: str
    title: str
    not_evaluable: str | None = None


@dataclass(frozen=True)
class CheckMapping:
    """The items a check evidences (``items``: ids of :data:`ITEMS`), ``shows``: what its result says of them, and
    ``not_shown``: what it does not; ``pattern`` matches the check's id (``*``: an attack's or a column's name)."""

    pattern: str
    attack_class: str | None
    items: tuple[str, ...]
    shows: str
    not_shown: str


@dataclass(frozen=True)
class ClassMapping:
    """The items an attack class of the evidence record (EDPB Opinion 28/2024's classes) falls under."""

    attack_class: str
    items: tuple[str, ...]


ITEMS: tuple[Item, ...] = (
    Item("OWASP AISVS 1.0", "11.3.3", "membership-inference attack simulations demonstrate that attack accuracy does "
         "not meaningfully exceed random guessing on held-out data"),
    Item("OWASP AISVS 1.0", "12.3.2", "black-box privacy audits estimate epsilon as a lower bound at a stated "
         "confidence level, consistent with the declared budget within documented tolerance"),
    Item("OWASP AISVS 1.0", "C11.4", "model-inversion resistance (the chapter's objective: prevent reconstruction of "
         "private training data or sensitive attributes from model outputs)"),
    Item("OWASP AISVS 1.0", "C11.5", "model-extraction defence (the chapter's objective: detect and deter "
         "unauthorized model cloning through API abuse)"),
    Item("NIST AI 100-2e2025", "membership inference", "privacy attack: membership inference"),
    Item("NIST AI 100-2e2025", "data reconstruction", "privacy attack: data reconstruction (model inversion among "
         "them)"),
    Item("NIST AI 100-2e2025", "property inference", "privacy attack: property inference"),
    Item("NIST AI 100-2e2025", "model extraction", "privacy attack: model extraction"),
    Item("MITRE ATLAS", "AML.T0024.000", "Exfiltration via AI Inference API: Infer Training Data Membership"),
    Item("MITRE ATLAS", "AML.T0024.001", "Exfiltration via AI Inference API: Invert AI Model"),
    Item("MITRE ATLAS", "AML.T0024.002", "Exfiltration via AI Inference API: Extract AI Model"),
    Item("MITRE ATLAS", "AML.T0057", "LLM Data Leakage"),
    Item("ISO/IEC 27559:2022", "6.2", "context assessment: threat modelling (the recipient's security and privacy "
         "practices, motives and capacity to re-identify)", "it needs evidence of the recipient's practices and "
         "motives, which the model and its data do not hold (the release context names the recipient only)"),
    Item("ISO/IEC 27559:2022", "6.3", "context assessment: transparency and impact assessment",
         "stakeholder engagement and the privacy-related harms of a disclosure are the controller's to assess"),
    Item("ISO/IEC 27559:2022", "7.2", "data assessment: data features (data principals, data and attribute types, "
         "dataset properties)", "which attributes identify a person is the controller's classification; the audit "
         "reports duplicates and the privacy unit only"),
    Item("ISO/IEC 27559:2022", "7.3", "data assessment: attack modelling (maximum or average risk, population or "
         "sample-based attack, data privacy models)", "the attacks to guard against are the controller's choice; "
         "the audit states its own threat model (release) but cannot judge that choice"),
    Item("ISO/IEC 27559:2022", "8.2.2", "identifiability assessment: quantifying identifiability"),
    Item("ISO/IEC 27559:2022", "8.2.3", "identifiability assessment: adversarial testing"),
    Item("ISO/IEC 27559:2022", "8.3", "identifiability mitigation: reconfiguring the environment, transforming the "
         "data, re-evaluation", "the mitigation is the controller's action; the audit re-evaluates only when run "
         "again after it"),
    Item("ISO/IEC 27559:2022", "9", "de-identification governance (roles, policies, disclosure management, "
         "monitoring, incidents)", "it needs organisational evidence, which the model and its data do not hold"),
)

_MEMBERSHIP = ("11.3.3", "membership inference", "AML.T0024.000", "8.2.2", "8.2.3")
#: attribute inference and reconstruction, with ISO/IEC 27559's adversarial testing
_INVERSION = ("C11.4", "data reconstruction", "AML.T0024.001", "8.2.3")

CHECKS: tuple[CheckMapping, ...] = (
    CheckMapping("membership.blind_baseline.auc", "membership inference", (),
                 "whether the member and non-member texts differ by themselves, without the model: whether the "
                 "held-out data AISVS 11.3.3 compares against is comparable",
                 "nothing of the model: it is the precondition of the attacks' checks, not an attack, so it evidences "
                 "no item itself"),
    CheckMapping("membership.*.auc", "membership inference", _MEMBERSHIP,
                 "whether an attack's AUC is shown below (or above) the policy's max_auc at the stated confidence: "
                 "11.3.3's 'does not meaningfully exceed random guessing' with 'meaningfully' set by the policy; "
                 "beside it (against_chance), the control's own quantity: the attack's accuracy and its advantage "
                 "over random guessing (TPR - FPR) on held-out records, with intervals",
                 "attacks leakaudit does not run; an AUC says little of the few records an attack singles out (the "
                 "TPR at a low FPR does)"),
    CheckMapping("membership.*.tpr_at_low_fpr", "membership inference", _MEMBERSHIP,
                 "whether an attack's TPR at the policy's low FPR is shown below its threshold: the records an "
                 "attack identifies confidently",
                 "attacks leakaudit does not run; FPRs below the one checked"),
    CheckMapping("membership.*.epsilon", "membership inference", ("12.3.2",) + _MEMBERSHIP[1:4],
                 "an empirical lower bound on epsilon from an attack's error rates at the stated confidence, "
                 "against the declared epsilon_budget",
                 "an upper bound: a small lower bound says nothing of the true epsilon (the check shows leakage "
                 "only)"),
    CheckMapping("dtp.dtp1", "membership inference", ("membership inference", "8.2.2"),
                 "each measured member's leave-one-out influence on the model's output (PDTP, Long et al.) against "
                 "max_dtp: the per-record exposure a membership attack exploits",
                 "an attack simulation (AISVS 11.3.3 asks for one) or an inference-API technique; with repeated "
                 "records, the influence of a record that is not unique (see duplicates)"),
    CheckMapping("attribute.*.advantage", "attribute inference", _INVERSION,
                 "whether the model lets an adversary infer a sensitive column of a known record better than the "
                 "no-model baseline, against max_attribute_advantage",
                 "reconstruction of whole records, or of columns not named sensitive; no AISVS 1.0 control asks "
                 "for this test (C11.4's controls are defences)"),
    CheckMapping("dp.one_run", None, ("12.3.2", "8.2.2"),
                 "a one-run audit's epsilon lower bound at the stated confidence against the claimed epsilon",
                 "an upper bound on epsilon; the model itself (it audits the DP-SGD recipe)"),
    CheckMapping("dp.noise_check", None, ("12.3.2",),
                 "the epsilon implied by each DP-SGD step's measured noise against the claimed epsilon",
                 "an upper bound on epsilon; the model itself (it audits the DP-SGD recipe)"),
    CheckMapping("structural.instance_based", "reconstruction and regurgitation", ("C11.4", "data reconstruction"),
                 "whether the model file keeps training records verbatim, recoverable by whoever holds it",
                 "reconstruction from the model's outputs (an inference-API technique), which no check runs"),
    CheckMapping("structural.leaf_size", None, (),
                 "a risk factor: the smallest tree leaf in training records, against min_leaf_records",
                 "any standard's control: no item of AISVS 1.0, NIST AI 100-2e2025 or ATLAS names it"),
    CheckMapping("structural.parameters_per_record", None, (),
                 "a risk factor: the model's parameters per training record, against max_parameters_per_record",
                 "any standard's control: no item of AISVS 1.0, NIST AI 100-2e2025 or ATLAS names it"),
    CheckMapping("extraction.suffixes.rate_difference", "reconstruction and regurgitation",
                 ("C11.4", "data reconstruction", "AML.T0057", "8.2.3"),
                 "whether the members' suffixes are (n, p)-extractable from their prefixes under the stated sampler "
                 "more often than the non-members' (Hayes et al. 2024): training text a prompt can draw out",
                 "extraction without the members' own prefixes (untargeted generation), or of text the audit was "
                 "not given"),
    CheckMapping("dataset_inference.set_test", "membership inference",
                 ("membership inference", "AML.T0024.000", "8.2.3"),
                 "whether the members, as a set, were used to train the language model (Maini et al. 2024)",
                 "any one record's membership (AISVS 11.3.3 is per record)"),
)

CLASSES: tuple[ClassMapping, ...] = (
    ClassMapping("membership inference", _MEMBERSHIP),
    ClassMapping("attribute inference", _INVERSION),
    ClassMapping("reconstruction and regurgitation", ("C11.4", "data reconstruction", "AML.T0057", "8.2.3")),
    ClassMapping("model inversion", _INVERSION),
    ClassMapping("extraction", ("C11.5", "model extraction", "AML.T0024.002")),
)

_BY_ID = {i.id: i for i in ITEMS}


class ClassStandards(BaseModel):
    """The items an attack class (or a check) falls under, by standard: evidence.json's ``standards`` of an attack
    class."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    aisvs: list[str]
    nist_ai_100_2: list[str]
    atlas: list[str]
    iso_27559: list[str]


class CheckStandards(ClassStandards):
    """evidence.json's ``standards`` of a check: the items it evidences, what it shows of them, what it does not."""

    shows: str
    not_shown: str = Field(min_length=1)


class ItemStatus(BaseModel):
    """evidence.json's entry for one item of a standard in one audit."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    standard: Standard
    id: str
    title: str
    status: Literal["tested", "not applicable", "not evaluable", "not tested"]
    finding: Optional[Literal["met", "not met", "undecided"]] = None
    checks: list[str]
    reason: str = Field(min_length=1)
    against_chance: Optional[dict[str, dict]] = None


def check_mapping(check_id: str) -> CheckMapping | None:
    """The first mapping whose pattern matches ``check_id``, or None (a check of a registered analysis)."""
    return next((m for m in CHECKS if fnmatchcase(check_id, m.pattern)), None)


_KEYS = {"OWASP AISVS 1.0": "aisvs", "NIST AI 100-2e2025": "nist_ai_100_2", "MITRE ATLAS": "atlas",
         "ISO/IEC 27559:2022": "iso_27559"}


def _by_standard(ids) -> dict:
    return {key: [i for i in ids if _KEYS[_BY_ID[i].standard] == key] for key in _KEYS.values()}


def check_standards(check_id: str) -> dict:
    """What the evidence record says of one check: the items it evidences by standard, what it shows of them and
    what it does not."""
    m = check_mapping(check_id)
    if m is None:
        return CheckStandards(**_by_standard(()), shows="", not_shown="a check of an analysis registered from "
                              "outside leakaudit: leakaudit maps no standard to it").model_dump()
    return CheckStandards(**_by_standard(m.items), shows=m.shows, not_shown=m.not_shown).model_dump()


def class_standards(attack_class: str) -> dict:
    """The items an attack class of the evidence record falls under, by standard."""
    m = next((c for c in CLASSES if c.attack_class == attack_class), None)
    return ClassStandards(**_by_standard(m.items if m else ())).model_dump()


def _not_applicable(item: str, results: dict, release: str | None) -> str | None:
    """Why an item does not apply to this audit, or None."""
    cfg, text = results.get("config") or {}, (results.get("data") or {}).get("kind") == "text"
    if item == "12.3.2" and cfg.get("epsilon_budget") is None and cfg.get("claimed_epsilon") is None:
        return ("no epsilon was declared (epsilon_budget, claimed_epsilon): the control compares an epsilon lower "
                "bound with a declared budget")
    if item in ("C11.5", "model extraction", "AML.T0024.002") and release == "weights":
        return "the model file is published: there is no model left to extract by querying it"
    if item == "AML.T0057" and not text:
        return "not a language model: the technique is a language model's prompted leakage"
    if item == "property inference" and text:
        return "the records are texts, with no attribute columns whose share could be inferred"
    return None


def finding(statuses: list[str]) -> str | None:
    """Whether what was tested is met, from the statuses of the checks behind it: "not met" when one is exceeded,
    "met" when every one is shown below its threshold, else "undecided"; None without a check (nothing to meet)."""
    if not statuses:
        return None
    return "not met" if "exceeded" in statuses else "met" if set(statuses) == {"shown below"} else "undecided"


def item_statuses(results: dict, checks: list[dict], classes: list[dict], release: str | None) -> list[dict]:
    """Each item of :data:`ITEMS` for one audit: "tested" (with the measured checks behind it), "not applicable",
    "not evaluable" (an item no audit of a model can speak to: :attr:`Item.not_evaluable`) or "not tested", each with
    the reason.

    An item is tested when a check that evidences it was measured (not "not measurable"), whatever it found; its
    ``finding`` (:func:`finding`) says whether it is met; NIST's property inference also when the property
    analysis ran (it makes no check, so no finding). Otherwise the reason is the first untested attack class's,
    among the classes the item falls under, or that no check of leakaudit evidences it. A tested item that
    membership attacks evidence (AISVS 11.3.3 among them) gives each attack's ``against_chance`` (results.json's
    accuracy and advantage over random guessing, with intervals).
    """
    measured = [c["id"] for c in checks if c.get("status") != "not measurable"]
    by_class = {c["class"]: c for c in classes}
    out = []
    for item in ITEMS:
        na = _not_applicable(item.id, results, release)
        hits = [cid for cid in measured if item.id in (check_mapping(cid).items if check_mapping(cid) else ())]
        entry = {"standard": item.standard, "id": item.id, "title": item.title}
        if item.not_evaluable is not None:
            out.append({**entry, "status": "not evaluable", "checks": [], "reason": item.not_evaluable})
        elif na is not None:
            out.append({**entry, "status": "not applicable", "checks": [], "reason": na})
        elif hits:
            status = {c["id"]: c.get("status") for c in checks}
            attacks = dict.fromkeys(h.split(".")[1] for h in hits if h.startswith("membership."))
            chance = {a: (results.get("membership") or {}).get(a, {}).get("against_chance") for a in attacks}
            out.append({**entry, "status": "tested", "finding": finding([status[h] for h in hits]), "checks": hits,
                        "reason": "; ".join(dict.fromkeys(check_mapping(h).shows for h in hits)),
                        "against_chance": {a: v for a, v in chance.items() if v} or None})
        elif item.id == "property inference" and results.get("property"):
            out.append({**entry, "status": "tested", "checks": [],
                        "reason": "the property analysis estimated each sensitive group's share of the training "
                                  "data (it reports, it makes no check)"})
        else:
            why = next((by_class[c.attack_class]["reason"] for c in CLASSES
                        if item.id in c.items and c.attack_class in by_class
                        and by_class[c.attack_class]["status"] != "tested"), None)
            out.append({**entry, "status": "not tested", "checks": [],
                        "reason": why or "none of this audit's measured checks evidences it"})
    return [ItemStatus(**e).model_dump() for e in out]


#: the recipient each release context names: whose means the identifiability of the records is judged from
_RECIPIENTS = {
    "weights": "whoever obtains the model file (anyone, once it is published), with the model's parameters",
    "scores": "whoever can query the served model and read the class scores it returns",
    "labels": "whoever can query the served model and read the labels it returns",
}


def identifiability_basis(release: str | None) -> str:
    """The recipient, named by the release context, as the basis of the identifiability judgment."""
    basis = ("Identifiability is judged from the means of the recipient (EDPB Opinion 28/2024 on AI models: the "
             "means reasonably likely to be used to extract personal data from the model; CJEU, 4 September 2025, "
             "EDPS v SRB, C-413/23 P: whether data are personal for a recipient depends on that recipient's "
             "means). ")
    if release is None:
        return basis + ("No release context was declared, so no recipient is stated: the analyses assume a "
                        "recipient who reads the model's class scores, and the judgment has no declared basis.")
    return basis + f"The recipient here is {_RECIPIENTS[release]} (release {release})."
