"""Exact and near duplicates among the audited records (leakaudit.audit.inputs.duplicates): planted ones are recovered
exactly, none are found where there are none, and the section, stdout and report say what they do."""

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from leakaudit.audit.inputs.duplicates import duplicates_analysis, find_duplicates
from leakaudit.audit.result.sections import DuplicatesSection


def _distinct(n, rng):
    """``n`` records no two of which are equal or near (every feature column continuous, drawn afresh)."""
    return pd.DataFrame({"x1": rng.normal(size=n), "x2": rng.normal(size=n),
                         "c": rng.choice(["a", "b", "c"], n), "x3": rng.normal(size=n),
                         "y": rng.integers(0, 2, n)})


def _planted(seed=0, n1=400, n0=300):
    """Members and non-members with known duplicates, and the counts they must give: 6 members copied once and 2
    copied twice among the members, 5 members copied into the non-members, 7 members with a near twin (one feature
    column changed) among the members and 4 among the non-members, and 3 copies whose label differs (neither exact
    nor near duplicates)."""
    rng = np.random.default_rng(seed)
    mem, non = _distinct(n1, rng), _distinct(n0, rng)
    rows = rng.permutation(n1)
    once, twice, cross, near_m, near_c, other_label = (rows[:6], rows[6:8], rows[8:13], rows[13:20], rows[20:24],
                                                       rows[24:27])
    nudged = mem.iloc[near_m].copy()
    nudged["x2"] += 1.0  # one feature column differs
    wrong = mem.iloc[other_label].copy()
    wrong["y"] = 1 - wrong["y"]  # every feature equal, the label not: not a near duplicate
    members = pd.concat([mem, mem.iloc[once], mem.iloc[twice], mem.iloc[twice], nudged, wrong], ignore_index=True)
    twin = mem.iloc[near_c].copy()
    twin["c"] = "z"
    nonmembers = pd.concat([non, mem.iloc[cross], twin], ignore_index=True)
    truth = {"members_repeated": 6 * 2 + 2 * 3, "member_copies": 6 + 2 * 2, "member_groups": 8, "largest_group": 3,
             "members_in_nonmembers": 5, "nonmembers_in_members": 5, "members_near": 7 * 2,
             "members_near_nonmembers": 4, "nonmembers_near_members": 4}
    return members, nonmembers, truth


def test_planted_duplicates_are_recovered_exactly():
    members, nonmembers, truth = _planted()
    counts = find_duplicates(members, nonmembers, label="y").counts()
    assert {k: counts[k] for k in truth} == truth
    assert counts["n_members"] == len(members) and counts["n_nonmembers"] == len(nonmembers)


def test_no_duplicates_found_where_there_are_none():
    rng = np.random.default_rng(1)
    counts = find_duplicates(_distinct(500, rng), _distinct(500, rng), label="y").counts()
    assert all(v == 0 for k, v in counts.items() if k not in ("n_members", "n_nonmembers", "largest_group"))
    assert counts["largest_group"] == 1


@pytest.mark.parametrize("seed", range(4))
def test_agrees_with_comparing_every_pair(seed):
    """On small tables of few values (many duplicates of both kinds), the masks equal a pairwise comparison."""
    rng = np.random.default_rng(seed)
    n1, n0 = rng.integers(5, 30, 2)
    df = pd.DataFrame({"a": rng.integers(0, 2, n1 + n0), "b": rng.choice(["x", "y"], n1 + n0),
                       "c": rng.integers(0, 3, n1 + n0).astype(float), "y": rng.integers(0, 2, n1 + n0)})
    d = find_duplicates(df.iloc[:n1], df.iloc[n1:], label="y")
    A = df.to_numpy(object)
    same = np.array([[(A[i] == A[j]).all() for j in range(len(A))] for i in range(len(A))])
    near = np.array([[(A[i, :3] != A[j, :3]).sum() == 1 and A[i, 3] == A[j, 3] for j in range(len(A))]
                     for i in range(len(A))])
    np.fill_diagonal(same, False)
    M, N = slice(0, n1), slice(n1, None)
    assert (d.member_exact == same[M, M].any(1)).all()
    assert (d.cross_exact_members == same[M, N].any(1)).all()
    assert (d.cross_exact_nonmembers == same[N, M].any(1)).all()
    assert (d.member_near == (near[M, M].any(1) & ~d.member_exact)).all()
    assert (d.cross_near_members == (near[M, N].any(1) & ~d.cross_exact_members)).all()
    assert (d.cross_near_nonmembers == (near[N, M].any(1) & ~d.cross_exact_nonmembers)).all()
    assert d.member_copies == n1 - len({tuple(r) for r in A[:n1]})


def _ctx(members, nonmembers):
    """What the analysis reads of an audit's context: its records (features apart from the label) and names."""
    def split(f):
        return f.drop(columns="y").reset_index(drop=True), f["y"].to_numpy()

    (fm, ym), (fn, yn) = split(members), split(nonmembers)
    data = SimpleNamespace(frame_mem=fm, frame_non=fn, y_mem=ym, y_non=yn, label="y")
    return SimpleNamespace(data=data, names=lambda idx: [f"train.csv, row {int(i) + 1}" for i in idx])


def test_the_section_says_what_the_duplicates_do_and_how_to_remove_it():
    from leakaudit.cli.audit import summary_lines

    members, nonmembers, truth = _planted()
    sec = DuplicatesSection.model_validate(duplicates_analysis(_ctx(members, nonmembers)).summary)
    assert {k: sec[k] for k in truth} == truth
    assert "18 members of the 420 are repeated" in sec.sentence and "not unique" in sec.sentence
    assert ("5 members are identical to 5 non-members (every column equal, decimals within rounding (relative 1e-6)): "
            "their membership is undecidable") in sec.sentence
    assert "keep one copy of each repeated member" in sec.fix and sec.fix_parts.settings[0].key == "records"
    assert len(sec.examples) == 5 and sec.examples[0].startswith("train.csv, row ")
    assert "fix" in sec.to_dict() and "--train / --test" in sec.said("fix", flags=True)

    class R:  # stdout ends with the duplicates line, the fix in the command line's words
        verdict = SimpleNamespace(outcome="publish", finding="all checks were measured.", checks=[],
                                  burden_of_proof="leakage shown", policy="leakage-shown", counts={})
        skipped, duplicates = [], sec

    line = summary_lines(R)[-1]
    assert line.startswith("duplicates: 18 members of the 420") and "To remove their effect: keep one" in line
    assert "--train / --test" in line

    rng = np.random.default_rng(2)
    none = DuplicatesSection.model_validate(duplicates_analysis(_ctx(_distinct(50, rng), _distinct(50, rng))).summary)
    assert none.sentence.startswith("No two of the 50 members are identical") and not none.fix
    assert "fix" not in none.to_dict() and none.examples == []


@pytest.mark.slow
def test_an_audit_reports_its_duplicates_everywhere(tmp_path):
    """A whole audit of records with planted duplicates: results.json, evidence.json, the report and stdout."""
    import json

    from sklearn.linear_model import LogisticRegression

    import leakaudit
    from leakaudit.cli.audit import summary_lines

    members, nonmembers, truth = _planted(n1=300, n0=300)
    feats = ["x1", "x2", "x3"]
    model = LogisticRegression().fit(members[feats], members["y"])
    res = leakaudit.audit(model, members[feats + ["y"]], nonmembers[feats + ["y"]], label="y", profile="smoke",
                          random_state=0)
    out = res.save(tmp_path / "run")
    saved = json.loads((out / "results.json").read_text())["duplicates"]
    # without the column c, the 4 near twins that differ in c alone are exact copies of members
    assert saved["members_in_nonmembers"] == truth["members_in_nonmembers"] + 4
    ev = json.loads((out / "evidence.json").read_text())
    assert ev["duplicates"]["members_repeated"] == saved["members_repeated"] > 0
    assert "Duplicates among the records" in (out / "report.html").read_text()
    assert any(line.startswith("duplicates: ") for line in summary_lines(res))


def test_the_overlap_refusal_and_the_duplicates_section_use_one_definition_of_identical():
    """The refusal of non-members that copy the members reads the duplicates section's row keys: a copy whose
    integer column was read as float (a missing value elsewhere in its file) is still identical."""
    import pandas as pd
    import pytest

    from leakaudit.audit.inputs.data import _check_overlap
    from leakaudit.audit.inputs.duplicates import find_duplicates, row_keys
    from leakaudit.exceptions import InvalidInputError

    mem = pd.DataFrame({"age": [30, 41, 52], "job": ["a", "b", "c"], "y": [0, 1, 0]})
    non = mem.astype({"age": float})
    k_mem, k_non = row_keys([mem, non])
    assert (k_mem == k_non).all()
    assert find_duplicates(mem, non, label="y").counts()["members_in_nonmembers"] == 3
    with pytest.raises(InvalidInputError, match="identical to one of the members"):
        _check_overlap([mem, non], ["members", "non-members"])


def _scaled(frame, factor, columns=("x1", "x2", "x3")):
    return frame.assign(**{c: frame[c] * factor for c in columns})


def test_copies_within_rounding_are_copies_and_a_thousandth_is_not():
    """Non-members equal to members times 1 + 1e-9 (another float path, a round trip through text) are copies, as
    exact ones are: counted, and refused when they are all the non-members; times 1 + 1e-3 they are other records
    (a near duplicate when one column alone differs)."""
    from leakaudit.audit.inputs.data import DuplicateRecordsWarning, _check_overlap
    from leakaudit.exceptions import InvalidInputError

    rng = np.random.default_rng(3)
    mem, non = _distinct(200, rng), _distinct(100, rng)
    counts = find_duplicates(mem, pd.concat([non, _scaled(mem.iloc[:30], 1 + 1e-9)]), label="y").counts()
    assert counts["members_in_nonmembers"] == counts["nonmembers_in_members"] == 30
    assert counts["members_near_nonmembers"] == 0
    with pytest.raises(InvalidInputError, match=r"every record of the non-members \(200 of 200\) is identical"):
        _check_overlap([mem, _scaled(mem, 1 + 1e-9)], ["members", "non-members"])
    with pytest.warns(DuplicateRecordsWarning, match="30 of the 130 records"):
        _check_overlap([mem, pd.concat([non, _scaled(mem.iloc[:30], 1 - 1e-9)])], ["members", "non-members"])

    far = find_duplicates(mem, pd.concat([non, _scaled(mem.iloc[:30], 1 + 1e-3)]), label="y").counts()
    assert far["members_in_nonmembers"] == far["members_near_nonmembers"] == 0
    one = find_duplicates(mem, pd.concat([non, _scaled(mem.iloc[:30], 1 + 1e-3, ["x2"])]), label="y").counts()
    assert one["members_in_nonmembers"] == 0 and one["members_near_nonmembers"] == 30
    sec = duplicates_analysis(_ctx(mem, _scaled(mem.iloc[:30], 1 + 1e-9))).summary
    assert "30 members are identical to 30 non-members (every column equal, decimals within rounding (relative " \
           "1e-6))" in sec["sentence"]


def test_integers_are_compared_exactly():
    """Rounding makes no integer of another: counts of 1,000,000 and 1,000,001 are other records, 1,000,000 read as
    an integer in one file and as the float 1e6 in the other one record."""
    mem = pd.DataFrame({"n": [1_000_000, 2_000_000], "y": [0, 1]})
    assert find_duplicates(mem, mem.assign(n=mem["n"] + 1), label="y").counts()["members_in_nonmembers"] == 0
    assert find_duplicates(mem, mem.assign(n=mem["n"] * (1 + 1e-12)), label="y").counts()["members_in_nonmembers"] == 2


def test_copies_straddling_a_rounding_boundary_are_found():
    """Values on either side of where rounding to a few digits would cut (1.2345649999995 and 1.2345650000004,
    9.9999999995 and 10.0000000004, -0.5 +- 1e-12) are one value; zero equals only zero, -0.0 included, and a
    value never equals its negative."""
    mem = pd.DataFrame({"a": [1.2345649999995, 9.9999999995, -0.5 - 1e-12, 0.0, 7.0, 3.0],
                        "b": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0], "c": list("pqrstu"), "y": [0, 1, 0, 1, 0, 1]})
    non = pd.DataFrame({"a": [1.2345650000004, 10.0000000004, -0.5 + 1e-12, -0.0, 1e-300, -7.0, 3.0],
                        "b": [1.0, 2.0 * (1 + 9e-7), 3.0, 4.0, 4.0, 5.0, 6.0], "c": list("pqrsstu"),
                        "y": [0, 1, 0, 1, 1, 0, 1]})
    d = find_duplicates(mem, non, label="y")
    assert d.cross_exact_members.tolist() == [True, True, True, True, False, True]
    assert d.cross_exact_nonmembers.tolist() == [True, True, True, True, False, False, True]


@pytest.mark.parametrize("seed", range(3))
def test_copies_within_rounding_agree_with_comparing_every_pair(seed):
    """On tables whose numbers are a few values each shifted by less than rounding or by a thousandth (values
    within rounding of one another form cliques, so no chain links records that are not copies), the masks equal
    a comparison of every pair, whatever the order of the records."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(40, 80))

    def number(size):
        shift = rng.choice([0.0, 1e-9, -3e-7, 1e-3], size)
        return rng.choice([-2.5, 0.75, 1.0, 1e6], size) * (1 + shift)

    df = pd.DataFrame({"a": number(n), "b": rng.choice(["x", "y"], n), "c": number(n), "y": rng.integers(0, 2, n)})
    n1 = n // 2
    d = find_duplicates(df.iloc[:n1], df.iloc[n1:], label="y")
    A = df.to_numpy(object)

    def close(u, v):
        return u == v or abs(u - v) <= 1e-6 * min(abs(u), abs(v))

    same = np.array([[close(A[i, 0], A[j, 0]) and A[i, 1] == A[j, 1] and close(A[i, 2], A[j, 2]) and A[i, 3] == A[j, 3]
                      for j in range(n)] for i in range(n)])
    np.fill_diagonal(same, False)
    M, N = slice(0, n1), slice(n1, None)
    assert (d.member_exact == same[M, M].any(1)).all()
    assert (d.cross_exact_members == same[M, N].any(1)).all()
    assert (d.cross_exact_nonmembers == same[N, M].any(1)).all()
    assert d.cross_exact_members.any() and not d.cross_exact_members.all()


def test_a_chain_of_copies_within_rounding_is_one_group_and_large_tables_stay_fast():
    """Records linked pair by pair (each within rounding of the next, the ends not) are one group, whichever record
    comes first, and records within rounding in each column apart but not in all at once are not; and 200,000
    records of 20 columns (a fifth of them copies within rounding) take about a second."""
    import time

    chain = pd.DataFrame({"a": [1.0, 1 + 8e-7, 1 + 1.6e-6], "y": [0, 0, 0]})
    for order in ([0, 1, 2], [2, 0, 1], [1, 2, 0]):
        c = find_duplicates(chain.iloc[order], chain.iloc[:0], label="y").counts()
        assert (c["member_groups"], c["largest_group"], c["member_copies"]) == (1, 3, 2)
    # in each column, each value is within rounding of the next, but of the three pairs only (b, c) is in both
    crossed = pd.DataFrame({"a": [1.0, 1 + 6e-7, 1 + 1.2e-6], "b": [1 + 1.2e-6, 1.0, 1 + 6e-7], "y": [0, 0, 0]})
    d = find_duplicates(crossed, crossed.iloc[:0], label="y")
    assert d.member_exact.tolist() == [False, True, True] and d.counts()["largest_group"] == 2

    rng = np.random.default_rng(4)
    mem = pd.DataFrame(rng.normal(size=(100_000, 20)), columns=[f"x{i}" for i in range(20)]).assign(y=1)
    non = pd.concat([mem.iloc[:20_000] * (1 + 1e-9), pd.DataFrame(rng.normal(size=(80_000, 21)), columns=mem.columns)])
    start = time.process_time()
    c = find_duplicates(mem, non, label="y").counts()
    assert c["members_in_nonmembers"] == c["nonmembers_in_members"] == 20_000
    assert time.process_time() - start < 5  # about 1 s; comparing the 20,000 pairs one by one took 8
