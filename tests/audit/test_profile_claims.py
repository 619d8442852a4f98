"""A profile never changes what a check claims (issue 47): the fastest profile may be less decided than a fuller one,
never more lenient. Slow: it runs the demo at every profile (`make test-slow`)."""

import pytest

from leakaudit.audit import make_config
from leakaudit.audit.pipeline import audit_core


@pytest.mark.slow
def test_the_demo_is_never_published_at_a_profile_where_a_fuller_one_withholds_it(tmp_path):
    outcomes = {}
    for profile in ("smoke", "standard"):
        res = audit_core(make_config(profile=profile, cache_dir=str(tmp_path / "cache")), verbose=False)
        outcomes[profile] = res.outcome
        dtp = next(c for c in res.checks if c.id == "dtp.dtp1")
        if profile == "smoke":  # PDTP of a random 100 of the 1,000 members: it cannot vouch for the other 900
            assert dtp.status not in ("shown below", "undecided"), dtp.sentence
    assert outcomes["standard"] == "do not publish"
    assert outcomes["smoke"] in ("do not publish", "inconclusive"), outcomes
