"""Which profile each reproduction runs at for docs/reproduction.md, and why where that is not ``full``.

The page is made by one command, ``leakaudit reproduce --all --out docs/reproduction --gather docs/reproduction.md``
(``_registry.run_all``): every reproduction at its page profile, over seeds 0-4. The rule: ``full`` wherever the
paper's scale fits in about an hour on 2 cores, ``reduced`` otherwise, with the cost that rules full out written here.
Every stored run records its reproduction's experiment version (``_registry.register``'s ``version``); an interrupted
``--all`` keeps the runs at the current version and runs the rest, so a killed run loses only the reproduction it was
in, and a version bumped on one reproduction reruns only that one.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["PAGE", "PageEntry", "page_entry"]


@dataclass(frozen=True)
class PageEntry:
    """The profile a reproduction's section of the page is run at; ``why``: why it is not ``full`` (None if it is)."""

    profile: str
    why: str | None = None


_FULL = PageEntry("full")

# reproductions whose paper scale does not fit in an hour on 2 cores: the cost that rules full out (measured where
# the text says so; otherwise scaled from the stored reduced run by the number of models each profile trains)
PAGE: dict[str, PageEntry] = {
    "chase-fig1": PageEntry(
        "reduced", "full trains the paper's shadow models per source (Census k = 500, q = 1,000; Enron k = 1,000, "
                   "q = 500) for five properties at eleven poisoning rates: measured at seed 0, p = 0.10, one property "
                   "and rate costs 25.5 s (Census) and 31.4 s (SpamAssassin) after a 13-14 s Algorithm 2, so the "
                   "five seeds take about 8,000 s, 2.2 hours in one process (docs/chase.md, Fig. 1)"),
    "chase-fig1-mlp": PageEntry(
        "reduced", "full trains the paper's 500 shadow MLPs per world (200 epochs each) at eleven poisoning rates: "
                   "55,000 shadow networks for five seeds, about 5 CPU hours at chase-table2's measured 0.33 CPU s "
                   "a network"),
    "chase-fig3-curves": PageEntry(
        "reduced", "full runs four curves on the paper's axis (k = 50 to 2,000 shadow models per world) with r = 1,000 "
                   "and 100 targets: chase-fig3's Census random curve took 1,164 s over five seeds, so the four take "
                   "about 4,700 s, 1.3 hours in one process"),
    "chase-table2": PageEntry(
        "reduced", "full trains the paper's 600 shadow MLPs per world for five depths and 1,000 per world at "
                   "n = 10,000, 200 epochs each: 58,000 networks for five seeds, about 5.3 CPU hours at the measured "
                   "0.33 CPU s a network (docs/chase.md, Table II)"),
    "long-dtp-lr-setup": PageEntry(
        "reduced", "issue 65's sweep at reduced cost by design (15 settings, 10 iterations, 2 PDTP measurements, "
                   "shadow models once per target); the paper's scale, fresh shadow models for every attack, trains "
                   "2 x 100 x 100 x 10 = 200,000 shadow models a setting and seed, about 3.8 CPU hours for "
                   "SimpleLogistic at its measured 0.068 CPU s a fit (|T| = 1,000, 5-fold CV included) and 1.4 to 3 "
                   "days for LMT at its 0.6-1.3 CPU s a fit"),
    "yeom-fig2c": PageEntry(
        "reduced", "full trains CNNs of size 1 to 128 on 8,750 images, 100 epochs each, over five seeds: one CNN at "
                   "s = 64 takes about 30 CPU minutes (measured, yeom-table1) and one at s = 128 several times that, "
                   "so well over 10 CPU hours"),
    "yeom-fig4": PageEntry(
        "reduced", "full trains two CNNs a size (s = 1 to 128, the colluding one on 4 x 8,750 images), 100 epochs, "
                   "over five seeds: one CNN at s = 64 and n = 8,750 takes about 30 CPU minutes (measured), so tens of "
                   "CPU hours"),
    "yeom-table1": PageEntry(
        "reduced", "full trains 21 CNNs at s = 64 on 8,750 images (the target and 20 shadow models), 100 epochs at "
                   "batch size 32, per seed: about 30 CPU minutes each (measured), some 50 CPU hours for five seeds"),
}


def page_entry(name: str) -> PageEntry:
    """The page profile of reproduction ``name`` (``full`` unless :data:`PAGE` says otherwise)."""
    return PAGE.get(name, _FULL)
