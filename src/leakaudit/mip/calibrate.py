"""A generic, conservative inverse of a monotone privacy function: bracket, Brent's method, a step to the safe side.

In the style of dp_accounting's ``mechanism_calibration``: :func:`calibrate` takes the bracket as a small frozen
class (:class:`ExplicitBracketInterval`, :class:`LowerEndpointAndGuess`) and raises
:class:`NoBracketIntervalFoundError` when the target is not inside it. Used for the tight Theorem 7 constant
(:func:`leakaudit.mip.mip_constant`) and for DP-SGD noise multipliers (:mod:`leakaudit.mip.dp_baselines`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import optimize

from ..exceptions import InvalidParameterError, LeakauditError

__all__ = ["ExplicitBracketInterval", "LowerEndpointAndGuess", "NoBracketIntervalFoundError", "calibrate"]


@dataclass(frozen=True)
class ExplicitBracketInterval:
    """A search interval ``[lo, hi]`` whose ends lie on opposite sides of the target."""

    lo: float
    hi: float


@dataclass(frozen=True)
class LowerEndpointAndGuess:
    """A lower end and a first guess; the upper end is found by doubling ``guess - lower``."""

    lower: float
    guess: float


class NoBracketIntervalFoundError(LeakauditError, ValueError):
    """No interval with the target between its ends was found; pass an explicit bracket."""


def calibrate(
    func: Callable[[float], float],
    target: float,
    *,
    bracket: ExplicitBracketInterval | LowerEndpointAndGuess | tuple[float, float],
    increasing: bool,
    xtol: float = 1e-12,
    rtol: float = 1e-10,
    discrete: bool = False,
    max_doublings: int = 60,
) -> float:
    """The parameter at which a monotone privacy function meets ``target``, on the safe side.

    ``func(x)`` is the privacy loss (an eta, an eps) reached with parameter ``x``. With
    ``increasing=False`` (loss falls as ``x`` grows, as with a noise scale) the result is
    the smallest ``x`` found with ``func(x) <= target``; with ``increasing=True`` the
    largest. Steps: find a bracket, run Brent's method on ``func(x) - target``, then step
    towards the safe end until ``func(x) <= target`` holds (as
    dp_accounting's ``calibrate_dp_mechanism`` does).

    Parameters
    ----------
    func : callable float -> float, monotone
    target : float
    bracket : ExplicitBracketInterval, LowerEndpointAndGuess or (lo, hi)
    increasing : bool
        Whether ``func`` increases with its argument.
    xtol, rtol : float
        Brent tolerances.
    discrete : bool, default=False
        Whether the parameter is an integer (the result is then an int on the safe side).
    max_doublings : int
        How far a :class:`LowerEndpointAndGuess` may be expanded.

    Returns
    -------
    x : float (or int when ``discrete``) with ``func(x) <= target``.

    Raises
    ------
    NoBracketIntervalFoundError
        When the target is not between ``func`` at the bracket's ends.
    """
    if isinstance(bracket, tuple):
        bracket = ExplicitBracketInterval(*bracket)
    target = float(target)

    def g(x: float) -> float:
        return float(func(x)) - target

    def safe(x: float) -> bool:
        return g(x) <= 0.0

    if isinstance(bracket, ExplicitBracketInterval):
        lo, hi = float(bracket.lo), float(bracket.hi)
        if not lo < hi:
            raise InvalidParameterError(f"bracket must have lo < hi; got ({lo}, {hi})")
        glo, ghi = g(lo), g(hi)
    elif isinstance(bracket, LowerEndpointAndGuess):
        lo, hi = float(bracket.lower), float(bracket.guess)
        if not lo < hi:
            raise InvalidParameterError(f"bracket guess must exceed its lower end; got ({lo}, {hi})")
        glo, ghi = g(lo), g(hi)
        step = hi - lo
        for _ in range(max_doublings):
            if glo * ghi <= 0:
                break
            step *= 2.0
            hi = lo + step
            ghi = g(hi)
    else:
        raise InvalidParameterError(
            f"bracket must be an ExplicitBracketInterval, LowerEndpointAndGuess or tuple; got {bracket!r}"
        )
    if not (np.isfinite(glo) and np.isfinite(ghi)) or glo * ghi > 0:
        raise NoBracketIntervalFoundError(
            f"no bracket found: func - target is {glo + 0:.3g} at {lo:.6g} and {ghi + 0:.3g} at {hi:.6g} "
            "(same sign); pass an explicit bracket whose ends straddle the target"
        )
    safe_end = lo if increasing else hi  # the end with func <= target
    if glo == 0.0 and not increasing:
        x = lo
    elif ghi == 0.0 and increasing:
        x = hi
    else:
        x = optimize.brentq(g, lo, hi, xtol=xtol, rtol=rtol, maxiter=500)
    if discrete:
        x = math.floor(x) if increasing else math.ceil(x)
        while not safe(x):
            x = x - 1 if increasing else x + 1
        return int(x)
    # step to the safe side: move towards safe_end by a growing amount until func(x) <= target
    delta = max(abs(x) * rtol, xtol, 1e-300)
    while not safe(x):
        x = x - delta if increasing else x + delta
        if (increasing and x <= safe_end) or (not increasing and x >= safe_end):
            return safe_end
        delta *= 2.0
    return x
