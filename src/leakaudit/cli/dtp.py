"""``leakaudit dtp``: PDTP, exact DTP, bounds, the DTP-1 verdict and DTP reduction from the command line.

Data come from a named dataset (``adult``, ``adult-proxy``, ``purchase-like``) or a
CSV/Parquet table (``--data FILE --label COLUMN``); ``--rows N`` trains on a random
sample of N rows (the training set T). Every command writes a JSON result
(``--out``) and prints the DTP-1 verdict.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

import typer

from ..exceptions import InvalidParameterError
from ._echo import echo
from ._typer import Command, Group, not_given

if TYPE_CHECKING:
    import numpy as np

NAMED = ("adult", "adult-proxy", "purchase-like")
#: ``leakaudit --help``'s line for the group (its models' names import the learners: read only when it runs)
HELP = {"dtp": "Differential training privacy (Long et al.): PDTP, DTP, bounds, DTP-1, reduction."}


def models() -> tuple[str, ...]:
    """The registry's naive-Bayes family (trained on category codes) and two learners on one-hot features."""
    from ..learners.registry import learner_names

    return (*learner_names(inputs="codes"), "logreg", "mlp")


def _bin_width(text: str) -> float | None:
    if text.lower() in ("none", "off", "0"):
        return None
    try:
        return float(text)
    except ValueError:
        raise InvalidParameterError(f"--bin-width must be a number or 'none'; got {text!r}") from None


def count_option(value: Optional[int], *, flag: str, default: int, available: int, what: str) -> int:
    """A count given on the command line (``--rows``, ``--records``): at least 1 and at most ``available``, or,
    not given (None), ``default`` capped at ``available``. A count beyond what there is, or below 1, is refused
    rather than silently capped or read as "all"."""
    if value is None:
        return min(default, available)
    if value < 1:
        raise InvalidParameterError(f"{flag} must be at least 1; got {value} (leave {flag} out for the default)")
    if value > available:
        raise InvalidParameterError(f"{flag} {value} exceeds the {available} {what}; give at most {available}")
    return value


def _random_records(records: Optional[int], *, default: int, n: int, seed: int) -> np.ndarray:
    """``--records`` (None: ``default``) random training records of the ``n``, sorted."""
    import numpy as np

    k = count_option(records, flag="--records", default=default, available=n, what="training records (--rows)")
    return np.sort(np.random.default_rng(seed).choice(n, k, replace=False))


def load_training_set(data: str, label: Optional[str], model: str, rows: Optional[int], seed: int,
                      device: str = "cpu", *, default_rows: int = 1000) -> tuple[np.ndarray, np.ndarray, Any]:
    """Features encoded for ``model`` (codes for naive Bayes, one-hot otherwise), labels, and the learner (on
    ``device``: :func:`~leakaudit.cli._device.with_device`, checked before the data are read).

    ``rows``: how many random rows of the data train the model (None: ``default_rows``, or every row of a smaller
    table; more rows than the data has is refused)."""
    import numpy as np

    from .. import data as dmod
    from .._validation import clip
    from ..learners.naive_bayes import encode_for_naive_bayes
    from ..learners.registry import get_learner, make_learner
    from ._device import with_device

    if model not in models():
        raise InvalidParameterError(f"--model must be one of {', '.join(models())}; got {model!r}")
    if rows is not None and rows < 1:
        raise InvalidParameterError(f"--rows must be at least 1; got {rows} (leave --rows out for the default)")
    with_device(make_learner(model), device, model=model)  # a device the learner cannot use: before any data
    if data == "adult":
        ds = dmod.load_adult(columns="long")
    elif data == "adult-proxy":
        ds = dmod.load_adult(columns="acs_proxy")
    elif data == "purchase-like":
        n_gen = max(default_rows if rows is None else rows, 2000)
        ds = dmod.make_purchase_like(n_records=n_gen, n_features=836, n_classes=10, random_state=seed)
    else:
        if label is None:
            raise InvalidParameterError("--label is required with a table file (--data FILE)")
        from ..audit.inputs.data import read_records

        frame = read_records(data, "--data")
        if label not in frame.columns:
            raise InvalidParameterError(f"--label {label!r} is not a column of {data}; columns: "
                                        f"{clip(', '.join(map(str, frame.columns)), 200)}")
        ds = dmod.from_frame(frame, label, task="classification")
    rng = np.random.default_rng(seed)
    n = count_option(rows, flag="--rows", default=default_rows, available=len(ds), what=f"rows of {data}")
    idx = np.sort(rng.choice(len(ds), size=n, replace=False))
    ds = ds.subset(idx)
    y = np.asarray(ds.y, dtype=np.int64)
    if get_learner(model).inputs == "codes":
        # Bayes inference keys on whole rows, so every column is categorical for it
        numeric = "none" if (data == "adult-proxy" or model == "bayes-inference") else "auto"
        X, cat, nv, _ = encode_for_naive_bayes(ds.frame, numeric=numeric)
        if model == "bayes-inference":
            return X, y, make_learner(model)
        return X, y, make_learner(model, categorical=cat, n_values=nv)
    X, _ = ds.encode()
    if model == "logreg":
        return X, y, make_learner("logreg", C=1.0)  # more regularised than the registry's default (C = 1000)
    return X, y, with_device(make_learner("mlp"), device, model=model)


def _out_file(value: Optional[Path]) -> Optional[Path]:
    from .._results import check_output_file

    return check_output_file(value)


def _write(out: Optional[Path], result: Any) -> None:
    if out is not None:
        from .._results import write_json_atomic

        write_json_atomic(out, result.to_dict())
        echo(f"wrote {out}")


def register(app: typer.Typer) -> None:
    """Add ``leakaudit dtp ...`` to the main app."""
    from .._interrupt import on_interrupt
    from ._device import DEVICE_HELP

    dtp_app = typer.Typer(help=HELP["dtp"],
                          no_args_is_help=True, cls=Group)

    data_opt = typer.Option("adult", "--data", help=f"one of {', '.join(NAMED)}, or a CSV/Parquet file")
    label_opt = not_given("--label", "label column of a table file (required with a file)")
    model_opt = typer.Option("nb", "--model", help=f"one of {', '.join(models())}")
    rows_opt = typer.Option(None, "--rows", help="training-set size: random rows of the data, at most its size "
                                                 "(default: 1000, or every row of a smaller table)")
    seed_opt = typer.Option(0, "--seed", help="random seed (rows drawn, models trained)")
    bin_opt = typer.Option("0.01", "--bin-width", help="output bin width, or 'none'")
    device_opt = typer.Option("cpu", "--device", help=DEVICE_HELP)
    out_opt = not_given("--out", "write the JSON result to this file (checked before any work)",
                        default="none, only printed", callback=_out_file)

    @dtp_app.command("pdtp", cls=Command)
    def pdtp_cmd(
        data: str = data_opt, label: Optional[str] = label_opt, model: str = model_opt,
        rows: Optional[int] = rows_opt,
        seed: int = seed_opt, bin_width: str = bin_opt, out: Optional[Path] = out_opt, device: str = device_opt,
        records: Optional[int] = typer.Option(
            None, "--records", help="measure this many random training records, at most --rows (default: all)"),
        seed_policy: str = typer.Option(
            "independent", "--seed-policy",
            help="independent or paired (retrained models)"),
        repeats: int = typer.Option(1, "--repeats", help="PDTP measurements averaged (the paper: 10)"),
        noise_floor: int = typer.Option(0, "--noise-floor",
                                        help="also retrain this many models with other seeds (Fig 7) and report "
                                             "PDTP beside the spread of ln p (0: skip)"),
        lowest_bins: str = typer.Option(
            "keep", "--lowest-bins",
            help="keep (the paper) or ignore: leave out of the max a class whose binned output moves only between "
                 "the two lowest bins, a step of ln 3 whatever the move's size (needs --bin-width)"),
    ) -> None:
        """PDTP of every (or --records random) training record, and the DTP-1 verdict."""
        import numpy as np

        from ..dtp.noise_floor import normalised_pdtp, seed_noise_floor
        from ..dtp.pdtp import pdtp, pdtp_models
        from ..dtp.verdict import dtp1_verdict
        from ..engine import check_work

        # checked before any data is loaded, each message naming the flag
        if lowest_bins not in ("keep", "ignore"):
            raise InvalidParameterError(f"--lowest-bins must be keep or ignore; got {lowest_bins!r}")
        if lowest_bins == "ignore" and _bin_width(bin_width) is None:
            raise InvalidParameterError("--lowest-bins ignore needs binned outputs; got --bin-width none")
        with on_interrupt("dtp pdtp", outputs=[out] if out else [], doing="loading the data") as progress:
            X, y, learner = load_training_set(data, label, model, rows, seed, device)
            recs = None if records is None else _random_records(records, default=len(X), n=len(X), seed=seed)
            # what --repeats and --noise-floor ask, refused before any model trains (each model reads its rows)
            n_recs, rows_read = len(X) if recs is None else len(recs), float(X.shape[0]) * X.shape[1]
            n_models = pdtp_models(learner, n_recs, repeats)
            check_work(n_models * rows_read, f"PDTP of {n_recs:,} records over {repeats:,} repeats ({n_models:,} "
                       f"models, each reading the {X.shape[0]:,} x {X.shape[1]:,} training rows)",
                       fix="measure fewer records (--records) or repeats (--repeats)")
            check_work(max(noise_floor, 0) * rows_read, f"a seed noise floor over {noise_floor:,} models (each reading "
                       f"the {X.shape[0]:,} x {X.shape[1]:,} training rows)", fix="retrain fewer (--noise-floor)")
            progress.step("measuring PDTP (retraining without each record)")
            res = pdtp(learner, X, y, records=recs, bin_width=_bin_width(bin_width), seed_policy=seed_policy,
                       n_repeats=repeats, random_state=seed, lowest_bins=lowest_bins)
            v = dtp1_verdict(res.values, kind="PDTP", records=res.records)
            echo(f"{type(learner).__name__}: PDTP of {len(res.values)} records by {res.method}; "
                       f"mean {np.mean(res.values):.4f}, max {v.max_value:.4f}")
            echo(v.sentence)
            if noise_floor >= 2:
                progress.step("measuring the seed noise floor")
                fl = seed_noise_floor(learner, X, y, queries=res.records, n_models=noise_floor, random_state=seed,
                                      bin_width=_bin_width(bin_width))
                med = float(np.median(fl.max_std_log_p))
                ratio = normalised_pdtp(res.values, fl.max_std_log_p)
                echo(f"seed noise floor (std of ln p over {noise_floor} retrainings, max over classes): median "
                           f"{med:.4f}; records whose PDTP exceeds 2x their floor: {int(np.sum(ratio > 2))} of "
                           f"{len(ratio)}")
                if med == 0:
                    echo("the learner is deterministic: retraining with other seeds adds no noise, so any PDTP "
                               "above 0 is t's own influence")
            _write(out, res)

    @dtp_app.command("exact", cls=Command)
    def exact_cmd(
        data: str = typer.Option(
            "adult-proxy", "--data",
            help="categorical data (default: the Adult 4-attribute proxy)"),
        label: Optional[str] = label_opt, model: str = model_opt, rows: Optional[int] = rows_opt,
        seed: int = seed_opt,
        bin_width: str = bin_opt, out: Optional[Path] = out_opt, device: str = device_opt,
    ) -> None:
        """Exact DTP by enumerating the feature space (naive Bayes / Bayes inference on categorical data)."""
        from ..dtp.exact import dtp_exact
        from ..dtp.verdict import dtp1_verdict

        with on_interrupt("dtp exact", outputs=[out] if out else [], doing="loading the data") as progress:
            X, y, learner = load_training_set(data, label, model, rows, seed, device)
            from ..exceptions import UnsupportedError
            from ..learners import learner_family

            if model in ("logreg", "mlp"):
                raise UnsupportedError("exact DTP by enumeration supports --model nb, nb-unsmoothed or "
                                       "bayes-inference; use 'leakaudit dtp bound' for logreg")
            values = [int(X[:, j].max()) + 1 for j in range(X.shape[1])]
            if learner_family(learner) == "naive-bayes":
                _, num, nv = learner._columns(X)
                if num.size:
                    raise UnsupportedError("exact DTP enumerates a finite feature space, but this data has numeric "
                                           "(Gaussian) attributes; use --data adult-proxy or a categorical table")
                values = [int(v) for v in nv]
            progress.step("enumerating the feature space")
            res = dtp_exact(learner, X, y, feature_values=values, bin_width=_bin_width(bin_width))
            v = dtp1_verdict(res.values, kind="DTP (exact)", records=res.records)
            echo(f"exact DTP over {res.n_queries} feature vectors: max {v.max_value:.4f} "
                       f"(max PDTP {max(res.pdtp):.4f})")
            echo(v.sentence)
            _write(out, res)

    @dtp_app.command("bound", cls=Command)
    def bound_cmd(
        data: str = data_opt, label: Optional[str] = label_opt, model: str = model_opt,
        rows: Optional[int] = rows_opt,
        seed: int = seed_opt, out: Optional[Path] = out_opt, device: str = device_opt,
        records: Optional[int] = typer.Option(
            None, "--records", help="random training records to bound, at most --rows (default: 50, or all of fewer)"),
    ) -> None:
        """Upper bounds on DTP: Thm 6.2 with Props 6.3-6.5 (naive Bayes, Bayes inference) or Thm 6.9 (logreg)."""
        import numpy as np

        from ..dtp.lipschitz import logistic_lipschitz_bound
        from ..dtp.pdtp import pdtp
        from ..dtp.stability import stability_bound_for
        from ..dtp.verdict import dtp1_verdict

        with on_interrupt("dtp bound", outputs=[out] if out else [], doing="loading the data") as progress:
            X, y, learner = load_training_set(data, label, model, rows, seed, device)
            recs = _random_records(records, default=50, n=len(X), seed=seed)
            progress.step("computing the bounds")
            if model == "logreg":
                res = logistic_lipschitz_bound(learner, X, y, records=recs)
                echo(f"Thm 6.9: L = {res.lipschitz_constant:.1f}, global bound {res.global_bound:.4f}")
            else:
                p = pdtp(learner, X, y, records=recs, bin_width=None)
                res = stability_bound_for(learner, X, y, p.values, records=recs)
                echo(f"{res.source}: ln δ = {res.ln_delta[0]:.4f} (bounds the unnormalised score)")
                if model in ("nb", "nb-unsmoothed"):
                    from ..dtp.stability import normalised_nb_dtp_bound

                    # the model outputs normalised posteriors: use the per-record bound for them (spec §6 caveat 1)
                    res = normalised_nb_dtp_bound(learner, X, y, recs, pdtp=p.values)
                    echo(f"{res.source}: max {float(np.max(res.values)):.4f} (unbinned)")
            v = dtp1_verdict(res.values, kind="DTP upper bound", records=res.records)
            echo(v.sentence)
            _write(out, res)

    @dtp_app.command("reduce", cls=Command)
    def reduce_cmd(
        data: str = typer.Option("adult-proxy", "--data", help=f"one of {', '.join(NAMED)}, or a CSV/Parquet file"),
        label: Optional[str] = label_opt,
        model: str = typer.Option("nb-unsmoothed", "--model", help=f"one of {', '.join(models())}"),
        rows: Optional[int] = typer.Option(
            None, "--rows", help="training-set size: random rows of the data, at most its size (default: 48842, or "
                                 "every row of a smaller table)"),
        seed: int = seed_opt, bin_width: str = bin_opt, out: Optional[Path] = out_opt, device: str = device_opt,
        strategy: str = typer.Option("sorted", "--strategy", help="sorted (the paper), greedy or group"),
        max_removals: int = typer.Option(10, "--max-removals", help="remove at most this many records"),
        stop: bool = typer.Option(False, "--stop/--no-stop", metavar="", help="stop at the first max DTP <= 1"),
    ) -> None:
        """Remove high-risk records (§8) and print the maximum DTP after each removal and the accuracy."""
        from ..dtp.reduce import reduce_dtp

        with on_interrupt("dtp reduce", outputs=[out] if out else [], doing="loading the data") as progress:
            X, y, learner = load_training_set(data, label, model, rows, seed, device, default_rows=48842)
            progress.step("removing high-risk records and retraining")
            res = reduce_dtp(learner, X, y, strategy=strategy, max_removals=max_removals, stop_at_threshold=stop,
                             bin_width=_bin_width(bin_width))
            for s, (m, a) in enumerate(zip(res.max_values, res.accuracy)):
                echo(f"{s:3d} removed: max DTP {m:.4f}  accuracy {a:.4f}")
            echo(f"first step with max DTP <= 1: {res.stopped_at}")
            _write(out, res)

    app.add_typer(dtp_app, name="dtp")
