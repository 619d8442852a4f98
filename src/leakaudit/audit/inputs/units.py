"""The privacy unit: rows grouped into the persons (or any groups) a privacy claim protects.

With a unit (``unit``, ``--unit``: a column of the members and non-members naming each row's person) the audit's
unit of membership is the person, not the row (NIST SP 800-226 asks every privacy claim to state its unit; a person
with several rows is protected only if the unit is the person):

* a membership attack's per-record scores are combined into one score per unit, the mean of its rows' scores
  (user-level membership inference; the simple, documented choice: a unit's score is the attack's average
  belief over its rows), and its metrics (AUC, TPR at low FPR, advantage, their intervals, the empirical epsilon)
  are computed over units;
* the reference models train on halves of the units, so a row is "in" exactly when the rest of its unit is;
* PDTP, the DTP-1 test and the removal analysis leave out all of a unit's rows: the model compared with the full
  one is trained without the unit (:func:`leakaudit.dtp.pdtp`'s ``groups``), measured at each of its rows, and a
  unit counts against DTP-1 when any of its rows does.

This module holds the arithmetic on unit codes (integers from :attr:`~leakaudit.audit.inputs.data.AuditData.unit_groups`,
members then non-members, no unit on both sides).
"""

from __future__ import annotations

import numpy as np

__all__ = ["unit_scores", "unit_membership", "rows_of_units", "units_of_rows", "member_units", "unit_names"]


def unit_scores(scores: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """Each unit's score: the mean of its rows' scores (NaN rows left out; NaN when all of a unit's rows are),
    shape (n_units,), unit ``u`` at position ``u``."""
    s = np.asarray(scores, dtype=np.float64)
    ok = np.isfinite(s)
    n_units = int(groups.max()) + 1
    total = np.bincount(groups[ok], weights=s[ok], minlength=n_units)
    count = np.bincount(groups[ok], minlength=n_units)
    # a row scored +-inf (a certain member or non-member) decides its unit's mean
    inf = np.bincount(groups[np.isinf(s)], weights=np.sign(s[np.isinf(s)]), minlength=n_units)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = total / count
    out[inf > 0], out[inf < 0] = np.inf, -np.inf
    return out


def unit_membership(groups: np.ndarray, n_members: int) -> np.ndarray:
    """1 for each unit whose rows are members, 0 for the others, shape (n_units,)."""
    m = np.zeros(int(groups.max()) + 1, dtype=int)
    m[groups[:n_members]] = 1
    return m


def units_of_rows(groups: np.ndarray, rows) -> np.ndarray:
    """The units (sorted, unique) of ``rows``."""
    return np.unique(groups[np.asarray(rows, dtype=np.int64)])


def rows_of_units(groups: np.ndarray, rows) -> np.ndarray:
    """Every row (sorted) of the units of ``rows``: leaving out a row with a unit leaves out its whole unit."""
    return np.flatnonzero(np.isin(groups, units_of_rows(groups, rows)))


def member_units(data) -> np.ndarray | None:
    """Each member's unit code (``data``: an :class:`~leakaudit.audit.inputs.data.AuditData`), None without a unit."""
    g = data.unit_groups
    return None if g is None else g[:len(data.y_mem)]


def unit_names(data, rows) -> list[str]:
    """The units of member ``rows``, by their ids as read (in code order, each once)."""
    g = member_units(data)
    first = {int(u): i for i, u in reversed(list(enumerate(g)))}
    return [str(data.units_mem[first[int(u)]]) for u in units_of_rows(g, rows)]
