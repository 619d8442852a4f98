import pytest

from leakaudit.membership._checks import all_checks

FAST_FOR_SHADOW = ("check_attack_scores_shape", "check_attack_order_invariant")


def _params():
    out = []
    for name, check in all_checks():
        marks = []
        # the shadow attacks train a network per call: their other checks run in the slow suite
        if name.startswith("shadow") and check.__name__ not in FAST_FOR_SHADOW:
            marks.append(pytest.mark.slow)
        out.append(pytest.param(name, check, marks=marks, id=f"{name}-{check.__name__}"))
    return out


@pytest.mark.parametrize("name,check", _params())
def test_attack_contract(name, check):
    check(name)
