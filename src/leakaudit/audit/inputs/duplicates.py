"""Repeated records among the audited ones: exact and near duplicates among the members, and between members and
non-members.

An audit without a privacy unit takes every row for a different person. Rows that repeat break that: a member
whose row is also among the non-members cannot be told apart from it by any attack (the same input gives the
same output), so its membership is undecidable and the attacks look weaker than they are; a member repeated among
the members is not removed by PDTP's or DTP-1's leave-one-out (its copies stay in the training data), so its
per-record figures describe a record that is not unique and understate what the model learnt of it. This analysis
counts them; it makes no check (the verdict's family is unchanged) and writes a ``duplicates`` section.

Definitions, on the records as the audit read them (every column, the label included, compared by value; a
missing value equals a missing value):

* **exact duplicates** (copies): records equal in every column, a decimal (floating-point) number equal to any within
  rounding of it (relative 1e-6: ``|a - b| <= 1e-6 * min(|a|, |b|)``, so a value and the same value times 1 + 1e-9
  are one value; zero only equals zero), integers and words exactly; records linked by a chain of such pairs are one
  group;
* **near duplicates**: records with the same label that differ in exactly one feature column (Hamming distance 1
  over the feature columns, values as read), by any amount; a record counted among the exact duplicates is not
  counted again among the near ones.

Cost: one 64-bit hash per column and record (:func:`pandas.util.hash_pandas_object`), combined into a row key;
records equal as read share a row key. Copies within rounding are sought among the distinct records whose other
columns are equal (:func:`_copy_keys`): one sort per numeric column splits those groups where consecutive values
are not within rounding, until no column splits one, and only the pairs left in a group are compared. For each
feature column the key with that column left out buckets the records equal in every other column (a sort per
column), among the records that can have a near duplicate at all (those that share half their columns with
another): at most O(n d log n) for n records of d columns, no comparison of every pair. Two different rows share a
64-bit key with probability about 2**-64 per pair (about 1e-10 for 50,000 records).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..result.checks import Analysis
from ..config import phrase

__all__ = ["Duplicates", "row_keys", "find_duplicates", "duplicates_analysis"]

#: odd 64-bit multipliers of splitmix64's finalizer (Steele, Lea and Flood 2014), which spreads a column's hash
_MIX = (np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB))


def _mixed(h: np.ndarray, column: int) -> np.ndarray:
    """A column's value hashes, salted by the column's position and spread over 64 bits, so that summing them
    over the columns gives a row key that depends on which column holds which value."""
    with np.errstate(over="ignore"):
        z = h + np.uint64(column + 1) * np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * _MIX[0]
        z = (z ^ (z >> np.uint64(27))) * _MIX[1]
    return z ^ (z >> np.uint64(31))


def _column_hashes(frame: pd.DataFrame, columns: list[int]):
    """``(j, hashes)`` for each column position ``j`` of ``columns``: its values' hashes, mixed (:func:`_mixed`).
    Numeric columns of one dtype are hashed together, as one array (a table of thousands of columns costs one
    call, not thousands); the others one at a time."""
    by_dtype: dict = {}
    dtypes = list(frame.dtypes)
    for j in columns:
        dt = dtypes[j]
        if pd.api.types.is_numeric_dtype(dt) and not pd.api.types.is_extension_array_dtype(dt):
            by_dtype.setdefault(dt, []).append(j)
        else:
            yield j, _mixed(pd.util.hash_pandas_object(frame.iloc[:, j], index=False).to_numpy(), j)
    for dt, js in by_dtype.items():
        block = frame.iloc[:, js].to_numpy(dtype=dt)
        hashed = pd.util.hash_array(block.ravel(order="F")).reshape(len(js), len(frame))
        for j, h in zip(js, hashed):
            yield j, _mixed(h, j)


#: relative difference within which two numbers are one value (module docstring)
RTOL = 1e-6


def _is_number(dtype) -> bool:
    """Whether a column of ``dtype`` is compared within rounding: floating point (integers and booleans are exact:
    no rounding made 1,000,001 of 1,000,000)."""
    return pd.api.types.is_float_dtype(dtype)


def _close(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Whether numbers are one value within rounding, a missing value equal to a missing value."""
    with np.errstate(invalid="ignore"):
        return (a == b) | (np.abs(a - b) <= RTOL * np.minimum(np.abs(a), np.abs(b))) | (np.isnan(a) & np.isnan(b))


def _copy_keys(frame: pd.DataFrame, key: np.ndarray, fixed: np.ndarray) -> np.ndarray:
    """``key`` (the row keys) with each group of copies within rounding given one key (one of its records').

    ``fixed``: the row key over the columns compared exactly. Among the distinct records, a group of equal
    ``fixed`` is split, one numeric column at a time, where its values sorted are not within rounding of the next
    (in one column, values within rounding of each other are never split apart); this repeats until no column
    splits a group. A pair left is within rounding; in a larger group each pair is compared, every column."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    numeric = [j for j, dt in enumerate(frame.dtypes) if _is_number(dt)]
    _, rows, inverse = np.unique(key, return_index=True, return_inverse=True)
    cls = np.unique(fixed[rows], return_inverse=True)[1]
    live = np.flatnonzero(np.bincount(cls)[cls] > 1)  # distinct records (positions in ``rows``) that may have a copy
    split = bool(numeric)
    while split and len(live):
        split = False
        for j in numeric:
            v = frame.iloc[rows[live], j].to_numpy(np.float64, na_value=np.nan)
            order = np.lexsort((v, cls[live]))
            c, v = cls[live][order], v[order]
            new = np.r_[True, c[1:] != c[:-1]]
            n_before = int(new.sum())
            new[1:] |= ~_close(v[1:], v[:-1])
            cls[live[order]] = np.cumsum(new) - 1
            split |= int(new.sum()) > n_before
            live = live[np.bincount(cls[live])[cls[live]] > 1]
            if not len(live):
                break
    live = live[np.argsort(cls[live], kind="stable")]
    size = np.bincount(cls[live])[cls[live]]
    a, b = list(live[size == 2][0::2]), list(live[size == 2][1::2])  # a pair left together is within rounding
    big = live[size > 2]
    values = frame.iloc[rows[big], numeric].to_numpy(np.float64, na_value=np.nan)
    for i in range(len(big)):
        end = np.searchsorted(cls[big], cls[big[i]], side="right")  # the rest of its group: i + 1 to end
        linked = big[i + 1:end][_close(values[i + 1:end], values[i]).all(axis=1)]
        a += [big[i]] * len(linked)
        b += list(linked)
    if not a:
        return key
    _, comp = connected_components(coo_matrix((np.ones(len(a)), (a, b)), shape=(len(rows),) * 2), directed=False)
    _, first = np.unique(comp, return_index=True)  # each group's first distinct record (``rows`` is in key order)
    return key[rows[first[comp]]][inverse]


def _in_groups(keys: np.ndarray) -> np.ndarray:
    """Whether each key occurs more than once."""
    _, inverse, counts = np.unique(keys, return_inverse=True, return_counts=True)
    return counts[inverse] > 1


class Duplicates:
    """Exact and near duplicates among ``n_members`` members and between them and the non-members (the records
    of :func:`find_duplicates`, members first). Arrays are boolean masks over the members or the non-members.

    Attributes
    ----------
    member_exact : ndarray of shape (n_members,)
        Members equal in every column to another member.
    member_copies : int
        Members beyond the first of each group of identical members (``n_members`` minus the distinct ones).
    member_groups, largest_group : int
        Groups of two or more identical members, and the largest group's size (1 when none repeats).
    cross_exact_members, cross_exact_nonmembers : ndarray
        Members equal to a non-member, and non-members equal to a member.
    member_near, cross_near_members, cross_near_nonmembers : ndarray
        The same for near duplicates (one feature column differs, the label equal), those already exact excluded.
    """

    def __init__(self, n_members: int, key: np.ndarray, near=(), candidates: np.ndarray | None = None):
        """``key``: each record's row key; ``near``: for each feature column, the row key without it, of the
        records ``candidates`` (indexes; default: every record), the only ones that can have a near duplicate."""
        m = np.arange(len(key)) < n_members
        self.n_members, self.n_nonmembers = n_members, len(key) - n_members
        self.member_exact = _in_groups(key[m])
        uniq, counts = np.unique(key[m], return_counts=True)
        self.member_copies = int(n_members - len(uniq))
        self.member_groups = int((counts > 1).sum())
        self.largest_group = int(counts.max()) if len(counts) else 0
        self.cross_exact_members = np.isin(key[m], key[~m])
        self.cross_exact_nonmembers = np.isin(key[~m], key[m])
        cand = np.arange(len(key)) if candidates is None else candidates
        near_member, near_nonmember = np.zeros(len(key), bool), np.zeros(len(key), bool)
        for masked in near:
            a, b = _near_through(masked, key[cand], m[cand])
            near_member[cand] |= a
            near_nonmember[cand] |= b
        self.member_near = near_member[m] & ~self.member_exact
        self.cross_near_members = near_nonmember[m] & ~self.cross_exact_members
        self.cross_near_nonmembers = near_member[~m] & ~self.cross_exact_nonmembers

    def counts(self) -> dict[str, int]:
        """The counts results.json's ``duplicates`` section holds."""
        return {"n_members": self.n_members, "n_nonmembers": self.n_nonmembers,
                "members_repeated": int(self.member_exact.sum()), "member_copies": self.member_copies,
                "member_groups": self.member_groups, "largest_group": self.largest_group,
                "members_in_nonmembers": int(self.cross_exact_members.sum()),
                "nonmembers_in_members": int(self.cross_exact_nonmembers.sum()),
                "members_near": int(self.member_near.sum()),
                "members_near_nonmembers": int(self.cross_near_members.sum()),
                "nonmembers_near_members": int(self.cross_near_nonmembers.sum())}


def _near_through(masked: np.ndarray, key: np.ndarray, m: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Whether each record is near a member, and near a non-member (``m``: members), through one left-out column:
    ``masked`` is the row key without it, so a bucket of equal ``masked`` holds records equal in every other
    column, and two of its records with different row keys differ in that column alone."""
    order = np.lexsort((key, masked))
    mk, k, mem = masked[order], key[order], m[order]
    group = np.cumsum(np.r_[True, mk[1:] != mk[:-1]]) - 1
    a, b = np.empty(len(order), bool), np.empty(len(order), bool)
    a[order] = _other_key(group, k, mem)  # a member of another row key in the bucket
    b[order] = _other_key(group, k, ~mem)
    return a, b


def _other_key(group: np.ndarray, key: np.ndarray, side: np.ndarray) -> np.ndarray:
    """For records sorted by bucket (``group``) then ``key``: whether each record's bucket holds a record of
    ``side`` whose key differs from its own."""
    n_groups = int(group[-1]) + 1 if len(group) else 0
    idx = np.flatnonzero(side)
    g, k = group[idx], key[idx]
    first = np.r_[True, (g[1:] != g[:-1]) | (k[1:] != k[:-1])] if len(idx) else np.zeros(0, bool)
    n_keys = np.bincount(g[first], minlength=n_groups)  # distinct keys of ``side`` per bucket
    some = np.zeros(n_groups, dtype=key.dtype)
    some[g[first]] = k[first]  # one of them (the last written)
    return (n_keys[group] >= 2) | ((n_keys[group] == 1) & (some[group] != key))


def row_keys(frames: list[pd.DataFrame]) -> list[np.ndarray]:
    """Each table's row keys (the sum of its columns' mixed hashes), the tables read as one so that a value is
    hashed alike in all of them (an integer column in one table and a float column in another become one dtype):
    two records share a key when they are exact duplicates, as :func:`find_duplicates` defines them."""
    frame = pd.concat(frames, ignore_index=True)
    key, fixed = np.zeros(len(frame), np.uint64), np.zeros(len(frame), np.uint64)
    for j, h in _column_hashes(frame, list(range(frame.shape[1]))):
        key += h
        if not _is_number(frame.dtypes.iloc[j]):
            fixed += h
    return np.split(_copy_keys(frame, key, fixed), np.cumsum([len(f) for f in frames])[:-1])


def find_duplicates(members: pd.DataFrame, nonmembers: pd.DataFrame, *, label: str) -> Duplicates:
    """Exact and near duplicates (module docstring) among ``members`` and between them and ``nonmembers``.

    Parameters
    ----------
    members, nonmembers : pandas.DataFrame
        The records, with the same columns in the same order, ``label`` among them.
    label : str
        The label column: part of an exact duplicate's row, and equal between near duplicates.

    Two near duplicates differ in one feature column, so they agree on the half of the feature columns that does
    not hold it: only records that share the key of the first half (or of the second, the label in both) with
    another record can have one, and the columns are left out one at a time among those alone.
    """
    frame = pd.concat([members, nonmembers], ignore_index=True)
    cols = list(frame.columns)
    features = [j for j, c in enumerate(cols) if c != label]
    first_half = set(features[:len(features) // 2])
    key, fixed, first, second = (np.zeros(len(frame), np.uint64) for _ in range(4))
    for j, h in _column_hashes(frame, list(range(len(cols)))):
        key += h
        if not _is_number(frame.dtypes.iloc[j]):
            fixed += h
        if cols[j] == label or j in first_half:
            first += h
        if cols[j] == label or j not in first_half:
            second += h
    candidates = np.flatnonzero(_in_groups(first) | _in_groups(second))
    near = (key[candidates] - h for _, h in _column_hashes(frame.iloc[candidates], features))
    return Duplicates(len(members), _copy_keys(frame, key, fixed), near, candidates)


#: the definitions in one line, as results.json's section states them
DEFINITION = ("exact: equal in every column, the label included, decimals within rounding (relative 1e-6: |a - b| "
              "<= 1e-6 min(|a|, |b|)); near: the same label and exactly one feature column different (by any "
              "amount, other columns equal as read), not already exact; a missing value equal to a missing value")


#: how the sentence says what "identical" allows
_ROUNDING = "within rounding (relative 1e-6)"


def _n(k: int, one: str, many: str | None = None) -> str:
    return f"{k:,} {one if k == 1 else (many or one + 's')}"


def _sentence(c: dict) -> str:
    """What the counts do to the per-record figures, in words."""
    n1, n0 = c["n_members"], c["n_nonmembers"]
    exact = c["members_repeated"] or c["members_in_nonmembers"]
    near = (f"{_n(c['members_near'], 'member')} {'has' if c['members_near'] == 1 else 'have'} a near duplicate (the "
            f"same label, one column different) among the members and {_n(c['members_near_nonmembers'], 'member')} "
            "among the non-members")
    if not exact:
        return (f"No two of the {n1:,} members are identical (every column equal, decimals {_ROUNDING}) and none "
                f"is identical to one of the {n0:,} non-members, so each per-record figure refers to a unique "
                f"record; {near}"
                + ("." if not (c["members_near"] or c["members_near_nonmembers"]) else
                   ": such a member's PDTP and DTP-1 understate what the model learnt of it, as its near twin "
                   "teaches the model much the same."))
    parts = []
    if c["members_repeated"]:
        parts.append(f"{_n(c['members_repeated'], 'member')} of the {n1:,} {'is' if c['members_repeated'] == 1 else 'are'}"
                     f" repeated among the members ({_n(c['member_groups'], 'group')} of identical records, decimals "
                     f"{_ROUNDING}, the largest of {c['largest_group']:,}; "
                     f"{_n(c['member_copies'], 'copy', 'copies')} beyond the "
                     "first of each): their PDTP and DTP-1 refer to a record that is not unique (leaving one copy "
                     "out leaves the others in the training data, so the figures understate what the model learnt "
                     "of it)")
    if c["members_in_nonmembers"]:
        parts.append(f"{_n(c['members_in_nonmembers'], 'member')} {'is' if c['members_in_nonmembers'] == 1 else 'are'}"
                     f" identical to {_n(c['nonmembers_in_members'], 'non-member')} (every column equal, decimals "
                     f"{_ROUNDING}): their membership is undecidable (the same record is on both sides, so every "
                     "attack gives both the same score) and the attacks look weaker than they are")
    return "; ".join(parts) + f"; {near}."


#: what removes the exact duplicates' effect on the per-record figures
FIX = phrase("keep one copy of each repeated member, drop the non-members identical to a member ({0}), retrain and "
             "audit again; if the repeats are one person's rows, that person's exposure is the group's, not one "
             "row's", "records")


def duplicates_analysis(ctx, done=None) -> Analysis:
    """The audit's ``duplicates`` section: the counts of :class:`Duplicates`, their effect in words, what would
    remove it, and up to five of the members concerned by name."""
    data = ctx.data
    # the records' feature columns and their labels (as class codes: equal labels, equal codes)
    frames = [f.assign(**{data.label: y}) for f, y in ((data.frame_mem, data.y_mem), (data.frame_non, data.y_non))]
    d = find_duplicates(*frames, label=data.label)
    c = d.counts()
    concerned = np.flatnonzero(d.member_exact | d.cross_exact_members)
    sentence = _sentence(c)
    unit = getattr(data, "unit", None)
    if unit is not None and (c["members_repeated"] or c["members_near"]):
        sentence += (f" With the privacy unit {unit!r}, PDTP and DTP-1 leave out all of a unit's rows, so copies "
                     "within one unit leave together; copies in different units still understate each unit's figure.")
    summary = {"definition": DEFINITION, **c, "sentence": sentence,
               **({"fix": FIX} if c["members_repeated"] or c["members_in_nonmembers"] else {}),
               "examples": ctx.names(concerned[:5])}
    return Analysis(name="duplicates", summary=summary)
