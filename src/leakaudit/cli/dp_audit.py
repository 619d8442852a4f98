"""``leakaudit dp-audit``: check a DP-SGD training recipe's claimed (epsilon, delta) with a one-run audit."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from ._echo import echo
from ._outputs import writing_into
from ._typer import Command, not_given

__all__ = ["HELP", "register", "run_dp_audit"]

#: ``leakaudit --help``'s line for the command (its options list the registered datasets, which import the
#: numerical stack: registered only when it runs)
HELP = {"dp-audit": "Check a DP-SGD recipe's claimed (epsilon, delta): one run with canaries gives a lower bound "
                    "on epsilon."}


def run_dp_audit(*, dataset: str, n_train: int, claimed_epsilon: float, delta: float,
                 noise_multiplier: float | None, sampling_rate: float, epochs: int, max_grad_norm: float,
                 lr: float, hidden: int, module: str | None, module_kwargs: str | None, canaries: str, m: int | None,
                 bound: str, confidence: float, seed: int, out: Path, on_step=None, device: str = "cpu") -> dict:
    """Build the recipe, refuse impossible claims, run the audit, write ``dp_audit.json``; return what it holds.

    ``device``: where the nets train (:func:`~leakaudit.cli._device.with_device`)."""
    import numpy as np

    from .._results import write_json_atomic
    from .._validation import check_scalar
    from ..dpaudit.dpsgd import (
        audit_dpsgd,
        audited_rows,
        calibrate_noise_multiplier,
        check_dp_claim,
    )
    from ..exceptions import InvalidParameterError
    from ..learners.dp_sgd import DPSGD
    from ._device import resolved_device, with_device
    from .membership import load_dataset

    step = on_step or (lambda doing: None)
    check_scalar(n_train, name="--n-train", kind=int, min_val=2)
    if m is not None:
        check_scalar(m, name="--m", kind=int, min_val=2)
    check_scalar(epochs, name="--epochs", kind=int, min_val=1)
    check_scalar(hidden, name="--hidden", kind=int, min_val=1)
    check_scalar(max_grad_norm, name="--max-grad-norm", min_val=0.0, include_min=False)
    check_scalar(lr, name="--lr", min_val=0.0, include_min=False)
    if not 0 < confidence < 1:
        raise InvalidParameterError(f"--confidence must be in (0, 1); got {confidence}")
    # the DP parameters are checked before any data is read: impossible claims cost nothing
    check_dp_claim(noise_multiplier=1.0 if noise_multiplier is None else noise_multiplier,
                   sampling_rate=sampling_rate, delta=delta, n=n_train, claimed_epsilon=claimed_epsilon,
                   names={"epsilon": "--epsilon", "noise_multiplier": "--noise-multiplier",
                          "sampling_rate": "--sampling-rate", "delta": "--delta", "n": "--n-train"})
    if module is not None:
        from ..learners.torch_module import TorchModuleLearner

        try:
            kwargs = json.loads(module_kwargs) if module_kwargs else {}
        except json.JSONDecodeError as exc:
            raise InvalidParameterError(f"--module-kwargs must be a JSON object; {exc}") from None
        if not isinstance(kwargs, dict):
            raise InvalidParameterError(f"--module-kwargs must be a JSON object; got {module_kwargs!r}")
        inner = TorchModuleLearner(module=module, module_kwargs=kwargs)
    else:
        from ..learners.torch_mlp import TorchMLP

        inner = TorchMLP(hidden=(hidden,))
    learner = DPSGD(learner=inner, noise_multiplier=1.0 if noise_multiplier is None else noise_multiplier,
                    max_grad_norm=max_grad_norm, sampling="poisson", sampling_rate=sampling_rate, epochs=epochs,
                    lr=lr, target_delta=delta)
    learner = with_device(learner, device, model=module or "mlp")
    if m is None and canaries == "input":
        m = 1000
    if module is None:  # before calibrating (its accountant composes every step) with the least width: 1 column
        _check_dp_run_size(1, 2, n_train=n_train, hidden=hidden, epochs=epochs, sampling_rate=sampling_rate, m=m,
                           canaries=canaries, at_least=True)
    calibrated = noise_multiplier is None
    if calibrated:  # for the rows the audited run trains on (input canaries join them)
        step("calibrating the noise multiplier to the claimed epsilon")
        n_fit = audited_rows(n_train, m=m, canaries=canaries, random_state=seed)
        learner.set_params(noise_multiplier=calibrate_noise_multiplier(learner, n_fit, claimed_epsilon, delta))
    step(f"loading {dataset}")
    n_pool = n_train + (m if canaries == "input" else 0)
    X, y, note = load_dataset(dataset, n_pool, seed)
    if len(X) < n_pool:
        raise InvalidParameterError(f"{dataset} has {len(X)} rows; --n-train + canary rows = {n_pool}")
    if module is None:  # again at the data's width
        _check_dp_run_size(X.shape[1], int(y.max()) + 1, n_train=n_train, hidden=hidden, epochs=epochs,
                           sampling_rate=sampling_rate, m=m, canaries=canaries)
    perm = np.random.default_rng(seed).permutation(len(X))
    tr, pool = perm[:n_train], perm[n_train:n_pool]
    step(f"training once with {m or 'the default number of'} {canaries} canaries")
    res = audit_dpsgd(learner, X[tr], y[tr], claimed_epsilon=claimed_epsilon, delta=delta, m=m, canaries=canaries,
                      X_canary=X[pool] if canaries == "input" else None, beta=1 - confidence, bound=bound,
                      n_classes=int(y.max()) + 1, random_state=seed)
    summary = {"dataset": dataset, "dataset_note": note, "model": module or f"mlp({hidden})", "seed": seed,
               "device": resolved_device(learner), "noise_multiplier_calibrated": calibrated, **res.to_dict()}
    step("writing the results")
    write_json_atomic(out / "dp_audit.json", summary)
    return summary


def _check_dp_run_size(d: int, n_classes: int, *, n_train: int, hidden: int, epochs: int, sampling_rate: float,
                       m: int | None, canaries: str, at_least: bool = False) -> None:
    """Refuse, before the MLP trains, a run whose parameters, per-example gradients and gradient canaries (8 bytes a
    parameter each) take more than the memory budget, or whose steps (every epoch reads each row's forward and
    backward pass: three multiply-adds a parameter) more than the work budget. ``at_least``: ``d`` and ``n_classes``
    are lower bounds (the data not read yet)."""
    from ..engine import check_memory, check_work

    params = (d + 1) * hidden + (hidden + 1) * n_classes
    least = "at least " if at_least else ""
    with_m = ", the --m canaries" if canaries == "gradient" and m else ""
    vectors = 4 + sampling_rate * n_train + (m or 0) * (canaries == "gradient")
    check_memory(8.0 * params * vectors, f"an MLP of {least}{params:,} parameters (--hidden {hidden:,}) with "
                 f"{vectors:,.0f} gradient vectors (a batch of --sampling-rate x --n-train{with_m}) would take",
                 fix="use fewer hidden units, canaries or a lower sampling rate")
    check_work(3.0 * epochs * (n_train + (m or 0) * (canaries == "input")) * params,
               f"{epochs:,} epochs of DP-SGD over {n_train:,} rows with {least}{params:,} parameters",
               fix="train fewer epochs (--epochs), hidden units (--hidden) or rows (--n-train)")


def register(app: typer.Typer) -> None:
    """Add ``leakaudit dp-audit`` to the command line."""
    from ..data.registry import dataset_names
    from ._device import DEVICE_HELP

    @app.command("dp-audit", cls=Command, help=HELP["dp-audit"])
    def dp_audit(
        epsilon: float = typer.Option(..., "--epsilon", help="The claimed epsilon."),
        delta: float = typer.Option(1e-5, "--delta", help="The claimed delta (below 1/n)."),
        dataset: str = typer.Option("adult", "--dataset", help=f"One of: {', '.join(dataset_names())}."),
        n_train: int = typer.Option(5000, "--n-train", help="Training rows."),
        noise_multiplier: float = not_given("--noise-multiplier", "sigma (noise std / clip norm).",
                                            default="calibrated to the claimed epsilon"),
        sampling_rate: float = typer.Option(0.01, "--sampling-rate", help="Poisson sampling rate q, in (0, 1]."),
        epochs: int = typer.Option(5, "--epochs", help="Epochs: ceil(epochs / q) steps (a --module: Opacus's own "
                                                        "schedule, rate 1 / ceil(n / round(q n)))."),
        max_grad_norm: float = typer.Option(1.0, "--max-grad-norm", help="Per-example clipping norm C."),
        lr: float = typer.Option(0.5, "--lr", help="SGD step size."),
        hidden: int = typer.Option(64, "--hidden", help="Hidden tanh units of the MLP."),
        module: str = not_given("--module", "A torch module class pkg.mod:Class to train instead (Opacus; gradient "
                                            "canaries on parameters of the auditor's own).", default="the MLP"),
        module_kwargs: str = not_given("--module-kwargs", "JSON object of the module's constructor arguments.",
                                       default="{}"),
        canaries: str = typer.Option("gradient", "--canaries",
                                     help="gradient (white-box, inserted into every step) or input (black-box)."),
        m: int = not_given("--m", "Canaries, each included with probability 1/2.",
                           default="ceil(1400 / q) within [1000, 200000] for gradient canaries, more for a large "
                                   "claim (up to 2000000 where a one-step leak can be shown affordably); 1000 for "
                                   "input canaries"),
        bound: str = typer.Option("best", "--bound",
                                  help="best (the larger of steinke2023 and fdp, each at half the error rate), "
                                       "steinke2023 (Steinke et al.'s Theorem 3.1), fdp (the f-DP analysis of the "
                                       "(epsilon, delta) curve) or gdp (assumes a Gaussian trade-off curve)."),
        confidence: float = typer.Option(0.95, "--confidence", help="Confidence of the lower bound."),
        seed: int = typer.Option(0, "--seed", help="Seed of the data split, the canaries and training."),
        out: Path = typer.Option(Path("runs/dp-audit"), "--out", help="Writes dp_audit.json here."),
        memory_budget: str = typer.Option(
            None, "--memory-budget", help="Memory that a --module's gradient canaries may take (e.g. 4GB; Opacus "
                                          "holds them as a dense (batch + canaries) x m gradient): the default "
                                          "count is lowered to fit, a larger --m is refused. (default: a quarter "
                                          "of physical memory)"),
        device: str = typer.Option("cpu", "--device", help=DEVICE_HELP),
    ) -> None:
        from ..exceptions import InvalidParameterError

        if canaries not in ("gradient", "input"):
            raise InvalidParameterError(f"--canaries must be gradient or input; got {canaries!r}")
        from ..dpaudit.search import BOUNDS

        if bound not in BOUNDS:
            raise InvalidParameterError(f"--bound must be one of {', '.join(BOUNDS)}; got {bound!r}")
        from ..engine import parse_memory_size, using_memory_budget

        budget = None if memory_budget is None else parse_memory_size(memory_budget, name="--memory-budget")
        with (writing_into(out, "dp-audit", ["dp_audit.json"]) as progress,
              using_memory_budget(budget)):
            s = run_dp_audit(dataset=dataset, n_train=n_train, claimed_epsilon=epsilon, delta=delta,
                             noise_multiplier=noise_multiplier, sampling_rate=sampling_rate, epochs=epochs,
                             max_grad_norm=max_grad_norm, lr=lr, hidden=hidden, module=module,
                             module_kwargs=module_kwargs, canaries=canaries, m=m, bound=bound,
                             confidence=confidence, seed=seed, out=out, on_step=progress.step, device=device)
        echo(f"claim: epsilon {s['claimed_epsilon']:g} at delta {s['delta']:g} "
                   f"(accountant: {s['accounted_epsilon']:.3f}; noise multiplier {s['noise_multiplier']:.4g}, "
                   f"q {s['sampling_rate']:g}, {s['steps']} steps)")
        echo(f"empirical lower bound: {s['epsilon_lower_bound']:.3f} at {100 * s['confidence']:g}% confidence "
                   f"({s['bound']}; {s['correct']} of {s['guesses']} guesses right, {s['m']} {s['canaries']} "
                   f"canaries)")
        alone = {"Theorem 3.1": s.get("steinke_epsilon_lower_bound"), "f-DP (epsilon, delta)":
                 s.get("fdp_epsilon_lower_bound"), "Gaussian f-DP": s.get("gdp_epsilon_lower_bound")}
        echo("each analysis alone at the full confidence: "
                   + "; ".join(f"{k} {v:.3f}" for k, v in alone.items() if v is not None))
        echo(f"verdict: {s['verdict']}")
        if s.get("noise_check_verdict") is not None:
            e = s.get("noise_check_epsilon_lower_bound")
            # a separate kind of evidence, never mixed into the lower bound above (leakaudit.dpaudit.noise_check)
            shown = "infinite" if e is None or e == float("inf") else format(e, ".3f")
            echo("per-step noise check (separate from the bound; each step's noise bounded above on the "
                       f"left-out canaries): epsilon at least {shown} at "
                       f"{100 * s['confidence']:g}% confidence, smallest step's noise / claimed "
                       f"{s['noise_check_min_ratio']:.3f}; {s['noise_check_verdict']}")
        echo(f"wrote {out}/dp_audit.json")
