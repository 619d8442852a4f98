"""Seeds: one helper to normalise them, one to derive child seeds.

Library code never touches the global ``np.random`` or ``torch.manual_seed``.
Child seeds come from :class:`numpy.random.SeedSequence` so that the K-th shadow
model of a run always gets the same seed, whatever order models are trained in,
which makes cache keys and resumption after a kill deterministic.
"""

from __future__ import annotations

import numbers

import numpy as np

from .exceptions import InvalidParameterError

__all__ = ["check_random_state", "spawn_seeds", "slot_seeds", "seed_to_int"]

RandomStateLike = None | int | np.integer | np.random.Generator | np.random.RandomState


def check_random_state(random_state: RandomStateLike, *, name: str = "random_state") -> np.random.Generator:
    """Turn ``random_state`` into a :class:`numpy.random.Generator`.

    Parameters
    ----------
    random_state : None, int, numpy.random.Generator or numpy.random.RandomState
        None gives fresh OS entropy (not reproducible); an int gives a fixed
        stream; a Generator is used as is; a RandomState is bridged.
    """
    if random_state is None:
        return np.random.default_rng()
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(random_state.randint(0, 2**31 - 1))
    if isinstance(random_state, (numbers.Integral, np.integer)) and not isinstance(random_state, bool):
        if int(random_state) < 0:
            raise InvalidParameterError(f"{name} must be a non-negative integer; got {random_state}")
        return np.random.default_rng(int(random_state))
    kind, text = type(random_state).__name__, repr(random_state)
    got = f"{text} ({kind})" if len(text) <= 60 and text.isprintable() else kind  # (an array's repr: its type)
    raise InvalidParameterError(f"{name} must be None, a non-negative int or a numpy Generator; got {got}")


def seed_to_int(random_state: RandomStateLike, *, name: str = "random_state") -> int:
    """A reproducible 32-bit integer seed drawn from ``random_state`` (an int is returned as is)."""
    if isinstance(random_state, (numbers.Integral, np.integer)) and not isinstance(random_state, bool):
        check_random_state(random_state, name=name)
        return int(random_state)
    return int(check_random_state(random_state, name=name).integers(0, 2**31 - 1))


def spawn_seeds(random_state: RandomStateLike, n: int, *, name: str = "random_state") -> list[int]:
    """``n`` independent 32-bit child seeds derived from one seed.

    With an int seed the result depends only on (seed, n's index), never on the
    order of use: ``spawn_seeds(s, 10)[:5] == spawn_seeds(s, 5)``.
    """
    if n < 0:
        raise InvalidParameterError(f"n must be >= 0; got {n}")
    root = seed_to_int(random_state, name=name)
    children = np.random.SeedSequence(root).spawn(n)
    return [int(c.generate_state(1, dtype=np.uint32)[0]) for c in children]


def slot_seeds(seed: int, slots: tuple[str, ...]) -> dict[str, int]:
    """One child seed of ``seed`` per named slot (:func:`spawn_seeds`, in the slots' order): a slot added at the end
    leaves the others' seeds as they were."""
    return dict(zip(slots, spawn_seeds(seed, len(slots))))


def named_seed(seed: int, name: str) -> int:
    """A child seed of ``seed`` for ``name``: the same for the same pair, independent of every other name and of
    :func:`spawn_seeds`' positions (its spawn key is the name's CRC-32), so a plug-in's analysis or attack gets a
    seed of the audit's own without shifting any other."""
    import zlib

    child = np.random.SeedSequence(int(seed), spawn_key=(zlib.crc32(name.encode("utf-8")),))
    return int(child.generate_state(1, dtype=np.uint32)[0])
