"""When the verdict says "do not publish": the thresholds each check is judged against (the audit's settings and a
release policy's both hold them; :mod:`leakaudit.audit.config`, :mod:`leakaudit.audit.policy`)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["Thresholds"]


class Thresholds(BaseModel):
    """When the verdict says "do not publish". Each is checked against a measured value; where each default comes
    from: :data:`leakaudit.audit.policy.DEFAULT_POLICY`'s sources (docs/verdict.md, "The default policy")."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_dtp: float = Field(1.0, gt=0, description="DTP-1 rule (Long et al. §5): no training record above this "
                                                  "PDTP (nats).")
    max_records_above_dtp: int = Field(0, ge=0, description="How many records may exceed `max_dtp`.")
    max_unmeasured_dtp_share: float = Field(
        0.005, ge=0, lt=1, description="With many members (PDTP screened): the DTP-1 check passes only when its "
                                       "random sample bounds the unmeasured members above `max_dtp` at this share of "
                                       "the members or fewer (at least `max_records_above_dtp` records); else \"not "
                                       "measurable\" (see [verdict.md](verdict.md)).")
    low_fpr: float = Field(0.01, gt=0, lt=1, description="The false-positive rate at which each attack's TPR is "
                                                         "judged.")
    max_tpr_at_low_fpr: float = Field(0.05, gt=0, lt=1, description="Fail when an attack's TPR at `low_fpr` is above "
                                                                    "this with confidence (interval's lower end).")
    max_auc: float = Field(0.6, gt=0.5, le=1, description="Fail when an attack's AUC is above this with confidence.")
    max_attribute_advantage: float = Field(
        0.05, gt=0, lt=1, description="Fail when attribute inference beats the no-model baseline by more than this "
                                      "(interval's lower end).")
    max_extraction_rate_difference: float = Field(
        0.01, ge=0, lt=1, description="A language model's audit: fail when the share of members' suffixes that are "
                                      "(n, p)-extractable exceeds the non-members' share (the base rate) by more "
                                      "than this (interval's lower end; check `extraction.suffixes.rate_difference`).")
    min_leaf_records: int = Field(5, ge=1, description="With `release = \"weights\"`: every leaf of a tree in the "
                                                       "model must hold at least this many training records "
                                                       "(structural check `structural.leaf_size`).")
    max_parameters_per_record: float = Field(1.0, gt=0, description="With `release = \"weights\"`: fitted parameters "
                                                                    "allowed per training record (structural check "
                                                                    "`structural.parameters_per_record`).")
