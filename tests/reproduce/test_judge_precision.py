"""The match rule's ``precision``: a reference that is not a printed number (read off a plot, or derived from
printed numbers) is judged with its own precision instead of the printed rounding, and a page re-judges with it."""

from leakaudit.reproduce._judge import INCONCLUSIVE, judge_values
from leakaudit.reproduce._registry import rejudge, row
from leakaudit.reproduce._seeds import merge_seed_rows, seed_row

VALS = [0.810, 0.812, 0.815, 0.817, 0.813]  # interval about [0.8097, 0.8171]


def test_printed_rounding_alone_misses_a_plot_read_value():
    # 0.8 as printed carries 0.005: the interval's low end 0.8097 is further than that
    assert judge_values(0.8, VALS)[0] == "differs"


def test_precision_replaces_the_printed_rounding():
    assert judge_values(0.8, VALS, precision=0.025)[0] == "match"
    # a precision narrower than the printed rounding narrows too: 0.81 lies just below the interval [0.8100, 0.8168]
    # and 0.0034 from the mean, past a tolerance of 0; within the printed 0.005 of the mean, but the interval
    # reaches past 0.815, so the seeds cannot tell
    assert judge_values(0.81, VALS, precision=0.0)[0] == "differs"
    assert judge_values(0.81, VALS)[0] == INCONCLUSIVE
    assert judge_values(0.81, VALS, precision=0.01)[0] == "match"


def test_seed_rows_carry_the_precision_and_classify_uses_it(monkeypatch):
    from leakaudit._names import NameTable
    from leakaudit.reproduce import _registry as reg

    r = seed_row("q", 0.8, VALS, [0, 1, 2, 3, 4], precision=0.025)
    assert r.status == "match" and r.tolerance == 0.025 and r.precision == 0.025
    merged = merge_seed_rows([[row("q", 0.8, v, 0.1, precision=0.025)] for v in VALS], [0, 1, 2, 3, 4])
    assert merged[0].precision == 0.025 and merged[0].status == "match"
    monkeypatch.setattr(reg, "_REGISTRY", NameTable("reproduction"))
    reg.register("toy", version=1, paper="Toy", description="toy", references=((r"", "plot"),))(None)
    res = {"name": "toy", "rows": [
        {"quantity": "a", "paper": 0.8, "ours": 0.8134, "note": "", "values": VALS, "status": "differs",
         "bound": None, "precision": 0.025, "tolerance": 0.025},
        {"quantity": "b", "paper": 0.8, "ours": 0.8134, "note": "", "values": VALS, "status": "match",
         "bound": None, "tolerance": 0.005}]}
    assert rejudge(res) == 2
    assert [x["status"] for x in res["rows"]] == ["match", "differs"]


def test_a_reproduction_without_randomness_names_no_seed():
    from leakaudit import reproduce
    from leakaudit.reproduce._registry import to_markdown

    reproduce.load_all()
    rows = [{"quantity": "q", "paper": 1.0, "ours": 1.0, "tolerance": 0.0, "status": "match", "note": ""}]
    fixed = to_markdown({"name": "izzo-fig1", "profile": "reduced", "seconds": 1.0, "random_state": 0, "rows": rows})
    assert "no randomness" in fixed and "seed 0" not in fixed
    seeded = to_markdown({"name": "yeom-table1", "profile": "reduced", "seconds": 1.0, "random_state": 0,
                          "rows": rows})
    assert "seed 0" in seeded and "no randomness" not in seeded


def test_rows_over_a_protocols_splits_say_so_in_the_heading():
    # yeom-fig2ab's randomised rows are means over 100 random 75/25 splits: their values carry no seeds, and the
    # heading must not read as one seed's run
    from leakaudit import reproduce
    from leakaudit.reproduce._registry import to_markdown

    reproduce.load_all()
    rows = [{"quantity": "q", "paper": 0.5, "ours": 0.5, "tolerance": 0.0, "status": "match", "note": "",
             "values": [0.4, 0.5, 0.6], "seeds": None},
            {"quantity": "r", "paper": None, "ours": 1.0, "tolerance": None, "status": "no-paper-value", "note": ""}]
    head = to_markdown({"name": "yeom-fig2ab", "profile": "reduced", "seconds": 1.0, "random_state": 0,
                        "rows": rows}).splitlines()[4]
    assert "over the protocol's 3 random splits" in head and not head.startswith("Profile `reduced`, seed 0,")


def test_long_dtp_fig6_does_not_depend_on_the_seed():
    # registered with randomised=False: its page says "no randomness", which holds only if no row moves with the seed
    from leakaudit import reproduce
    from leakaudit.reproduce._registry import get

    reproduce.load_all()
    rep = get("long-dtp-fig6")
    assert not rep.randomised
    assert rep.func("smoke", 0) == rep.func("smoke", 7)
