"""The adversary protocol of the Chase reproductions per data source (fast: no data are loaded)."""

import pytest

from leakaudit.exceptions import InvalidParameterError
from leakaudit.property.datasets import spam_property_data
from leakaudit.reproduce import chase


def test_census_keeps_the_paper_protocol_and_spam_builds_shadows_like_targets():
    census = chase.PROTOCOL["census"]
    assert census == {"adversary_fraction": None, "out_of_bag": False, "exclude_rows": False}
    spam = chase.PROTOCOL["spam"]
    assert spam["out_of_bag"] and spam["exclude_rows"] and spam["features"] == "tfidf"
    assert spam["adversary_fraction"] is None  # the paper's 1/3 : 2/3 split


def test_spam_values_is_checked_before_loading():
    with pytest.raises(InvalidParameterError, match="values"):
        spam_property_data("random", values="counts")


def test_every_chase_profile_runs_the_papers_five_repetitions():
    assert chase.CONFIG["reduced"]["reps"] == chase.CONFIG["full"]["reps"] == 5
    assert chase._seeds(chase.CONFIG["reduced"], 0) == [0, 1, 2, 3, 4]
    # a row over seeds: the mean, every seed's value and the interval; a match is judged on the interval
    r = chase._seeds_row(chase._row, "q", 0.99, [0.78, 0.62, 0.66, 0.58, 0.62], [0, 1, 2, 3, 4], 0.1)
    assert abs(r.ours - 0.652) < 1e-9 and r.status == "differs"
    assert "0.78, 0.62, 0.66, 0.58, 0.62" in r.note and "interval" in r.note
