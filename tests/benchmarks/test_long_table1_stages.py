"""benchmarks/long_table1_stages.py: its stage clocks count each stage's own time and put the library back."""

import time
import types

import pytest

pytestmark = pytest.mark.slow


def _spin(seconds):
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


def test_nested_clocks_count_exclusive_cpu_time(load_benchmark):
    mod = load_benchmark("long_table1_stages")
    ns = types.SimpleNamespace()
    ns.inner = lambda: _spin(0.2)

    def outer():
        _spin(0.1)
        ns.inner()

    ns.outer = outer
    clock = mod.StageClock()
    clock.wrap(ns, "inner", "inner")
    clock.wrap(ns, "outer", "outer")
    ns.outer()
    assert clock.cpu["inner"] == pytest.approx(0.2, abs=0.05)
    assert clock.cpu["outer"] == pytest.approx(0.1, abs=0.05)  # the inner call is not counted twice
    assert clock.calls == {"inner": 1, "outer": 1}
    clock.restore()
    assert ns.outer is outer


def test_install_labels_model_calls_by_their_stage_and_restore_puts_the_library_back(load_benchmark):
    mod = load_benchmark("long_table1_stages")
    from leakaudit.engine import Engine
    from leakaudit.membership import distance, protocols
    from leakaudit.reproduce import long_membership

    before = (Engine.predict_many, protocols.long_protocol, distance.train_targeted_shadows,
              long_membership._avg_pdtp)
    clock = mod.StageClock()
    mod.install(clock)
    try:
        assert Engine.predict_many is not before[0]
        subsets = [[0], [1], [2]]
        for parent, first, second in (("protocol (other)", "target models", "untargeted shadow models"),
                                      ("PDTP (other)", "PDTP models", "PDTP models")):
            clock.enter(parent)
            assert mod._predict_label(clock, (None, None, None, None, subsets), {}) == first
            assert mod._predict_label(clock, (None, None, None, None, subsets[:1]), {}) == second
            clock.leave()
        assert clock.models == {"target models": 3, "untargeted shadow models": 1, "PDTP models": 4}
    finally:
        clock.restore()
    assert (Engine.predict_many, protocols.long_protocol, distance.train_targeted_shadows,
            long_membership._avg_pdtp) == before
