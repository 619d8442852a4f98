"""DP-SGD (Abadi et al. 2016) around the architecture of a torch learner, K models at once, with its accounting.

``DPSGD(TorchMLP(...), noise_multiplier=..., max_grad_norm=...)`` trains the network the wrapped learner
builds (its layers, activation and initial weights) by differentially private SGD instead of the wrapped
learner's optimiser: every step samples a batch, clips each example's gradient to L2 norm ``max_grad_norm``
(``C``), sums, adds Gaussian noise of standard deviation ``noise_multiplier * C`` to every coordinate of the
sum, divides by the expected batch size and takes a plain SGD step of size ``lr``.

Batches. ``sampling="poisson"``: every row joins each step's batch independently with probability ``q``
(``sampling_rate``, or ``batch_size / n``), ``ceil(epochs / q)`` steps (:class:`_PoissonSteps`).
``sampling="shuffle"``: a fresh permutation per epoch cut into batches of ``batch_size`` (or ``round(q n)``), as
most DP-SGD code does. Torch modules trained through Opacus run Opacus's own schedule instead (rate
``1 / ceil(n / B)``, :func:`_opacus_schedule`); :meth:`DPSGD.schedule` says which, and the accounting, the audit's
claim check and its noise check all read it there.

The compiled step. TorchMLP nets that the wrapped learner trains with the package's C kernel (one hidden
layer, float32, a width it has a copy for, ``backend`` not "torch") are trained model by model by its DP step
(``_mlp_native.c``, ``leakaudit_dp_train_1h_f32``), "extra" gradient canaries included: each row's gradient norm from
the rank-one layers below, its gradient scaled to norm at most ``C`` before it is summed, the noise added in the
update, drawn in the kernel (8 lanes of xoshiro128** and the Box-Muller transform, from
``noise_state([seed_k, 0x0D95])``: ``_mlp_native.gauss``). Initial weights and batches are the torch loop's, the
noise is not (the torch loop draws it with torch's generator): without noise the two differ by float rounding
only, with it in distribution; with no noise and a clip norm no gradient reaches, it is the kernel's
non-private SGD step bit for bit. The bank's ``info["kernel"]`` says which trained ("native", "torch" or "opacus").

How the K models are batched. TorchMLP nets: per-example gradients of a linear layer are outer products,
so each example's gradient norm is ``sum_l (|a_l|^2 + 1) |delta_l|^2`` (activations ``a``, back-propagated
errors ``delta``) and the clipped sum is one matrix product of ``a`` with the rescaled ``delta``: no
per-example gradient is materialised (the "ghost norm" of Goodfellow 2015). TorchCNN nets: per-example
gradients of the K stacked grouped networks with ``torch.func.vmap(grad(...))`` over the batch. Any other
torch module (:class:`TorchModuleLearner`): Opacus's ``PrivacyEngine``, one model at a time.

Accounting (``dp_accounting``, privacy loss distributions). Poisson sampling: ``T`` compositions of the
Poisson-subsampled Gaussian mechanism, under the neighbouring relation ``neighbouring`` ("add_remove", the
usual one; "replace_one" also supported). Shuffled batches: no amplification by shuffling is claimed (Chua et
al., "How Private are DP-SGD Implementations?", ICML 2024, show that accounting shuffled batches as Poisson
under-states epsilon); with fixed-size batches a replaced row sits in one batch per epoch, so an epoch is one
Gaussian mechanism of L2 sensitivity ``2C`` and ``epochs`` of them compose; only "replace_one" is stated for
shuffling. The RDP accountant is refused with replace-one (it treats a Gaussian event as sensitivity ``C``
there; the guard of :func:`leakaudit.mip.dp_baselines.dpsgd_epsilon`).

Seeds. Model k's initial weights come from ``numpy.random.default_rng(seed_k)`` exactly as the wrapped
learner draws them, then its batches (and its canaries' sampling) from the same generator, step after step;
its noise (torch loop) from a torch generator (mt19937; ``normal_``, Box-Muller) seeded by
``numpy.random.SeedSequence([seed_k, 0x0D95])``, a stream of its own, so that with shuffled batches the row order
is the wrapped TorchMLP's own (fast mode) and, with the noise at 0 and the clip norm huge, DPSGD is its plain SGD.
Model k depends only on its rows and seed (``fit_many`` equals ``fit`` up to float rounding).

White-box canaries. :meth:`DPSGD.fit_many_with_canaries` inserts gradient canaries into every step (Steinke,
Nasr & Jagielski, NeurIPS 2023, Section 7; Nasr et al., USENIX Security 2023): canary i, when included, joins
each step's batch like a row (probability q), with a gradient of norm ``canary_norm`` along a fixed direction
``u_i`` that is clipped and noised like every other. The auditor watches every intermediate model and scores
each canary by the likelihood ratio of the subsampled Gaussian mechanism along ``u_i``, step after step. By
default ``u_i`` is a parameter of the auditor's own (the first-layer weight of an input that is 0 in every row),
so that no data gradient hides the canary; the mechanism treats it as any other parameter. Who inserts them:
the compiled DP step (its parameter vector extended by the canaries'; the torch loop stays the oracle and the
fallback), the torch loop (TorchCNN, "dirac" and "random" directions, ``backend="torch"``) and, for any other
torch module, Opacus's own DPOptimizer (:meth:`DPSGD._train_opacus`). The canaries left out are coordinates no
gradient reaches: each step's noise is measured on them (``info["canary_noise"]``, the per-step noise check of
:mod:`leakaudit.dpaudit.noise_check`).

Devices. ``device`` (the wrapped learner's unless given) moves the torch loop and Opacus's training to a GPU;
the compiled DP step is CPU code, so a GPU trains TorchMLP nets with the torch loop. Batches, canary draws and
initial weights come from the same numpy generators on any device. The noise does not: a CUDA generator
(Philox) seeded from the same ``SeedSequence`` draws other numbers than the CPU's mt19937, so a GPU run's noise
differs from a CPU run's in value, not in distribution (Opacus on a GPU: its noise from a CUDA generator seeded
with the model's seed, its batches from the CPU generator it shares with the noise on the CPU).

References
----------
Abadi et al., "Deep Learning with Differential Privacy", CCS 2016 (Algorithm 1).
Goodfellow, "Efficient Per-Example Gradient Computations", arXiv 1510.01799 (2015).
Steinke, Nasr & Jagielski, "Privacy Auditing with One (1) Training Run", NeurIPS 2023.
Nasr et al., "Tight Auditing of Differentially Private Machine Learning", USENIX Security 2023.
"""

from __future__ import annotations

import functools
import math
import numbers
from typing import Any

import numpy as np

from .._extras import require
from .._random import RandomStateLike, seed_to_int
from .._validation import check_choice, check_scalar
from ..exceptions import InvalidInputError, InvalidParameterError, UnsupportedError
from ._base import Learner, ListModelBank, ModelBank, keep_params

__all__ = ["BUGS", "DPSGD", "dpsgd_accounted_epsilon"]

#: Implementation bugs DPSGD can plant (test-only): each makes it leak more than its accounting says.
#: "skip_noise_step": no noise in one step (the middle one); "skip_clipping": gradients are not clipped;
#: "noise_per_batch": the noise standard deviation is ``noise_multiplier * C / batch`` instead of
#: ``noise_multiplier * C`` (noise added after averaging, scaled by the batch instead of the clip norm).
BUGS = ("skip_noise_step", "skip_clipping", "noise_per_batch")
NEIGHBOURING = ("add_remove", "replace_one")
#: the noise of model k comes from a torch generator seeded by ``SeedSequence([seed_k, _NOISE_STREAM])``; its
#: canaries' batch draws from ``default_rng([seed_k, _CANARY_STREAM])`` and the noise of their own parameters
#: from ``SeedSequence([seed_k, _NOISE_STREAM, 1])``, so that the net trained with canaries is the one trained
#: without them
_NOISE_STREAM = 0x0D95
_CANARY_STREAM = 0xCA7A


def _torch_generator(torch, *entropy, device: str = "cpu"):
    """A torch generator on ``device`` seeded from ``numpy.random.SeedSequence(entropy)`` (63 bits)."""
    state = np.random.SeedSequence([int(e) for e in entropy]).generate_state(1, np.uint64)[0]
    return torch.Generator(device=device).manual_seed(int(state >> np.uint64(1)))


class _PoissonSteps:
    """Poisson samples of ``range(n)`` at rate q, one a step: each index joins each step independently with
    probability q; :meth:`next` gives the next step's (ascending), :meth:`take` the next few steps' at once.

    Drawn ``block`` steps at a time from ``rng``: the successes of Bernoulli(q) trials over ``block * n`` positions
    (position i is index ``i % n`` of the block's step ``i // n``) are the partial sums of i.i.d. Geometric(q) gaps,
    so a step costs about ``q n`` draws and no Python call per step or index. Draws past a block's end are
    discarded (the trials are independent, so the next block starts afresh).
    """

    def __init__(self, rng: np.random.Generator, n: int, q: float, block: int = 64):
        self.rng, self.n, self.q, self.block = rng, int(n), float(q), max(1, int(block))
        self.rows = np.zeros(0, np.int64)  # the block's samples, step after step
        self.bounds = np.zeros(1, np.int64)  # step t's: rows[bounds[t]:bounds[t + 1]]
        self.cur = 0  # the block's next step

    def next(self) -> np.ndarray:
        return self.take(1)[0]

    def take(self, count: int) -> tuple[np.ndarray, np.ndarray]:
        """The next ``count`` steps' samples, concatenated, and each step's size (count,)."""
        rows, sizes = [], []
        while count > 0:
            if self.cur == self.bounds.size - 1:
                self._draw()
            j = min(count, self.bounds.size - 1 - self.cur)
            b = self.bounds[self.cur : self.cur + j + 1]
            rows.append(self.rows[b[0] : b[-1]])
            sizes.append(np.diff(b))
            self.cur += j
            count -= j
        if len(rows) == 1:
            return rows[0], sizes[0]
        return (np.concatenate(rows), np.concatenate(sizes)) if rows else (self.rows[:0], np.zeros(0, np.int64))

    def _draw(self) -> None:
        n, S = self.n, self.block
        self.cur = 0
        if n == 0:
            self.rows, self.bounds = np.zeros(0, np.int64), np.zeros(S + 1, np.int64)
            return
        total = n * S
        parts, last = [], -1
        while last < total:  # until a success lies past the block: every success inside it is drawn
            left = self.q * (total - last)
            gaps = self.rng.geometric(self.q, size=int(left + 5 * math.sqrt(left) + 16))
            pos = last + np.cumsum(gaps)
            parts.append(pos)
            last = int(pos[-1])
        pos = np.concatenate(parts)
        pos = pos[pos < total]
        step = pos // n
        self.bounds = np.searchsorted(step, np.arange(S + 1)).astype(np.int64)
        self.rows = pos - step * n


def dpsgd_accounted_epsilon(*, noise_multiplier: float, sampling: str, sampling_rate: float, steps: int,
                            epochs: int, delta: float, neighbouring: str = "add_remove",
                            accountant: str = "pld") -> float:
    """Epsilon at ``delta`` of DP-SGD as :class:`DPSGD` trains, from ``dp_accounting``.

    Parameters
    ----------
    noise_multiplier : float >= 0
        0 gives infinity (no noise).
    sampling : {"poisson", "shuffle"}
    sampling_rate : float in (0, 1]
        Poisson's q (ignored for shuffling: each row is in one batch per epoch).
    steps : int
        Poisson: the number of steps T.
    epochs : int
        Shuffling: the number of epochs (each one Gaussian mechanism of sensitivity 2C under replace-one).
    delta : float in (0, 1)
    neighbouring : {"add_remove", "replace_one"}
        Shuffling supports "replace_one" only (see the module docstring).
    accountant : {"pld", "rdp"}
        "rdp" is refused with "replace_one" (dp_accounting's RDP accountant treats the Gaussian as
        sensitivity C there).
    """
    check_scalar(noise_multiplier, name="noise_multiplier", min_val=0.0)
    check_choice(sampling, name="sampling", choices=("poisson", "shuffle"))
    check_scalar(sampling_rate, name="sampling_rate", min_val=0.0, max_val=1.0, include_min=False)
    check_scalar(delta, name="delta", min_val=0.0, max_val=1.0, include_min=False, include_max=False)
    check_choice(neighbouring, name="neighbouring", choices=NEIGHBOURING)
    check_choice(accountant, name="accountant", choices=("pld", "rdp"))
    if sampling == "shuffle" and neighbouring != "replace_one":
        raise InvalidParameterError(
            "sampling='shuffle' is accounted under neighbouring='replace_one' only (fixed-size batches; no "
            "amplification by shuffling is claimed); use sampling='poisson' for add/remove")
    if accountant == "rdp" and neighbouring == "replace_one":
        raise UnsupportedError(
            "dp_accounting's RDP accountant ignores REPLACE_ONE for Gaussian events (it assumes sensitivity C); "
            "use accountant='pld' for replace-one")
    if noise_multiplier == 0:
        return math.inf
    if sampling == "poisson":
        key = ("poisson", float(sampling_rate), int(steps))
    else:
        key = ("shuffle", 1.0, int(epochs))
    return _epsilon(float(noise_multiplier), *key, float(delta), neighbouring, accountant)


@functools.lru_cache(maxsize=256)
def _epsilon(noise_multiplier, sampling, sampling_rate, count, delta, neighbouring, accountant) -> float:
    """The accountant's epsilon (cached: a PLD composition is slow, and K models share it)."""
    dpa = require("dp_accounting", "DP-SGD's privacy accounting")
    from dp_accounting import pld, rdp

    rel = (dpa.NeighboringRelation.REPLACE_ONE if neighbouring == "replace_one"
           else dpa.NeighboringRelation.ADD_OR_REMOVE_ONE)
    gauss = dpa.GaussianDpEvent(noise_multiplier)
    inner = gauss if sampling_rate == 1.0 else dpa.PoissonSampledDpEvent(sampling_rate, gauss)
    event = dpa.SelfComposedDpEvent(inner, count)
    acc = (rdp.RdpAccountant if accountant == "rdp" else pld.PLDAccountant)(neighboring_relation=rel)
    acc.compose(event)
    return float(acc.get_epsilon(delta))


class DPSGD(Learner):
    """Differentially private SGD of a torch learner's architecture, K models at once, with its epsilon.

    Parameters
    ----------
    learner : TorchMLP, TorchCNN or TorchModuleLearner
        The architecture (and initial weights) to train; its own optimiser, learning rate, batch size and
        epochs are not used. TorchMLP needs ``output="softmax"``.
    noise_multiplier : float >= 0, default=1.0
        sigma: the noise standard deviation is ``sigma * max_grad_norm``.
    max_grad_norm : float > 0, default=1.0
        C, the per-example clipping norm.
    sampling : {"poisson", "shuffle"}, default="poisson"
    sampling_rate : float in (0, 1] or None, default=None
        Poisson's q; give this or ``batch_size`` (then q = batch_size / n for a model of n rows).
    batch_size : int or None, default=None
        Shuffling's batch size, or Poisson's expected batch size.
    epochs : int, default=5
    lr : float, default=0.5
        SGD step size on the noisy mean gradient.
    target_delta : float in (0, 1), default=1e-5
        The delta at which epsilon is reported.
    neighbouring : {"add_remove", "replace_one"} or None, default=None
        The neighbouring relation epsilon is stated for; None: "add_remove" for Poisson, "replace_one" for
        shuffling.
    accountant : {"pld", "rdp"}, default="pld"
    canary_norm : float or None, default=None
        Norm of an inserted gradient canary before clipping (None: ``1000 * max_grad_norm``, so a run that skips
        clipping shows it).
    bug : None or one of :data:`BUGS`, default=None
        Test-only: plant an implementation bug (the audit's power benchmark). Never for real training.
    device : {None, "cpu", "cuda", "cuda:N", "auto"}, default=None
        Where the nets train (None: the wrapped learner's ``device``). On a GPU the torch loop (or Opacus) trains;
        the compiled DP step is CPU code. See the module docstring for what a GPU changes (the noise's stream).

    Attributes
    ----------
    epsilon_ : float
        Epsilon at ``target_delta`` of the last ``fit`` (the largest over the models of a ``fit_many``);
        banks carry each model's in ``info["epsilon"]`` with ``info["accounting"]`` saying how.
    """

    family = "dp-sgd"

    def __init__(self, *, learner: Any = None, noise_multiplier: float = 1.0, max_grad_norm: float = 1.0,
                 sampling: str = "poisson", sampling_rate: float | None = None, batch_size: int | None = None,
                 epochs: int = 5, lr: float = 0.5, target_delta: float = 1e-5, neighbouring: str | None = None,
                 accountant: str = "pld", canary_norm: float | None = None, bug: str | None = None,
                 device: str | None = None):
        keep_params(self, locals())

    # -- parameters -------------------------------------------------------------
    def _kind(self) -> str:
        from .torch_cnn import TorchCNN
        from .torch_mlp import TorchMLP
        from .torch_module import TorchModuleLearner

        if isinstance(self.learner, TorchMLP):
            if self.learner.output != "softmax":
                raise UnsupportedError("DPSGD trains TorchMLP nets with output='softmax'; got output='logistic'")
            return "mlp"
        if isinstance(self.learner, TorchCNN):
            return "cnn"
        if isinstance(self.learner, TorchModuleLearner):
            return "module"
        raise InvalidParameterError(
            f"learner must be a TorchMLP, TorchCNN or TorchModuleLearner; got {type(self.learner).__name__}")

    def _check_params(self) -> dict:
        kind = self._kind()
        check_scalar(self.noise_multiplier, name="noise_multiplier", min_val=0.0)
        check_scalar(self.max_grad_norm, name="max_grad_norm", min_val=0.0, include_min=False)
        check_choice(self.sampling, name="sampling", choices=("poisson", "shuffle"))
        if (self.sampling_rate is None) == (self.batch_size is None):
            raise InvalidParameterError("give exactly one of sampling_rate and batch_size; got "
                                        f"sampling_rate={self.sampling_rate!r}, batch_size={self.batch_size!r}")
        if self.sampling_rate is not None:
            check_scalar(self.sampling_rate, name="sampling_rate", min_val=0.0, max_val=1.0, include_min=False)
        if self.batch_size is not None:
            check_scalar(self.batch_size, name="batch_size", kind=numbers.Integral, min_val=1)
        check_scalar(self.epochs, name="epochs", kind=numbers.Integral, min_val=1)
        check_scalar(self.lr, name="lr", min_val=0.0, include_min=False)
        check_scalar(self.target_delta, name="target_delta", min_val=0.0, max_val=1.0, include_min=False,
                     include_max=False)
        neighbouring = self.neighbouring
        if neighbouring is None:
            neighbouring = "add_remove" if self.sampling == "poisson" else "replace_one"
        check_choice(neighbouring, name="neighbouring", choices=NEIGHBOURING)
        if self.sampling == "shuffle" and neighbouring != "replace_one":
            raise InvalidParameterError(
                "sampling='shuffle' is accounted under neighbouring='replace_one' only (no amplification by "
                "shuffling is claimed); use sampling='poisson' for add/remove")
        check_choice(self.accountant, name="accountant", choices=("pld", "rdp"))
        if self.accountant == "rdp" and neighbouring == "replace_one":
            raise UnsupportedError("dp_accounting's RDP accountant ignores REPLACE_ONE for Gaussian events (it "
                                   "assumes sensitivity C); use accountant='pld' for replace-one")
        if self.canary_norm is not None:
            check_scalar(self.canary_norm, name="canary_norm", min_val=0.0, include_min=False)
        if self.bug is not None:
            check_choice(self.bug, name="bug", choices=BUGS)
        return {"kind": kind, "neighbouring": neighbouring, "device": self._device()}

    def validate_params(self) -> None:
        """The form of ``device`` and the wrapped learner's own check (see :meth:`TorchMLP.validate_params`)."""
        from ._torch_utils import check_device

        if self.device is not None:
            check_device(self.device)
        if isinstance(self.learner, Learner):
            self.learner.validate_params()

    def _device(self) -> str:
        """The resolved device the nets train on: ``device``, else the wrapped learner's."""
        from ._torch_utils import resolve_device

        if self.device is not None:
            return resolve_device(self.device)
        return resolve_device(getattr(self.learner, "device", "cpu"), name=f"{type(self.learner).__name__}.device")

    def schedule(self, n: int) -> dict:
        """The sampling schedule of a model trained on ``n`` rows: rate q, batch size, steps.

        Returns a dict with ``sampling_rate`` (q), ``batch_size`` (expected, Poisson; fixed, shuffling),
        ``steps`` and ``steps_per_epoch`` (shuffling; and Opacus). This is the one place the schedule is decided:
        the trainers run it and the accountant (:meth:`accounted_epsilon`, ``info["epsilon"]``), the audit's claim
        check and its noise check read it. A torch module's schedule is the one Opacus runs
        (:func:`_opacus_schedule`), not ``ceil(epochs / q)`` steps at rate q.
        """
        if self.sampling_rate is not None:
            q = float(self.sampling_rate)
            B = max(1, round(q * n))
        else:
            B = int(self.batch_size)
            if B > n:
                raise InvalidInputError(f"batch_size={B} is larger than the {n} training rows")
            q = B / n
        if self._kind() == "module":  # Opacus samples at a rate of its own (see _opacus_schedule)
            return _opacus_schedule(int(n), B, int(self.epochs), poisson=self.sampling == "poisson")
        if self.sampling == "poisson":
            return {"sampling_rate": q, "batch_size": q * n, "steps": math.ceil(int(self.epochs) / q),
                    "steps_per_epoch": None}
        per = math.ceil(n / B)
        return {"sampling_rate": B / n, "batch_size": B, "steps": per * int(self.epochs), "steps_per_epoch": per}

    def accounted_epsilon(self, n: int, delta: float | None = None) -> float:
        """Epsilon at ``delta`` (default ``target_delta``) of a model trained on ``n`` rows."""
        neighbouring = self._check_params()["neighbouring"]
        return self._epsilon(self.schedule(int(n)), neighbouring, self.target_delta if delta is None else delta)

    def _epsilon(self, sched: dict, neighbouring: str, delta: float) -> float:
        """Epsilon at ``delta`` of a model trained on schedule ``sched`` (:meth:`schedule`'s)."""
        return dpsgd_accounted_epsilon(noise_multiplier=float(self.noise_multiplier), sampling=self.sampling,
                                       sampling_rate=sched["sampling_rate"], steps=sched["steps"],
                                       epochs=int(self.epochs), delta=float(delta), neighbouring=neighbouring,
                                       accountant=self.accountant)

    def accounting(self) -> str:
        """One sentence: the mechanism and neighbouring relation epsilon is stated for."""
        p = self._check_params()
        rel = "add/remove one row" if p["neighbouring"] == "add_remove" else "replace one row"
        if self.sampling == "poisson":
            how = "T compositions of the Poisson-subsampled Gaussian mechanism"
        else:
            how = ("one Gaussian mechanism of sensitivity 2C per epoch (shuffled fixed-size batches, no "
                   "amplification claimed)")
        return f"dp_accounting {self.accountant.upper()} accountant: {how}; neighbouring relation: {rel}"

    # -- Learner protocol ---------------------------------------------------------
    def fit(self, X, y, *, random_state: RandomStateLike = None, n_classes: int | None = None):
        return super().fit(self._images(X), y, random_state=random_state, n_classes=n_classes)

    def fit_many(self, X, y, subsets, random_states=None, *, n_classes: int | None = None) -> ModelBank:
        return super().fit_many(self._images(X), y, subsets, random_states, n_classes=n_classes)

    def _images(self, X):
        """``X`` checked as the wrapped TorchCNN's images (:func:`.torch_cnn._check_images`); as it is otherwise."""
        if self._check_params()["kind"] != "cnn":
            return X
        from .torch_cnn import _check_images

        return _check_images(X, tuple(int(v) for v in self.learner.image_shape))

    def _fit(self, X, y, *, random_state, n_classes):
        bank = self._fit_many(X, y, [np.arange(len(X))], [seed_to_int(random_state)], n_classes=n_classes)
        model = bank.model(0)
        model.epsilon_ = bank.info["epsilon"][0]
        return model

    def _fit_many(self, X, y, subsets, seeds, *, n_classes) -> ModelBank:
        bank, _ = self._train(X, y, subsets, seeds, n_classes=n_classes, canaries=None)
        return bank

    def fit_many_with_canaries(self, X, y, subsets, random_states=None, *, included, directions="extra",
                               n_classes: int | None = None):
        """Train as :meth:`fit_many` with white-box gradient canaries inserted; return the bank and their scores.

        Parameters
        ----------
        X, y, subsets, random_states, n_classes : as in :meth:`fit_many`
        included : bool array of shape (K, m)
            Which canaries model k trains with (the one-run audit draws each with probability 1/2).
        directions : {"extra", "dirac", "random"}, default="extra"
            Where the canary gradients point. "extra": Dirac canaries on m parameters of the auditor's own,
            the first-layer weights of m inputs (one hidden unit each) that are 0 in every row: no data gradient
            reaches them, so nothing but the noise hides a canary, and the net the data trains is the recipe's
            (its predictions never read them; they are dropped from the bank), while the trainer clips, noises
            and updates them as every parameter. "dirac": single coordinates of the net itself, first-layer
            weights of the input features with the fewest non-zero values in ``X`` (where the data's gradients
            are smallest; at most the net's parameter count). "random": random unit directions in the net's
            parameter space. TorchCNN nets and torch modules (Opacus) take "extra" only. The compiled DP step
            draws the net's noise and the canaries' from one stream, so there the net trained with canaries
            differs from the one trained without them in value (not in distribution) when there is noise.

        Returns
        -------
        bank : ModelBank
        scores : ndarray of shape (K, m)
            Per canary, the sum over steps of the log likelihood ratio "in this step's batch" against "not",
            of the update along its direction, for the Poisson-subsampled Gaussian (higher: more likely
            included); it needs every intermediate model (the white-box threat model). With "extra" canaries
            the bank's ``info["canary_noise"]`` holds each step's mean square of the noisy sum along the
            left-out canaries and their number (:func:`leakaudit.dpaudit.noise_check`).
        """
        p = self._check_params()
        check_choice(directions, name="directions", choices=("extra", "dirac", "random"))
        # "extra" canaries live on parameters of their own, outside the net, so any architecture of the batched
        # trainer carries them; "dirac" and "random" point into the net's parameters, laid out for the MLP only
        if p["kind"] != "mlp" and directions != "extra":
            raise UnsupportedError(f"gradient canaries with directions={directions!r} point into the TorchMLP's own "
                                   f"parameters; a {type(self.learner).__name__} takes directions='extra' (parameters "
                                   "of the auditor's own)")
        from ._base import check_many_inputs

        X, y, subsets, seeds, n_classes = check_many_inputs(X, y, subsets, random_states, task=self.task,
                                                            n_classes=n_classes)
        inc = np.asarray(included, dtype=bool)
        if inc.ndim != 2 or inc.shape[0] != len(subsets):
            raise InvalidInputError(f"included must have shape (K={len(subsets)}, m); got {inc.shape}")
        return self._train(X, y, subsets, seeds, n_classes=n_classes, canaries=(inc, directions))

    # -- training ---------------------------------------------------------------------
    def _train(self, X, y, subsets, seeds, *, n_classes, canaries):
        p = self._check_params()
        scheds = [self.schedule(s.size) for s in subsets]
        if p["kind"] == "module":
            bank, scores = self._train_opacus(X, y, subsets, seeds, scheds, n_classes, canaries, p["device"])
        else:
            bank, scores = _BatchedDPSGD(self, p["kind"], X, y, subsets, seeds, scheds, n_classes, canaries,
                                         p["device"]).run()
        eps = [self._epsilon(s, p["neighbouring"], self.target_delta) for s in scheds]
        info = {"dp": True, "kernel": getattr(bank, "info", {}).get("kernel", "torch"), "epsilon": eps,
                "delta": float(self.target_delta), "accounting": self.accounting(),
                "noise_multiplier": float(self.noise_multiplier), "max_grad_norm": float(self.max_grad_norm),
                "sampling": self.sampling, "sampling_rate": [s["sampling_rate"] for s in scheds],
                "steps": [s["steps"] for s in scheds], "bug": self.bug}
        bank.info = {**getattr(bank, "info", {}), **info}
        self.epsilon_ = float(max(eps))
        return bank, scores

    def _train_opacus(self, X, y, subsets, seeds, scheds, n_classes, canaries=None, device="cpu"):
        """Any torch module: Opacus's ``PrivacyEngine`` (per-example gradients by hooks), one model at a time.

        ``scheds`` are :func:`_opacus_schedule`'s (what the accountant counted); :func:`_check_opacus_ran` checks that
        the loader and optimizer ``make_private`` returns run exactly that.

        White-box canaries (``canaries = (included, "extra")``): one parameter of the auditor's own per canary, a
        tensor ``theta_c`` of m zeros that the module never reads, given to the optimizer beside the module's
        parameters (a parameter group added after ``make_private``), so that Opacus's DPOptimizer clips, sums,
        noises and updates it with the rest. Before each step
        the sampled canaries (each included one with probability q, from ``default_rng([seed_k,
        _CANARY_STREAM])``) are appended to the step's per-example gradients (``p.grad_sample``) as examples of
        their own: gradient ``canary_norm`` along their own coordinate of ``theta_c``, zero on the module's
        parameters; the batch's examples have zero gradient on ``theta_c``. ``pre_step``'s ``clip_and_accumulate``
        and ``add_noise`` then treat them as any example (Steinke et al. 2023, Sec. 5; Nasr et al. 2023's Dirac
        canaries). The auditor reads each step's noisy sum along the canaries off two iterates of ``theta_c``:
        ``(theta_t - theta_{t+1}) B / lr`` (plain SGD, Opacus's mean reduction over the expected batch B), scores it
        as the batched trainer does and measures the left-out canaries' noise (``info["canary_noise"]``).

        Planted bugs (test-only) are Opacus's own parameters changed around its calls: ``skip_clipping`` clips at
        an infinite norm (the noise keeps ``noise_multiplier * max_grad_norm``), ``skip_noise_step`` sets the
        noise multiplier to 0 in the middle step, ``noise_per_batch`` divides it by B in every step.
        """
        PrivacyEngine = require("opacus", "DP-SGD of a TorchModuleLearner").PrivacyEngine
        from ._torch_utils import import_torch, to_numpy, torch_threads
        from .torch_module import TorchModuleModel, probe_output_kind

        torch = import_torch()
        inner = self.learner
        cls, kwargs = inner._check_params()
        C = float(self.max_grad_norm)
        models = []
        m = 0 if canaries is None else int(canaries[0].shape[1])
        scores = np.zeros((len(subsets), m)) if m else None
        noise_ms = []
        cnorm = float(self.canary_norm if self.canary_norm is not None else 1000.0 * C)
        for i, (s, seed) in enumerate(zip(subsets, seeds)):
            module = inner._new_module(cls, kwargs, seed, device)
            Xs = torch.as_tensor(X[s], dtype=torch.float32)
            kind = probe_output_kind(module, Xs.to(device), name=inner.module, n_classes=n_classes)
            module.train()
            gen = torch.Generator().manual_seed(int(seed))  # the loader's batches (and, on the CPU, the noise)
            noise_gen = gen if device == "cpu" else torch.Generator(device=device).manual_seed(int(seed))
            B = scheds[i]["loader_batch_size"]
            ds = torch.utils.data.TensorDataset(Xs, torch.as_tensor(y[s], dtype=torch.int64))
            loader = torch.utils.data.DataLoader(ds, batch_size=B, shuffle=self.sampling == "shuffle",
                                                 generator=gen)
            q = scheds[i]["sampling_rate"]
            theta_c = torch.nn.Parameter(torch.zeros(m, device=device)) if m else None
            opt = torch.optim.SGD(module.parameters(), lr=float(self.lr))
            engine = PrivacyEngine(accountant="prv")
            pmod, opt, loader = engine.make_private(
                module=module, optimizer=opt, data_loader=loader, noise_multiplier=float(self.noise_multiplier),
                max_grad_norm=C, poisson_sampling=self.sampling == "poisson", noise_generator=noise_gen)
            _check_opacus_ran(scheds[i], loader, opt)
            if m:  # after make_private, which wants the module's parameters only
                opt.original_optimizer.add_param_group({"params": [theta_c]})
            self._plant_opacus_bug(opt, scheds[i]["steps"], B)
            if m:
                included = np.flatnonzero(canaries[0][i])
                left_out = ~np.asarray(canaries[0][i], bool)
                sampler = _PoissonSteps(np.random.default_rng([int(seed), _CANARY_STREAM]), included.size, q,
                                        block=min(64, scheds[i]["steps"]))
                ms = []
            mparams = [p for p in module.parameters() if p.requires_grad]
            with torch_threads(1):
                for _ in range(int(self.epochs)):
                    for xb, yb in loader:
                        xb, yb = xb.to(device), yb.to(device)
                        opt.zero_grad()
                        if len(xb):
                            out = pmod(xb)
                            logp = torch.log(out.clamp_min(1e-12)) if kind == "probs" else torch.log_softmax(out, -1)
                            torch.nn.functional.nll_loss(logp, yb).backward()
                        if not m:
                            if not len(xb):  # an empty Poisson batch: the step adds noise only
                                for p in mparams:
                                    p.grad_sample = p.new_zeros((0, *p.shape))
                            opt.step()
                            continue
                        sampled = torch.as_tensor(included[sampler.next()], dtype=torch.int64).to(device)
                        k = int(sampled.numel())
                        for p in mparams:  # the canaries: examples with no gradient on the module's parameters
                            gs = p.grad_sample if len(xb) else p.new_zeros((0, *p.shape))
                            p.grad_sample = torch.cat([gs, gs.new_zeros((k, *gs.shape[1:]))])
                        gc = theta_c.new_zeros((len(xb) + k, m))
                        gc[len(xb) + torch.arange(k, device=gc.device), sampled] = cnorm
                        theta_c.grad_sample = gc
                        before = to_numpy(theta_c).astype(np.float64)
                        opt.step()
                        x = (before - to_numpy(theta_c)) * (float(opt.expected_batch_size) / float(self.lr))
                        scores[i] += _canary_llr(x[None], C, np.array([q]))[0]
                        ms.append(float(np.mean(np.square(x[left_out]))) if left_out.any() else np.nan)
            if m:
                noise_ms.append(ms)
            module = pmod._module if hasattr(pmod, "_module") else pmod
            module.eval()
            models.append(TorchModuleModel(module, kind, X.shape[1], int(n_classes), device))
        bank = ListModelBank(models, n_classes)
        bank.info = {"trained": "opacus", "kernel": "opacus"}
        if m:
            bank.info["canary_noise"] = {"mean_square": noise_ms,
                                         "n": [int((~np.asarray(r, bool)).sum()) for r in canaries[0]]}
        return bank, scores

    def _plant_opacus_bug(self, opt, steps, B):
        """Plant ``self.bug`` (test-only) in Opacus's DPOptimizer ``opt`` by changing its parameters around its own
        ``clip_and_accumulate`` / ``add_noise`` calls (see :meth:`_train_opacus`)."""
        if self.bug is None:
            return
        clip_and_accumulate, add_noise = opt.clip_and_accumulate, opt.add_noise
        sigma, C = float(opt.noise_multiplier), float(opt.max_grad_norm)
        count = [0]

        def clip_unclipped():
            opt.max_grad_norm = math.inf
            try:
                clip_and_accumulate()
            finally:
                opt.max_grad_norm = C

        def noise_wrong():
            t = count[0]
            count[0] += 1
            if self.bug == "noise_per_batch":
                opt.noise_multiplier = sigma / max(1.0, float(B))
            elif t == steps // 2:
                opt.noise_multiplier = 0.0
            try:
                add_noise()
            finally:
                opt.noise_multiplier = sigma

        if self.bug == "skip_clipping":
            opt.clip_and_accumulate = clip_unclipped
        else:
            opt.add_noise = noise_wrong


def _opacus_schedule(n: int, B: int, epochs: int, *, poisson: bool) -> dict:
    """The schedule Opacus runs for ``n`` rows given to it in a ``DataLoader`` of batch size ``B``.

    As Opacus 1.6 computes it: the loader has ``L = ceil(n / B)`` batches (``drop_last=False``). With
    ``poisson_sampling``, ``DPDataLoader.from_data_loader`` draws every row with probability ``1 / L`` and its
    ``UniformWithReplacementSampler`` yields ``int(1 / sample_rate)`` batches an epoch, in floating point, as Opacus
    does: ``L - 1`` for some L (93, 99, 105, ...). Without it the loader's own L shuffled batches of B run. Then
    ``PrivacyEngine.make_private`` divides each step's noisy sum by ``expected_batch_size = int(n * (1 / P))``,
    P the returned loader's length (the mean reduction; its own accountant also takes ``1 / P`` as the rate,
    while the sampler draws at ``1 / L``: the rate accounted here is the one drawn). The rate equals ``B / n`` only
    when B divides n, so the rate q the user asked for is not the one that runs.

    Returns the keys of :meth:`DPSGD.schedule` and ``loader_batch_size`` (B) and ``mean_divisor``
    (Opacus's ``expected_batch_size``).
    """
    L = math.ceil(n / B)
    rate = 1 / L
    per = int(1 / rate) if poisson else L
    divisor = int(n * (1 / per))
    if divisor < 1:  # n * (1 / n) rounds below 1 for some n: Opacus would divide every step by 0
        raise InvalidParameterError(
            f"Opacus would divide each step's gradient by int({n} * (1 / {per})) = 0 with batch_size {B} on {n} "
            "rows; use a sampling_rate or batch_size giving batches of at least 2 rows")
    if poisson:
        return {"sampling_rate": rate, "batch_size": n * rate, "steps": per * epochs, "steps_per_epoch": per,
                "loader_batch_size": B, "mean_divisor": divisor}
    return {"sampling_rate": B / n, "batch_size": B, "steps": L * epochs, "steps_per_epoch": L,
            "loader_batch_size": B, "mean_divisor": divisor}


def _check_opacus_ran(sched: dict, loader, opt) -> None:
    """Refuse to train when the loader and optimizer ``make_private`` returned do not run the schedule the
    accountant counted (:func:`_opacus_schedule`; another Opacus version may sample otherwise)."""
    import opacus

    ran = {"steps_per_epoch": len(loader), "mean_divisor": int(opt.expected_batch_size)}
    if hasattr(loader, "sample_rate"):  # DPDataLoader: Poisson sampling
        ran["sampling_rate"] = float(loader.sample_rate)
    counted = {k: sched[k] for k in ran}
    if ran != counted:
        raise UnsupportedError(
            f"Opacus {opacus.__version__} runs {ran} where leakaudit's accounting counted {counted}; its epsilon "
            "would not describe the training")


def _noise_info(noise_ms, included, scheds) -> dict:
    """``bank.info["canary_noise"]``: per model, each step's mean square of the noisy sum along the canaries it
    left out (``mean_square``, a list of its T floats; coordinates no gradient reaches, so pure noise: about
    ``(noise_multiplier C)^2`` when the step is correct) and how many they are (``n``)."""
    return {"mean_square": [noise_ms[k, : s["steps"]].tolist() for k, s in enumerate(scheds)],
            "n": [int((~np.asarray(row, bool)).sum()) for row in included]}


def _canary_llr(x, c, q):
    """One step's log likelihood ratio per canary, "in this step's batch" against "not": log((1 - q) + q exp((c x -
    c^2 / 2) / s^2)).

    ``x`` (K, m): the step's noisy gradient sum along each canary of K models; ``c``: a clipped canary's
    contribution (the clip norm); ``q`` (K,): the sampling rate. s, the noise standard deviation along a canary,
    is estimated from the spread of the m components (median absolute deviation: most canaries are not in the
    batch), so that a step with too little noise shows.
    """
    med = np.median(x, axis=1, keepdims=True)
    s = 1.4826 * np.median(np.abs(x - med), axis=1, keepdims=True)
    s = np.maximum(s, 1e-6 * c)
    return np.logaddexp(np.log1p(-np.minimum(q, 1 - 1e-12))[:, None],
                        np.log(q)[:, None] + (c * x - 0.5 * c * c) / (s * s))


class _BatchedDPSGD:
    """The batched trainer: K nets (TorchMLP or TorchCNN architecture) stepped together."""

    def __init__(self, owner: DPSGD, kind, X, y, subsets, seeds, scheds, n_classes, canaries, device="cpu"):
        from ._torch_utils import import_torch

        self.torch = import_torch()
        self.device = device
        self.o, self.kind = owner, kind
        self.X, self.y, self.subsets, self.seeds, self.scheds = X, y, subsets, seeds, scheds
        self.n_classes = int(n_classes)
        self.canaries = canaries
        self.K = len(subsets)

    # -- architecture: initial parameters as a list of stacked (K, ...) arrays ----------
    def _inits(self):
        dtype = np.dtype(self.o.learner.dtype)
        rngs = [np.random.default_rng(int(s)) for s in self.seeds]
        if self.kind == "mlp":
            from ._torch_utils import init_mlp

            mlp = self.o.learner
            hidden = mlp._check_params()["hidden"]
            self.sizes = [self.X.shape[1], *hidden, self.n_classes]
            inits = [init_mlp(rng, self.sizes, dtype, scheme=mlp.init) for rng in rngs]
            shapes = []
            for l in range(len(self.sizes) - 1):
                shapes += [inits[0][0][l].shape, inits[0][1][l].shape]
            params = [np.stack([(w if i % 2 == 0 else b)[i // 2] for w, b in inits]) for i in range(len(shapes))]
        else:
            from .torch_cnn import _Net

            cnn = self.o.learner
            shape, _ = cnn._check_params()
            self.net = _Net(self.torch, shape, int(cnn.size), self.n_classes, cnn.padding)
            self.image_shape = shape
            inits = [self.net.init(rng, dtype) for rng in rngs]
            params = [np.stack([p[i] for p in inits]) for i in range(len(inits[0]))]
        return rngs, params, dtype

    # -- per-example clipped gradient sums -------------------------------------------------
    def _mlp_clipped_sum(self, P, xb, yb, w, C, clip: bool, out=None):
        """Sum over the batch of each example's gradient clipped to norm C, for K MLPs, without per-example grads.

        ``P``: [W_0, b_0, W_1, ...] stacked (K, ...); ``xb`` (K, B, d); ``yb`` (K, B); ``w`` (K, B) 1 for a
        batch row, 0 for padding. Returns the summed gradients (written into ``out``, tensors shaped like ``P``,
        when given) and the per-example norms (K, B).
        """
        torch = self.torch
        L = len(P) // 2
        act = self.o.learner.activation
        acts, h = [xb], xb
        for l in range(L):
            z = torch.baddbmm(P[2 * l + 1].unsqueeze(1), h, P[2 * l])
            if l < L - 1:
                h = torch.tanh(z) if act == "tanh" else torch.relu(z)
                acts.append(h)
            else:
                h = z
        prob = torch.softmax(h, -1)
        delta = prob - torch.nn.functional.one_hot(yb, self.n_classes).to(prob.dtype)  # d NLL / d logits
        deltas = [None] * L
        deltas[L - 1] = delta
        for l in range(L - 1, 0, -1):
            g = torch.bmm(deltas[l], P[2 * l].transpose(1, 2))
            a = acts[l]
            deltas[l - 1] = g * (1 - a * a) if act == "tanh" else g * (a > 0).to(g.dtype)
        sq = torch.zeros_like(w)
        for l in range(L):
            sq += ((acts[l] * acts[l]).sum(-1) + 1.0) * (deltas[l] * deltas[l]).sum(-1)
        norms = sq.sqrt()
        scale = w * (torch.clamp(C / (norms + 1e-6), max=1.0) if clip else 1.0)
        out = [torch.empty_like(p) for p in P] if out is None else out
        for l in range(L):
            sd = deltas[l] * scale.unsqueeze(-1)
            torch.bmm(acts[l].transpose(1, 2), sd, out=out[2 * l])
            torch.sum(sd, 1, out=out[2 * l + 1])
        return out, norms

    def _cnn_clipped_sum(self, P, xb, yb, w, C, clip: bool, out=None):
        """The same for K CNNs, from per-example gradients by ``torch.func.vmap(grad(...))`` over the batch."""
        torch = self.torch
        from torch.func import grad, vmap

        net = self.net

        def loss(P, xi, yi):  # xi (K, c, h, w), yi (K,): the sum over models of each model's NLL of one example
            logits = net.logits(P, xi.unsqueeze(1))[:, 0]
            return -torch.log_softmax(logits, -1).gather(-1, yi.unsqueeze(-1)).sum()

        x = xb.reshape(self.K, xb.shape[1], *self.image_shape)
        g = vmap(grad(loss), in_dims=(None, 1, 1))(P, x, yb)  # each (B, K, ...)
        sq = sum((gi.reshape(gi.shape[0], gi.shape[1], -1) ** 2).sum(-1) for gi in g).transpose(0, 1)  # (K, B)
        norms = sq.sqrt()
        scale = w * (torch.clamp(C / (norms + 1e-6), max=1.0) if clip else 1.0)
        out = [torch.empty_like(p) for p in P] if out is None else out
        for o, gi in zip(out, g):
            o.copy_(torch.einsum("bk...,kb->k...", gi, scale))
        return out, norms

    # -- the compiled kernel ---------------------------------------------------------------------
    def compiled_refusal(self) -> str | None:
        """Why the compiled DP step cannot train these nets (None when it can; :meth:`run` then uses it)."""
        from . import _mlp_native

        if self.device != "cpu":
            return f"the compiled DP step is CPU code; device {self.device!r} trains with the torch loop"
        if self.kind != "mlp":
            return "the compiled DP step trains TorchMLP nets (TorchCNN trains with torch.func)"
        if self.o.learner._check_params()["backend"] != "compiled":
            return ("the wrapped TorchMLP trains with torch (backend='torch', or a net the kernel has no copy for: "
                    "one hidden layer, float32, its widths)")
        if not _mlp_native.supports_dp():
            return f"the compiled kernel is not available ({_mlp_native.KERNEL.reason})"
        if self.canaries is not None and self.canaries[1] != "extra":
            return "gradient canaries along the net's own parameters ('dirac', 'random') are inserted by the torch loop"
        if self.canaries is not None and not _mlp_native.supports_dp_canaries():
            return "the compiled DP step predates gradient canaries (rebuild the kernels)"
        return None

    def _run_compiled(self):
        """The torch loop below, model by model in the compiled kernel (``_mlp_native.DpTrainer``).

        The module docstring's "The compiled step" says what it shares with the torch loop (initial weights,
        batches from :meth:`_batch`) and what it does not (the noise, from ``noise_state([seed_k,
        _NOISE_STREAM])``). The rows go to the kernel as the wrapped TorchMLP's fast mode gives them (its
        ``sparse_input`` rule, one-hot groups, dense rows).

        "extra" gradient canaries: m parameters after the net's in the kernel's own parameter vector, so that the
        kernel clips each sampled canary's gradient, adds it to the step's sum and noises and updates them in the
        loop that noises the net (one stream: the net's draws are the first P of each step's, so with canaries
        the net's noise differs from a run without them, in value, not in distribution). The canaries' batches
        are the torch loop's (``default_rng([seed_k, _CANARY_STREAM])``). One step per kernel call: the auditor
        reads each step's noisy sum off two consecutive iterates, ``(theta_t - theta_{t+1}) / (lr inv)``.
        """
        from . import _mlp_native as nat
        from ._threads import for_each_model

        o = self.o
        mlp = o.learner
        rngs, params, _ = self._inits()
        d, H, C = self.sizes
        packed = nat.pack_1h([params[0], params[2]], [params[1], params[3]], np.float32)
        X32 = np.ascontiguousarray(self.X, dtype=np.float32)
        sparse = mlp._use_sparse(self.X, self.subsets)
        xdense = X32 if not sparse and nat.DENSE else None
        indptr, indices, values = nat.csr_rows(X32, sparse) if xdense is None else (None, None, None)
        y64 = np.ascontiguousarray(self.y, dtype=np.int64)
        xsq = np.einsum("ij,ij->i", X32, X32)  # |x|^2 of every input of a row (one-hot groups' dropped ones too)
        sigma, clip = float(o.noise_multiplier), float(o.max_grad_norm)
        Tmax = max(s["steps"] for s in self.scheds)
        bad_step = Tmax // 2 if o.bug == "skip_noise_step" else -1
        # steps per kernel call (batches drawn a block at a time)
        S = max(1, min(Tmax, 64))
        perms: list = [None] * self.K
        groups = [0] * self.K
        P = nat.n_params_1h(d, H, C)
        E = 0 if self.canaries is None else int(self.canaries[0].shape[1])
        scores = np.zeros((self.K, E)) if E else None
        # per step, the mean square of the noisy sum along the canaries left out (pure noise: no gradient reaches
        # them), for the per-step noise check (leakaudit.dpaudit.noise_check)
        noise_ms = np.full((self.K, Tmax), np.nan) if E else None
        if E:
            S = 1  # the auditor reads every iterate
            cnorm = float(o.canary_norm if o.canary_norm is not None else 1000.0 * clip)

        def one(k):
            sch = self.scheds[k]
            T, denom, q = sch["steps"], float(sch["batch_size"]), sch["sampling_rate"]
            tr = nat.DpTrainer(indptr=indptr, indices=indices, values=values, x=xdense, y=y64, xsq=xsq,
                               rows=self.subsets[k], d=d, H=H, C=C, lr=float(o.lr), inv=1.0 / denom,
                               clip=clip if o.bug != "skip_clipping" else math.inf,
                               activation=0 if mlp.activation == "tanh" else 1,
                               onehot=sparse and nat.ONEHOT, extra=E, canary_norm=cnorm if E else 0.0)
            groups[k] = tr.groups
            params = packed[k]
            if E:  # the net's parameters, then the canaries' (starting at 0)
                params = np.zeros(P + E, np.float32)
                params[:P] = packed[k, :P]
                included = np.flatnonzero(self.canaries[0][k])
                left_out = ~self.canaries[0][k]
                csampler = _PoissonSteps(np.random.default_rng([int(self.seeds[k]), _CANARY_STREAM]), included.size,
                                         q, block=min(64, T))
                to_sum = 1.0 / (float(np.float32(o.lr)) * float(np.float32(1.0 / denom)))
            # the noise standard deviation of the step's sum, divided by the expected batch as the sum is
            std = sigma * clip / (max(1.0, denom) if o.bug == "noise_per_batch" else 1.0)
            state = nat.noise_state([int(self.seeds[k]), _NOISE_STREAM]) if sigma > 0 else None
            sub = np.ascontiguousarray(self.subsets[k], dtype=np.int64)
            for t0 in range(0, T, S):
                ns = min(S, T - t0)
                step_ptr = np.zeros(ns + 1, np.int64)
                if o.sampling == "poisson":  # the block's steps at once (the same draws as _batch's, step by step)
                    if perms[k] is None:
                        perms[k] = _PoissonSteps(rngs[k], sub.size, q, block=min(64, T))
                    rows, sizes = perms[k].take(ns)
                    batch = sub[rows]
                    np.cumsum(sizes, out=step_ptr[1:])
                else:
                    batches = [self._batch(k, t, rngs[k], q, perms) for t in range(t0, t0 + ns)]
                    np.cumsum([b.size for b in batches], out=step_ptr[1:])
                    batch = np.concatenate(batches).astype(np.int64, copy=False)
                nscale = np.full(ns, std / denom, np.float32)
                if t0 <= bad_step < t0 + ns:
                    nscale[bad_step - t0] = 0.0
                if not E:
                    tr.steps(params, batch, step_ptr, state, nscale)
                    continue
                cbatch = included[csampler.next()]  # one step (S = 1)
                before = params[P:].astype(np.float64)
                tr.steps(params, batch, step_ptr, state, nscale, cbatch=cbatch,
                         cstep_ptr=np.array([0, cbatch.size], np.int64))
                noisy_sum = (before - params[P:]) * to_sum
                scores[k] += _canary_llr(noisy_sum[None], clip, np.array([q]))[0]
                noise_ms[k, t0] = float(np.mean(np.square(noisy_sum[left_out]))) if left_out.any() else np.nan
            if E:
                packed[k, :P] = params[:P]

        for_each_model(one, self.K, mlp.n_threads)
        (W1, W2), (b1, b2) = nat.unpack_1h(packed, d, H, C)
        bank = self._bank([W1, b1, W2, b2])
        bank.info = {**bank.info, "kernel": "native", "onehot_groups": int(max(groups, default=0))}
        if E:
            bank.info["canary_noise"] = _noise_info(noise_ms, self.canaries[0], self.scheds)
        return bank, scores

    # -- the loop ------------------------------------------------------------------------------
    def run(self):
        if self.compiled_refusal() is None:
            return self._run_compiled()
        from ._torch_utils import to_numpy, torch_threads

        torch = self.torch
        o = self.o
        dev = self.device
        rngs, params, dtype = self._inits()
        # the noise of model k from its own stream (so that batches follow the wrapped learner's draws exactly),
        # a torch generator (torch's normal_ is faster than numpy's for these sizes: benchmarks/README.md)
        noise_gens = [_torch_generator(torch, s, _NOISE_STREAM, device=dev) for s in self.seeds]
        K = self.K
        C = float(o.max_grad_norm)
        sigma = float(o.noise_multiplier)
        lr = float(o.lr)
        clip = o.bug != "skip_clipping"
        shapes = [p.shape[1:] for p in params]
        sizes = [int(np.prod(s)) for s in shapes]
        offs = np.concatenate([[0], np.cumsum(sizes)])
        Ptot = int(offs[-1])
        canary = self._canary_setup(Ptot, dtype) if self.canaries is not None else None
        # "extra" canaries live on parameters of their own after the net's (see _canary_setup): noised, updated
        extra = canary["extra"] if canary is not None else 0
        flat = torch.zeros((K, Ptot + extra), dtype=torch.float32 if dtype == np.float32 else torch.float64, device=dev)
        flat[:, :Ptot] = torch.from_numpy(np.concatenate([p.reshape(K, -1) for p in params], axis=1).astype(dtype)).to(dev)
        views = [flat[:, offs[i]:offs[i + 1]].view(K, *shapes[i]) for i in range(len(shapes))]
        g = torch.zeros_like(flat)  # the step's noisy clipped sum, written in place every step
        gviews = [g[:, offs[i]:offs[i + 1]].view(K, *shapes[i]) for i in range(len(shapes))]
        noise = torch.empty_like(flat)
        Xt = torch.from_numpy(self.X.astype(dtype)).to(dev)
        yt = torch.from_numpy(self.y.astype(np.int64)).to(dev)
        T = [s["steps"] for s in self.scheds]
        Tmax = max(T)
        q = np.array([s["sampling_rate"] for s in self.scheds])
        denom_np = np.array([[s["batch_size"]] for s in self.scheds], dtype=np.float64)
        bad_step = Tmax // 2 if o.bug == "skip_noise_step" else -1
        clipped_sum = self._mlp_clipped_sum if self.kind == "mlp" else self._cnn_clipped_sum
        scores = np.zeros((K, canary["m"])) if canary is not None else None
        noise_ms = np.full((K, Tmax), np.nan) if extra else None  # see _run_compiled
        if canary is not None:  # the canaries' draws from streams of their own (see _CANARY_STREAM)
            canary_rngs = [np.random.default_rng([int(s), _CANARY_STREAM]) for s in self.seeds]
            extra_gens = [_torch_generator(torch, s, _NOISE_STREAM, 1, device=dev) for s in self.seeds]
        perms: list = [None] * K
        std = np.full(K, sigma * C, dtype=dtype)
        if o.bug == "noise_per_batch":
            std = (std / np.maximum(1.0, denom_np[:, 0])).astype(dtype)
        std_t = torch.from_numpy(std).unsqueeze(1).to(dev)
        with torch_threads(1), torch.no_grad():
            for t in range(Tmax):
                active = np.array([t < T[k] for k in range(K)])
                batches = [self._batch(k, t, rngs[k], q[k], perms) if active[k] else np.zeros(0, np.int64)
                           for k in range(K)]
                Bmax = max(1, max(b.size for b in batches))
                idx = np.zeros((K, Bmax), dtype=np.int64)
                wm = np.zeros((K, Bmax), dtype=dtype)
                for k, b in enumerate(batches):
                    idx[k, : b.size] = b
                    wm[k, : b.size] = 1
                it = torch.from_numpy(idx).to(dev)
                xb = torch.index_select(Xt, 0, it.view(-1)).view(K, Bmax, *Xt.shape[1:])
                clipped_sum(views, xb, yt[it], torch.from_numpy(wm).to(dev), C, clip, gviews)  # overwrites g[:, :Ptot]
                if canary is not None:
                    g[:, Ptot:].zero_()  # the canaries' own parameters: no data gradient
                    self._add_canary_grads(canary, g, canary_rngs, q, active, C, clip)
                for k, gen in enumerate(noise_gens):
                    noise[k, :Ptot].normal_(generator=gen)
                    if extra:
                        noise[k, Ptot:].normal_(generator=extra_gens[k])
                if t != bad_step:
                    g.addcmul_(noise, std_t)
                # theta -= lr * (clipped sum + noise) / expected batch; a model past its last step stays
                coef = torch.from_numpy(np.where(active, lr / denom_np[:, 0], 0.0).astype(dtype)).unsqueeze(1).to(dev)
                flat.addcmul_(g, coef, value=-1.0)
                if canary is not None:
                    # the auditor reads the noisy sum off two consecutive iterates: (theta_t - theta_{t+1}) B / lr,
                    # which is g up to rounding; g itself is used (the same numbers the update was made of)
                    gn = to_numpy(g)
                    self._canary_score(canary, scores, gn, q, active)
                    if extra:
                        x = gn[:, Ptot:].astype(np.float64)
                        for k in np.flatnonzero(active):
                            out_k = ~canary["inc"][k]
                            noise_ms[k, t] = float(np.mean(np.square(x[k, out_k]))) if out_k.any() else np.nan
        out = [to_numpy(flat[:, offs[i]:offs[i + 1]].reshape(K, *shapes[i])).copy() for i in range(len(shapes))]
        bank = self._bank(out)
        if extra:
            bank.info["canary_noise"] = _noise_info(noise_ms, canary["inc"], self.scheds)
        return bank, scores

    def _batch(self, k, t, rng, q, perms):
        """Model k's rows of step t: a Poisson sample (ascending), or the next slice of this epoch's permutation.

        Steps are asked for in order; ``perms[k]`` holds model k's sampler state (its epoch's permutation, or
        its :class:`_PoissonSteps` on ``rng``).
        """
        s = self.subsets[k]
        if self.o.sampling == "poisson":
            if perms[k] is None:
                perms[k] = _PoissonSteps(rng, s.size, q, block=min(64, self.scheds[k]["steps"]))
            return s[perms[k].next()]
        sch = self.scheds[k]
        per, B = sch["steps_per_epoch"], sch["batch_size"]
        j = t % per
        if j == 0:
            perms[k] = s[rng.permutation(s.size)]
        return perms[k][j * B : (j + 1) * B]

    # -- white-box gradient canaries --------------------------------------------------------
    def _canary_setup(self, Ptot, dtype):
        inc, directions = self.canaries
        m = inc.shape[1]
        norm = float(self.o.canary_norm if self.o.canary_norm is not None else 1000.0 * self.o.max_grad_norm)
        base = {"m": m, "inc": inc, "included": [np.flatnonzero(row) for row in inc], "norm": norm,
                "dtype": dtype, "U": None, "extra": 0}
        if directions == "extra":
            # m parameters of the auditor's own after the net's: first-layer weights of inputs that are 0 in every
            # row, so no data gradient reaches them (the trainer skips them in the forward and backward pass)
            # while the mechanism clips, noises and updates them like every other parameter
            return {**base, "coords": Ptot + np.arange(m, dtype=np.int64), "extra": m}
        if directions == "dirac":
            if m > Ptot:
                raise InvalidInputError(f"{m} Dirac canaries need as many parameters; the net has {Ptot}")
            # first-layer weights (row-major (d, h1): weight [j, u] is coordinate j * h1 + u) of the rarest
            # input features first, spread over the hidden units
            h1 = self.sizes[1]
            nnz = np.count_nonzero(self.X, axis=0)
            feat = np.argsort(nnz, kind="stable")
            coords = (feat[:, None] * h1 + np.arange(h1)[None, :]).ravel()
            if m > coords.size:
                coords = np.concatenate([coords, np.setdiff1d(np.arange(Ptot), coords)])
            return {**base, "coords": coords[:m].astype(np.int64)}
        # random directions: fixed by the included mask's size only (the same for every model), seeded apart
        U = np.random.default_rng(0xC0FFEE).standard_normal((m, Ptot))
        U /= np.linalg.norm(U, axis=1, keepdims=True)
        return {**base, "coords": None, "U": U.astype(dtype)}

    def _add_canary_grads(self, canary, g, rngs, q, active, C, clip):
        """Add the clipped gradients of this step's sampled canaries to ``g`` (K, P): each included canary joins
        the batch with probability q (model k's :class:`_PoissonSteps` on ``rngs[k]``, kept in ``canary``)."""
        size = min(canary["norm"], C) if clip else canary["norm"]
        torch = self.torch
        samplers = canary.setdefault("samplers", [None] * len(rngs))
        for k in range(len(rngs)):
            if not active[k]:
                continue
            inc = canary["included"][k]
            if samplers[k] is None:
                samplers[k] = _PoissonSteps(rngs[k], inc.size, q[k], block=min(64, self.scheds[k]["steps"]))
            sampled = inc[samplers[k].next()]
            if canary["coords"] is not None:
                g[k, torch.from_numpy(canary["coords"][sampled]).to(g.device)] += size
            else:
                g[k, : canary["U"].shape[1]] += torch.from_numpy(size * canary["U"][sampled].sum(0)).to(g.device)

    def _canary_score(self, canary, scores, noisy_sum, q, active):
        """Add this step's log likelihood ratio per canary (:func:`_canary_llr`, with c = C).

        ``noisy_sum`` (K, P) is the step's noisy gradient sum (what ``(theta_t - theta_{t+1}) * batch / lr``
        gives); x is its component along each canary.
        """
        if canary["coords"] is not None:
            x = noisy_sum[:, canary["coords"]].astype(np.float64)
        else:
            x = noisy_sum[:, : canary["U"].shape[1]] @ canary["U"].T
        scores += np.where(active[:, None], _canary_llr(x, float(self.o.max_grad_norm), q), 0.0)

    def _bank(self, out):
        if self.kind == "mlp":
            from ._torch_utils import MLPBank

            L = len(out) // 2
            return MLPBank([out[2 * l] for l in range(L)], [out[2 * l + 1] for l in range(L)],
                           self.o.learner.activation, info={"sizes": self.sizes})
        from .torch_cnn import CNNBank

        cnn = self.o.learner
        return CNNBank(out, net_args=(self.image_shape, int(cnn.size), self.n_classes, cnn.padding), info={},
                       device=self.device)
