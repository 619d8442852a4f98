"""``leakaudit mip ...``: calibrate MIP noise; audit a noise level exactly or by a simulated attacker."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Optional

import typer

from ..exceptions import InvalidInputError, InvalidParameterError
from ._echo import echo
from ._typer import Command, Group, not_given


#: memory one calibrated coordinate takes, measured with --json (the scales as arrays, as Python lists in the
#: result and in its JSON text): 310 bytes a coordinate at --dim 10^6 (peak RSS over the command's own at --dim 1000)
_BYTES_PER_COORDINATE = 320


def _check_calibration_size(n: int) -> None:
    """Refuse, before allocating, a calibration whose coordinates would take more than the memory budget."""
    from ..engine import memory_budget

    need, budget = n * _BYTES_PER_COORDINATE, memory_budget()
    if need > budget:
        raise InvalidParameterError(
            f"--dim {n:,}: calibrating {n:,} coordinates would take about {need / 2**30:,.1f} GiB "
            f"({_BYTES_PER_COORDINATE} bytes a coordinate), over the memory budget of {budget / 2**30:,.1f} GiB "
            "(a quarter of physical memory); calibrate fewer coordinates")


def _calibration(eta: float, M: float, sigma: list[float], dim: Optional[int], constant: str, radial: str):
    import numpy as np
    from scipy import special

    from ..mip.conversions import eps_from_eta
    from ..mip.noise import mip_noise
    from ..mip.results import NoiseCalibration

    if dim is not None:
        if len(sigma) != 1:
            raise InvalidParameterError(
                "--dim repeats one --sigma; pass either one --sigma with --dim or one --sigma per coordinate"
            )
        if dim < 1:
            raise InvalidParameterError(f"--dim must be >= 1; got {dim}")
        _check_calibration_size(dim)
        sigma = sigma * dim
    nz = mip_noise(np.asarray(sigma, dtype=float), eta, M, radial=radial, constant=constant)
    d = nz.d_eff
    if radial == "laplace":
        expected = nz.c  # |Laplace(c)|
    elif radial == "gamma":
        expected = d * nz.c  # Gamma(d, c)
    else:  # Gaussian: E ||s Z||_2 / sqrt(d) in the weighted norm
        e_chi = math.sqrt(2.0) * math.exp(special.gammaln((d + 1) / 2) - special.gammaln(d / 2))  # E||Z||_2
        expected = nz.c * e_chi / math.sqrt(d)
    notes = {
        "cor11": "Corollary 11 constant (6.16/eta)^(1+2/M), as in the paper's experiments",
        "thm7": "Theorem 7 constant (7.5/eta)^(1+2/M)",
        "tight": "smallest c certified by the Theorem 7 / Cor 11 proof (derived, spec section 3)",
        "tv": "our extension: transport/TV bound (docs/mip.md), not in the paper",
    }
    note = notes[constant]
    if radial == "laplace" and d > 1:
        note += "; Laplace radius is the paper's Cor 8, which its proof covers only for d = 1 (spec 9.1)"
    return NoiseCalibration(
        eta=eta, M=M, constant=constant, radial=radial, c=nz.c, sigma=list(nz.sigma), dim=len(nz.sigma),
        noise_scale=nz.coordinate_scales(), expected_norm=expected, eps_equivalent=eps_from_eta(eta), note=note,
    )


def _load_values(data: str, column: Optional[str], n: int):
    import numpy as np

    if data == "prop9":
        from ..mip.examples import prop9_dataset

        return prop9_dataset(n)
    path = Path(data)
    if not path.is_file():
        raise InvalidInputError(f"--data must be 'prop9' or an existing CSV file; {data!r} not found")
    import pandas as pd

    from .._validation import clip
    from ..audit.inputs.data import read_records

    frame = read_records(path, "--data")  # the one table reader: CSV or Parquet, refused in one line
    if column is None:
        num = frame.select_dtypes(include="number").columns
        if len(num) == 0:
            raise InvalidInputError(f"{path.name} has no numeric column; --data needs one numeric value per record")
        if len(num) > 1:
            raise InvalidInputError(f"--column is required: {path.name} has {len(num)} numeric columns "
                                    f"({clip(', '.join(map(str, num)), 200)})")
        column = num[0]
    if column not in frame.columns:
        raise InvalidInputError(f"--column {column!r} is not a column of {path.name}; columns: "
                                f"{clip(', '.join(map(str, frame.columns)), 200)}")
    vals = pd.to_numeric(frame[column], errors="coerce").to_numpy(dtype=float)
    if not np.isfinite(vals).all():
        raise InvalidInputError(f"column {column!r} has missing or non-numeric values")
    return vals


def register(app: typer.Typer) -> None:
    """Add ``leakaudit mip calibrate`` and ``leakaudit mip audit``."""
    mip = typer.Typer(help="Membership inference privacy (Izzo et al.): noise calibration and audits.",
                      no_args_is_help=True, cls=Group)

    @mip.command("calibrate", cls=Command)
    def calibrate_cmd(
        eta: float = typer.Option(..., "--eta", help="Target MIP level in (0, 1/2]."),
        M: float = typer.Option(2.0, "--M", help="Moment order of sigma (>= 2 for Cor 11)."),
        sigma: list[float] = typer.Option([1.0], "--sigma", help="Moment scale; repeat per coordinate."),
        dim: Optional[int] = not_given("--dim", "Repeat a single --sigma over d coordinates.",
                                       default="none, one per --sigma"),
        constant: str = typer.Option("cor11", "--constant", help="cor11 | thm7 | tight | tv (ours)."),
        radial: str = typer.Option(
            "laplace", "--radial", help="laplace (paper) | gamma (Thm 7 density) | gaussian (ours)."
        ),
        json_: bool = typer.Option(False, "--json", metavar="", help="Print JSON instead of sentences. [default: off]"),
    ) -> None:
        """Print the noise constant c and per-coordinate noise scales for a target eta."""
        res = _calibration(eta, M, list(sigma), dim, constant, radial)
        if json_:
            echo(res.to_json())
            return
        scales = ", ".join(f"{v:.6g}" for v in res.noise_scale[:6]) + (" ..." if res.dim > 6 else "")
        echo(f"eta={eta} M={M} constant={constant} radial={radial}: c = {res.c:.6g}; noise scale per "
                   f"coordinate (c*sigma): {scales}; E||X||_(sigma,M) = {res.expected_norm:.6g}")
        echo(f"note: {res.note}")

    @mip.command("audit", cls=Command)
    def audit_cmd(
        data: str = typer.Option("prop9", "--data", help="'prop9' (Prop 9 data set) or a CSV file."),
        column: Optional[str] = not_given(
            "--column", "CSV column (one numeric value per record; required with a CSV --data)."),
        n: int = typer.Option(12, "--n", help="Size of the Prop 9 data set (even)."),
        statistic: str = typer.Option("inv-sum", "--statistic", help="inv-sum (Prop 9's 1/sum) | mean | sum."),
        scale: Optional[float] = not_given("--scale", "Laplace noise scale b to audit (give this or --eta)."),
        eta: Optional[float] = not_given("--eta",
                                         "Audit the MIP noise calibrated for this eta (give this or --scale)."),
        M: float = typer.Option(2.0, "--M", help="Moment order of sigma behind --eta's calibration (>= 2 for Cor 11)."),
        constant: str = typer.Option("cor11", "--constant", help="cor11 | thm7 | tight | tv (ours)."),
        method: str = typer.Option("exact", "--method", help="exact (enumerate splits, n <= 20) | simulate."),
        games: int = typer.Option(2000, "--games", help="Games for --method simulate."),
        references: int = typer.Option(400, "--references", help="Reference halves for --method simulate."),
        seed: int = typer.Option(0, "--seed", help="Random seed of --method simulate."),
        json_: bool = typer.Option(False, "--json", metavar="", help="Print JSON instead of sentences. [default: off]"),
    ) -> None:
        """Measure the best membership attack on ``statistic(D_train) + Laplace noise`` (1-D)."""
        import numpy as np

        from .._interrupt import on_interrupt
        from .._validation import check_choice, check_scalar
        from ..mip.audit import enumerate_splits, exact_eta_laplace, simulate_bayes_attacker
        from ..mip.examples import prop9_outputs
        from ..mip.noise import MIPNoise, mip_constant

        with on_interrupt("mip audit", doing=f"auditing the noise ({method})"):
            check_choice(statistic, name="--statistic", choices=("inv-sum", "mean", "sum"))
            check_choice(method, name="--method", choices=("exact", "simulate"))
            if (scale is None) == (eta is None):
                raise InvalidParameterError("pass exactly one of --scale and --eta")
            if scale is not None:  # -0.0 included: numpy's Laplace refuses its sign bit with a traceback
                check_scalar(scale, name="--scale", min_val=0, include_min=False)
            if method == "simulate":
                check_scalar(games, name="--games", kind=int, min_val=1)
                check_scalar(references, name="--references", kind=int, min_val=1)
            x = _load_values(data, column, n)
            nrec = x.shape[0]
            f = {"inv-sum": lambda v: 1.0 / v.sum(), "mean": np.mean, "sum": np.sum}[statistic]
            prop9 = data == "prop9" and statistic == "inv-sum"  # Prop 9's 1/sum, exactly
            member = enumerate_splits(nrec) if method == "exact" or eta is not None else None
            if prop9 and member is not None:
                vals = prop9_outputs(nrec, member)
            elif member is not None:
                vals = np.array([f(x[row]) for row in member])
            b = scale
            if eta is not None:
                # Theorem 7's sigma: the exact moment over all halves (M = 1 for our TV constant)
                mm = 1.0 if constant == "tv" else M
                sig = float(np.mean(np.abs(vals - vals.mean()) ** mm) ** (1.0 / mm))
                b = mip_constant(eta, mm, constant=constant) * sig
            if method == "exact":
                res = exact_eta_laplace(vals, b, n=nrec)
                line = (f"exact eta = {res.eta:.6g} (best attack accuracy {max(res.accuracy):.6g}, worst record "
                        f"{res.worst_target}) over {res.n_splits:,} splits; Laplace scale b = {b:.6g}")
            else:
                targets = np.argsort(-np.abs(x - np.median(x)))[:3]
                if prop9:

                    def train(X, y, idx, rs):  # exact 1/sum (the float sum cancels on the special half)
                        row = np.zeros(nrec, dtype=bool)
                        row[idx] = True
                        return prop9_outputs(nrec, row[None])

                else:

                    def train(X, y, idx, rs):
                        return np.array([f(X[idx])])

                res = simulate_bayes_attacker(train, x, None,
                                              MIPNoise((1.0,), 2.0, float(b), "laplace"), targets=targets,
                                              n_reference=references, n_games=games, eta_target=eta, random_state=seed)
                j = int(np.argmax(res.eta_hat))
                line = (f"simulated Bayes attacker: eta_hat = {res.eta_hat[j]:.4f} (95% upper {res.eta_upper[j]:.4f}) "
                        f"on record {res.targets[j]}, {games} games; Laplace scale b = {b:.6g}")
            if eta is not None:
                line += f"; target eta = {eta}"
            echo(res.to_json() if json_ else line)

    app.add_typer(mip, name="mip")
