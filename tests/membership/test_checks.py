import pytest

from leakaudit.membership._checks import all_checks

FAST_FOR_SHADOW = ("check_attack_scores_shape",)


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


def test_checks_catch_a_reversed_attack():
    import numpy as np

    from leakaudit.membership._checks import check_attack_higher_means_member, check_attack_order_invariant
    from leakaudit.membership.threshold import LossThresholdAttack

    class Reversed(LossThresholdAttack):
        name = "reversed"

        def run(self, inputs):
            res = super().run(inputs)
            return self.result(-res.scores_array, 1 - res.decisions_array)

    class OrderDependent(LossThresholdAttack):
        name = "order_dependent"

        def run(self, inputs):
            res = super().run(inputs)
            return self.result(res.scores_array + np.arange(inputs.n) * 1e-3, res.decisions_array)

    with pytest.raises(AssertionError, match="reversed"):
        check_attack_higher_means_member(Reversed())
    with pytest.raises(AssertionError, match="order"):
        check_attack_order_invariant(OrderDependent())


def test_paired_half_masks():
    import numpy as np

    from leakaudit.membership._base import paired_half_masks

    m = paired_half_masks(11, 6, 0)
    assert m.shape == (6, 11)
    np.testing.assert_array_equal(m[0::2] ^ m[1::2], True)  # complementary pairs
    np.testing.assert_array_equal(m.sum(0), 3)  # every record in exactly one model per pair
    assert set(m.sum(1)) == {6, 5}
