"""A stored run stays current while the numbers it would give are unchanged: each reproduction's run at the
fingerprint profile (smoke, seed 0), recomputed here by this code, must give the fingerprint its stored run
(docs/reproduction/NAME.json) keeps, unless the reproduction's experiment version was bumped since (its stored run is
then stale, and the page says so). A change that moves a number must bump the version of each reproduction it moves
(``register(..., version=N + 1)``); ``make reproductions`` then runs those again.

The last digits of some runs depend on the CPU (torch's and OpenBLAS's kernels are chosen by its instruction set: an
AVX-512 Xeon trains another CNN than an AVX2 EPYC, to the sixth digit). A stored run names its CPU in its environment
(those stored before it did were made on fingerprints_by_cpu.json's ``reference_cpu``); that file keeps, per other
CPU, the fingerprints that differ there, each with the version it was computed at. On a CPU named in neither, a
fingerprint that differs cannot tell a code change from the CPU: the test says so and skips. The reference CPU's
name is shared by EPYCs with and without AVX-512, on which leakaudit's kernels run other variants: one with AVX-512,
which the reference lacked, is keyed "<name> with AVX-512"."""

import json
from pathlib import Path

import pytest

from leakaudit import reproduce
from leakaudit.reproduce import _registry as reg

reproduce.load_all()
STORED = Path(__file__).resolve().parents[2] / "docs" / "reproduction"
BY_CPU = json.loads((Path(__file__).with_name("fingerprints_by_cpu.json")).read_text())

# reproductions whose smoke run took more than 5 s on one shared core (the other twelve took 1-5 s, about 30 s in all):
# slow (make test-slow); long-dtp-correlation's takes minutes
SLOW = {"adult-attribute", "chase-fig1", "chase-fig1-mlp", "chase-gender", "chase-table2", "chase-table3",
        "chase-wb-encoding", "izzo-adult", "izzo-fig2", "long-dtp-bounds", "long-dtp-correlation", "long-dtp-lr-setup",
        "long-dtp-noise", "long-dtp-table2", "long-purchase-calibration", "long-table1", "yeom-fig2c", "yeom-fig3", "yeom-fig4"}


def _cpu_key() -> str:
    from leakaudit.learners._native import cpu_level

    cpu = reg.cpu_model() or "unknown"
    return f"{cpu} with AVX-512" if cpu == BY_CPU["reference_cpu"] and cpu_level() >= 2 else cpu


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n in SLOW else n for n in reg.names()])
def test_the_stored_run_has_this_codes_fingerprint_or_is_stale(name):
    stored = json.loads((STORED / f"{name}.json").read_text())
    version = reg.get(name).version
    if stored.get("version") != version:
        pytest.skip(f"{name}: stored at version {stored.get('version')}, now {version}: stale until rerun")
    got, cpu = reg.fingerprint(name), _cpu_key()
    if got == stored["fingerprint"]:
        return
    # runs stored before the environment named the CPU were all made on the reference CPU
    stored_cpu = stored.get("environment", {}).get("cpu_model") or BY_CPU["reference_cpu"]
    here = BY_CPU["cpus"].get(cpu, {}).get(name)
    if here is not None and here["version"] == version:
        assert got == here["fingerprint"], (
            f"{name}: a number of its {reg.FINGERPRINT_PROFILE} run moved on {cpu} (fingerprints_by_cpu.json). If the "
            f"change is meant to move numbers, bump its version (register(..., version={version + 1})); otherwise undo "
            "the change")
        return
    if cpu != stored_cpu and cpu not in BY_CPU["cpus"]:
        pytest.skip(f"{name}: its fingerprint was stored on {stored_cpu}; this CPU ({cpu}) gives {got}, and no "
                    "fingerprint of this CPU is kept (fingerprints_by_cpu.json) to tell a code change from its digits")
    assert got == stored["fingerprint"], (
        f"{name}: a number of its {reg.FINGERPRINT_PROFILE} run moved. If the change is meant to move numbers, bump "
        f"its version (register(..., version={version + 1})) so that its stored run goes stale and `make "
        "reproductions` runs it again; otherwise undo the change")


def test_a_moved_number_changes_the_fingerprint_and_a_note_or_a_running_time_does_not():
    rows = json.loads((STORED / "chase-table3.json").read_text())["rows"]
    digest = reg.numbers_digest("chase-table3", rows)
    timed = [dict(r, note=r["note"] + " (other words)") if "seconds" not in r["quantity"]
             else dict(r, ours=r["ours"] + 1.0, values=[v + 1.0 for v in r["values"]]) for r in rows]
    assert reg.numbers_digest("chase-table3", timed) == digest
    moved = [dict(rows[0], ours=rows[0]["ours"] + 1e-4), *rows[1:]]
    assert reg.numbers_digest("chase-table3", moved) != digest
