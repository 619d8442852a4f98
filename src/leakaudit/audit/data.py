"""Stage 1 of the audit: the members, non-members and population records, encoded."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from .._random import check_random_state
from ..exceptions import InvalidInputError, InvalidParameterError
from .config import AuditConfig

__all__ = ["AuditData", "prepare_data"]


@dataclass
class AuditData:
    """The audited records. Arrays are encoded features (float) and integer labels.

    ``population`` records come from the same distribution but are neither
    members nor audited non-members; reference models are queried on them (RMIA).
    """

    name: str
    description: str
    X_mem: np.ndarray
    y_mem: np.ndarray
    X_non: np.ndarray
    y_non: np.ndarray
    X_pop: np.ndarray
    y_pop: np.ndarray
    frame_mem: pd.DataFrame
    frame_non: pd.DataFrame
    frame_pop: pd.DataFrame
    label: str
    class_names: list[str]
    sensitive: list[str]
    encoder: object = None
    record_ids_mem: np.ndarray = field(default=None)
    record_ids_non: np.ndarray = field(default=None)

    @property
    def n_classes(self) -> int:
        return len(self.class_names)

    @property
    def X_audit(self) -> np.ndarray:
        return np.vstack([self.X_mem, self.X_non])

    @property
    def y_audit(self) -> np.ndarray:
        return np.concatenate([self.y_mem, self.y_non])

    @property
    def is_member(self) -> np.ndarray:
        return np.r_[np.ones(len(self.y_mem), int), np.zeros(len(self.y_non), int)]

    def summary(self) -> dict:
        return {
            "name": self.name,
            "description": self.description,
            "n_members": int(len(self.y_mem)),
            "n_nonmembers": int(len(self.y_non)),
            "n_population": int(len(self.y_pop)),
            "n_features": int(self.X_mem.shape[1]),
            "label": self.label,
            "class_names": list(self.class_names),
            "sensitive": list(self.sensitive),
        }


def _demo_data(cfg: AuditConfig) -> AuditData:
    from ..data import load_adult

    if cfg.dataset != "adult":
        raise InvalidParameterError(f"the demo audit runs on the bundled 'adult' data; got dataset={cfg.dataset!r}")
    ds = load_adult(columns="long")  # Long et al.'s 13 attributes (fnlwgt dropped): 107 encoded inputs
    rng = check_random_state(cfg.seed)
    n_mem, n_non = cfg.n_members, cfg.n_nonmembers
    n_pop = min(max(n_mem, n_non), len(ds) - n_mem - n_non)
    if n_pop < 0:
        raise InvalidParameterError(f"n_members + n_nonmembers = {n_mem + n_non} exceeds the {len(ds)} Adult records")
    perm = rng.permutation(len(ds))
    i_mem, i_non, i_pop = perm[:n_mem], perm[n_mem:n_mem + n_non], perm[n_mem + n_non:n_mem + n_non + n_pop]
    cand = np.r_[i_mem, i_non]
    # Long et al. §4.2: z-scored numerics and one-hot categoricals, statistics from the candidate set D.
    X, enc = ds.encode(fit_idx=cand)
    frame = ds.frame
    return AuditData(
        name="adult",
        description=(f"Bundled UCI Adult: {n_mem} members, {n_non} non-members, {n_pop} population records "
                     f"drawn with seed {cfg.seed}"),
        X_mem=X[i_mem], y_mem=ds.y[i_mem], X_non=X[i_non], y_non=ds.y[i_non], X_pop=X[i_pop], y_pop=ds.y[i_pop],
        frame_mem=frame.iloc[i_mem].reset_index(drop=True), frame_non=frame.iloc[i_non].reset_index(drop=True),
        frame_pop=frame.iloc[i_pop].reset_index(drop=True),
        label=ds.label_name, class_names=list(ds.class_names), sensitive=list(cfg.sensitive or ("sex", "race", "marital_status")),
        encoder=enc, record_ids_mem=i_mem, record_ids_non=i_non,
    )


def _read(path: Path, what: str) -> pd.DataFrame:
    from ..data import read_table

    return read_table(path)


def _user_data(cfg: AuditConfig) -> AuditData:
    from ..data import from_frame

    if cfg.data is not None:
        df = _read(cfg.data, "data")
        if cfg.membership_column not in df.columns:
            raise InvalidParameterError(
                f"membership_column {cfg.membership_column!r} is not a column of {cfg.data}; columns: {', '.join(map(str, df.columns))}"
            )
        mcol = df[cfg.membership_column]
        if not mcol.isin([0, 1, True, False]).all():
            raise InvalidInputError(f"column {cfg.membership_column!r} must hold 0/1 (1 = member)")
        train = df[mcol.astype(int) == 1].drop(columns=[cfg.membership_column])
        test = df[mcol.astype(int) == 0].drop(columns=[cfg.membership_column])
    else:
        train, test = _read(cfg.train, "train"), _read(cfg.test, "test")
        if list(train.columns) != list(test.columns):
            missing = set(train.columns) ^ set(test.columns)
            raise InvalidInputError(f"train and test files have different columns: {', '.join(sorted(map(str, missing)))}")
    if len(train) == 0 or len(test) == 0:
        raise InvalidInputError(f"need members and non-members; got {len(train)} members and {len(test)} non-members")
    pop = _read(cfg.population, "population") if cfg.population else train.iloc[:0]
    full = pd.concat([train, test, pop], ignore_index=True)
    sensitive = list(cfg.sensitive or [])
    ds = from_frame(full, label=cfg.label, sensitive=sensitive)
    n_tr, n_te = len(train), len(test)
    cand = np.arange(n_tr + n_te)
    X, enc = ds.encode(fit_idx=cand)
    i_mem, i_non, i_pop = np.arange(n_tr), np.arange(n_tr, n_tr + n_te), np.arange(n_tr + n_te, len(full))
    fr = ds.frame
    return AuditData(
        name=Path(cfg.train or cfg.data).stem,
        description=f"{n_tr} members from {cfg.train or cfg.data}, {n_te} non-members",
        X_mem=X[i_mem], y_mem=ds.y[i_mem], X_non=X[i_non], y_non=ds.y[i_non], X_pop=X[i_pop], y_pop=ds.y[i_pop],
        frame_mem=fr.iloc[i_mem].reset_index(drop=True), frame_non=fr.iloc[i_non].reset_index(drop=True),
        frame_pop=fr.iloc[i_pop].reset_index(drop=True),
        label=cfg.label, class_names=[str(c) for c in ds.class_names], sensitive=sensitive, encoder=enc,
        record_ids_mem=i_mem, record_ids_non=i_non - n_tr,
    )


def prepare_data(cfg: AuditConfig) -> AuditData:
    """Load and encode the audit's records (the bundled demo, or the user's files)."""
    return _demo_data(cfg) if cfg.is_demo else _user_data(cfg)
