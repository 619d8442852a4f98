"""leakaudit: measure what a trained model leaks about its training data.

Layers (data flows down the list, imports only go up it):

0. ``exceptions``, ``_validation``, ``_random``, ``_results``, ``_resources``
1. ``data``, ``metrics``, ``learners``
2. ``engine``
3. ``membership``, ``dtp``, ``attribute``, ``property``, ``mip``, ``dpaudit``, ``lm`` (one package per paper idea;
   ``lm``: language models)
4. ``reproduce``, ``checks``, ``report``, ``audit``
5. ``cli``
"""

__version__ = "0.1.0"

from .exceptions import LeakauditError  # noqa: E402

__all__ = ["__version__", "LeakauditError"]
