"""Structured, near-valid inputs of ``leakaudit audit`` and an oracle that owes nothing to leakaudit's code.

A case is drawn by :func:`cases` (hypothesis picks the structure, a seeded numpy generator the values) and
written to a folder by :func:`build`, which returns the command line and the oracle's expectation:

- ``must_refuse``: the case breaks a rule of docs/input.md that must be refused (a missing column, a one-sided
  class, a model class the data lacks, ...); ``clean``: the case breaks nothing and must be accepted;
- ``expect(out_json)``: when leakaudit accepts, the accuracies it reports must be the model's own on the rows
  written, computed here with pandas and scikit-learn only: the files are read back with ``pd.read_csv`` /
  ``pd.read_parquet``, the contract's one rule that changes values (a column that is numbers in one table and
  text in another is parsed as numbers) is applied, and the model is fed what the contract says it takes
  (the columns it names, the table's columns, or the encoding the contract spells out: z-scored numbers, 0/1
  columns as they are). Ties in a model's probabilities may break either way: the oracle gives an interval.
"""

from __future__ import annotations

import json
import re
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
from hypothesis import strategies as st

WORDS = ["red", "green", "blue", "cyan", "mauve"]
NAMES = ["a", "b", "x1", "age", "sex", "col 2", "Größe", "z_score", "n", "k9"]
FEATURE_KINDS = ["float", "int", "bin", "bool", "text", "textmiss", "mixed", "const"]
LABEL_KINDS = ["int", "sparse", "neg", "text", "bool", "floatwhole"]
CLASS_VALUES = {"int": [0, 1, 2], "sparse": [5, 1, 2], "neg": [10, -1, 3], "text": ["no", "yes", "maybe"], "bool": [False, True],
                "floatwhole": [0.0, 1.0, 2.0]}
MUST = {  # defects docs/input.md says are refused
    "nan_numeric", "stray_one_table", "missing_col", "extra_col", "dup_col", "one_sided_class", "stray_label",
    "pop_label", "missing_label", "fraction_label", "sensitive_const", "sensitive_unknown", "sensitive_label",
    "bad_membership", "unknown_label", "model_missing_class", "model_extra_class", "model_bare_auto",
    "model_unknown_feature", "pred_rows", "pred_header", "pred_logits", "pred_text", "pred_cols", "config_invalid",
    "codes_ambiguous", "no_rows"}
MAYBE = {"stray_all_tables", "model_fit_types", "label_as_float"}


@dataclass
class Spec:
    seed: int
    n_classes: int
    label_kind: str
    label_name: str
    features: list  # (name, kind)
    n_mem: int
    n_non: int
    n_pop: int
    layout: str  # separate | data
    membership: str  # int | str | bool
    formats: list  # per file: csv | parquet | csv.gz
    reorder: bool
    defects: list
    sensitive: str  # none | cat | num | const | unknown | label
    target: str  # model | predictions
    model: str  # lr | dt | rf | knn
    fit_on: str  # frame | subset | encoded | bare
    model_input: str | None
    fit_y: str  # asis | str | codes
    permute_classes: bool
    pred_header: str  # names | shuffled | p | digits | empty | headerless
    use_config: bool
    config_keys: list = field(default_factory=list)
    full: bool = False


@st.composite
def cases(draw, full: bool = False):
    C = draw(st.sampled_from([2, 2, 3]))
    label_kind = draw(st.sampled_from(LABEL_KINDS))
    if label_kind == "bool":
        C = 2
    n_feat = draw(st.integers(1, 4))
    kinds = draw(st.lists(st.sampled_from(FEATURE_KINDS), min_size=n_feat, max_size=n_feat))
    names = draw(st.permutations(NAMES))[:n_feat]
    feats = list(zip(names, kinds))
    layout = draw(st.sampled_from(["separate", "separate", "data"]))
    target = draw(st.sampled_from(["model", "model", "model", "predictions"]))
    fit_on = draw(st.sampled_from(["frame", "frame", "subset", "bare", "encoded"]))
    if fit_on == "bare":
        model_input = draw(st.sampled_from(["columns", "columns", "encoded", None]))
    elif fit_on == "encoded":
        model_input = draw(st.sampled_from(["encoded", "encoded", None, "columns"]))
    else:
        model_input = draw(st.sampled_from([None, None, None, "auto", "columns", "encoded"]))
    defect_pool = ["nan_numeric", "stray_one_table", "stray_all_tables", "missing_col", "extra_col", "dup_col",
                   "one_sided_class", "stray_label", "pop_label", "missing_label", "fraction_label",
                   "sensitive_const", "sensitive_unknown", "sensitive_label", "unknown_label", "config_invalid",
                   "no_rows", "label_as_float"]
    if layout == "data":
        defect_pool.append("bad_membership")
    if target == "model":
        defect_pool += ["model_missing_class", "model_extra_class", "model_unknown_feature", "model_fit_types"]
    else:
        defect_pool += ["pred_rows", "pred_header", "pred_logits", "pred_text", "pred_cols"]
    n_def = draw(st.sampled_from([0, 0, 0, 1, 1, 2]))
    defects = sorted(set(draw(st.lists(st.sampled_from(defect_pool), min_size=n_def, max_size=n_def))))
    n_files = 3
    return Spec(
        seed=draw(st.integers(0, 2**31 - 1)), n_classes=C, label_kind=label_kind,
        label_name=draw(st.sampled_from(["y", "label", "income class"])), features=feats,
        n_mem=draw(st.integers(8, 30)), n_non=draw(st.integers(6, 24)),
        n_pop=draw(st.sampled_from([0, 0, 7, 15])), layout=layout,
        membership=draw(st.sampled_from(["int", "str", "bool"])),
        formats=draw(st.lists(st.sampled_from(["csv", "csv", "parquet", "csv.gz", "parquet-nullable"]), min_size=n_files,
                              max_size=n_files)),
        reorder=draw(st.booleans()), defects=defects,
        sensitive=draw(st.sampled_from(["none", "none", "cat", "num"])), target=target,
        model=draw(st.sampled_from(["lr", "dt", "rf", "knn"])), fit_on=fit_on, model_input=model_input,
        fit_y=draw(st.sampled_from(["asis", "asis", "str", "codes"])),
        permute_classes=draw(st.booleans()),
        pred_header=draw(st.sampled_from(["names", "shuffled", "p", "digits", "empty", "headerless"])),
        use_config=draw(st.booleans()),
        config_keys=draw(st.lists(st.sampled_from(sorted(CONFIG_VALUES)), max_size=3, unique=True)),
        full=full,
    )


# TOML values: valid ones first, then invalid ones (a key whose drawn value is invalid is a must-refuse defect)
CONFIG_VALUES = {
    "profile": (['"smoke"'], ['"huge"', "3"]),
    "seed": (["0", "7"], ["-1", '"x"']),
    "confidence": (["0.9", "0.99"], ["2.0", "0.5", '"high"']),
    "backend": (['"inprocess"'], ['"gpu"']),
    "dtp_rule": (['"long"', '"statistical"'], ['"loose"']),
    "exit_code": (["false", "true"], ['"maybe"']),
    "epsilon_budget": (["1.5"], ["-1.0"]),
    "thresholds": (["{ max_auc = 0.7 }", "{ low_fpr = 0.05 }"], ["{ max_auc = 0.4 }", "{ nope = 1 }"]),
    "training": (['{ optimizer = "sgd" }'], ["{ epochs = 0 }"]),
    "unknown_key": ([], ["1"]),
}


# --------------------------------------------------------------------------------------------- building the files

def _label_values(spec: Spec) -> list:
    vals = CLASS_VALUES[spec.label_kind][:spec.n_classes]
    return vals


def _column(kind: str, n: int, codes: np.ndarray, rng) -> list | np.ndarray:
    if kind == "float":
        return np.round(codes * 1.5 + rng.normal(size=n), 3)
    if kind == "int":
        return (codes * 2 + rng.integers(0, 4, n)).astype(np.int64)
    if kind == "bin":
        return ((codes + rng.integers(0, 2, n)) % 2).astype(np.int64)
    if kind == "bool":
        return rng.integers(0, 2, n).astype(bool)
    if kind == "const":
        return np.full(n, 5, dtype=np.int64)
    if kind in ("text", "textmiss"):
        v = [WORDS[(c + int(rng.integers(0, 3))) % len(WORDS)] for c in codes]
        v[0] = WORDS[0]  # a word in every table: the column stays text on reading
        if kind == "textmiss":
            v = [None if (i > 0 and rng.random() < 0.2) else x for i, x in enumerate(v)]
        return np.array(v, dtype=object)
    if kind == "mixed":  # text in every table, most values numbers: categorical by the contract
        v = [str(int(c) + int(rng.integers(0, 3))) if rng.random() < 0.7 else "unk" for c in codes]
        v[0] = "unk"
        return np.array(v, dtype=object)
    raise AssertionError(kind)


def _table(spec: Spec, n: int, rng) -> pd.DataFrame:
    C = spec.n_classes
    codes = rng.integers(0, C, n)
    codes[:C] = np.arange(C)  # every class in every table
    rng.shuffle(codes)
    vals = _label_values(spec)
    cols = {name: _column(kind, n, codes, rng) for name, kind in spec.features}
    lab = [vals[c] for c in codes]
    cols[spec.label_name] = pd.array(lab, dtype="boolean").astype(bool) if spec.label_kind == "bool" else \
        np.array(lab, dtype=object if spec.label_kind == "text" else None)
    return pd.DataFrame(cols)


def _write(df: pd.DataFrame, path: Path, fmt: str, dup: bool = False) -> Path:
    if fmt in ("parquet", "parquet-nullable") and not dup:
        p = path.with_suffix(".parquet")
        out = df.copy()
        for c in out.columns:  # a column of numbers and words is stored as text
            if not pd.api.types.is_numeric_dtype(out[c].dtype) and not pd.api.types.is_bool_dtype(out[c].dtype):
                out[c] = out[c].map(lambda v: None if v is None or (isinstance(v, float) and np.isnan(v)) else str(v))
        if fmt == "parquet-nullable":  # pandas' nullable types: Int64, Float64, boolean, string
            out = out.convert_dtypes()
        out.to_parquet(p, index=False)
        return p
    p = path.with_suffix(".csv.gz" if fmt == "csv.gz" else ".csv")
    text = df.to_csv(index=False)
    if dup:  # repeat a column name in the header: the last column gets the first one's name
        lines = text.split("\n", 1)
        head = lines[0].split(",")
        head[-1] = head[0]
        text = ",".join(head) + "\n" + lines[1]
    if fmt == "csv.gz":
        import gzip

        p.write_bytes(gzip.compress(text.encode()))
    else:
        p.write_text(text)
    return p


@dataclass
class Built:
    argv: list
    must_refuse: bool
    clean: bool
    expect: object  # callable(inputs_or_results_dict) -> None, or None when no accuracy is expected


def build(spec: Spec, d: Path, out: Path) -> Built:
    rng = np.random.default_rng(spec.seed)
    defects = set(spec.defects)
    mem, non = _table(spec, spec.n_mem, rng), _table(spec, spec.n_non, rng)
    pop = _table(spec, spec.n_pop, rng) if spec.n_pop else None
    lab = spec.label_name
    feat_names = [n for n, _ in spec.features]
    numeric_feats = [n for n, k in spec.features if k in ("float", "int")]
    fit_frame = mem[feat_names].copy()  # the model is fitted on the members as generated
    clean = [t[feat_names].copy() for t in (mem, non, pop) if t is not None]  # the tables before any defect
    fit_y = mem[lab].copy()
    # ---- defects in the tables
    tables = {"mem": mem, "non": non}
    if pop is not None:
        tables["pop"] = pop
    others = [t for t in tables if t != "mem"] if spec.layout == "separate" else [t for t in tables if t == "pop"]
    if spec.layout == "data" and pop is None:  # one file holds members and non-members: no column can differ
        defects -= {"missing_col", "extra_col"}
    must = False
    maybe = bool(defects & MAYBE)
    # non-members (or population records) that all repeat members are refused (a file given twice); with few
    # distinct rows a generated table can be that by chance
    seen = set(map(tuple, mem[feat_names + [lab]].astype(str).to_numpy()))
    maybe = maybe or any(all(tuple(r) in seen for r in t[feat_names + [lab]].astype(str).to_numpy())
                         for t in (non, pop) if t is not None and len(t))
    if "nan_numeric" in defects:
        if numeric_feats:
            t = tables[rng.choice(list(tables))]
            t.loc[int(rng.integers(0, len(t))), numeric_feats[0]] = np.nan
        else:
            defects.discard("nan_numeric")
    if "stray_one_table" in defects or "stray_all_tables" in defects:
        cands = [n for n, k in spec.features if k in ("float", "int", "bin", "const")]
        if cands:
            c = cands[-1]
            where = list(tables) if "stray_all_tables" in defects else [rng.choice(list(tables))]
            if spec.layout == "data" and "stray_all_tables" not in defects:  # members and non-members: one file
                where = ["pop"] if pop is not None else ["mem", "non"]
                if pop is None:
                    defects.discard("stray_one_table")
                    defects.add("stray_all_tables")
            for w in where:
                t = tables[w]
                t[c] = t[c].astype(object)
                t.loc[int(rng.integers(0, len(t))), c] = "abc"
            if "stray_all_tables" in defects and numeric_feats and c == numeric_feats[0]:
                defects.discard("nan_numeric")  # the column with a missing cell is text now: allowed
        else:
            defects -= {"stray_one_table", "stray_all_tables"}
    if "one_sided_class" in defects:
        side = tables[rng.choice(["mem", "non"])]
        v = _label_values(spec)
        side.loc[side[lab] == v[-1], lab] = v[0]  # class v[-1] now lives only in the other table
    for dname, where in (("stray_label", None), ("pop_label", "pop"), ("missing_label", None),
                         ("fraction_label", None)):
        if dname not in defects:
            continue
        if where == "pop" and pop is None:
            defects.discard(dname)
            continue
        tname = where or rng.choice(["mem", "non"] + (["pop"] if pop is not None and dname == "missing_label"
                                                      else []))
        t = tables[tname]
        t[lab] = t[lab].astype(object)
        t.loc[int(rng.integers(0, len(t))), lab] = {"stray_label": "oops", "pop_label": "oops",
                                                     "missing_label": None, "fraction_label": 0.5}[dname]
    if "label_as_float" in defects:  # whole numbers written as 1.0 in one table, as 1 in the others
        if spec.label_kind in ("int", "sparse", "neg"):
            t = tables[rng.choice(["non"] + (["pop"] if pop is not None else []))]
            try:
                t[lab] = t[lab].astype(float)
            except (TypeError, ValueError):  # a stray label value is there already
                defects.discard("label_as_float")
        else:
            defects.discard("label_as_float")
    if "no_rows" in defects:
        tname = rng.choice(["mem", "non"])
        tables[tname] = tables[tname].iloc[:0]
    if spec.reorder:
        for t in others:
            cols = list(tables[t].columns)
            rng.shuffle(cols)
            tables[t] = tables[t][cols]
    if "missing_col" in defects:
        t = rng.choice(others)
        tables[t] = tables[t].drop(columns=[feat_names[0]])
    if "extra_col" in defects:
        t = rng.choice(others)
        tables[t] = tables[t].assign(**{"extra": 1.0})
    dup_in = rng.choice(list(tables)) if "dup_col" in defects else None
    # ---- sensitive columns
    sens = None
    cat = [n for n, k in spec.features if k in ("text", "textmiss", "bool", "bin")]
    num = [n for n, k in spec.features if k in ("float", "int")]
    if spec.sensitive == "cat" and cat:
        sens = cat[0]
    if spec.sensitive == "num" and num:
        sens = num[0]
    if "sensitive_const" in defects:
        tables = {k: v.assign(**{"konst": "same"}) for k, v in tables.items()}
        fit_frame = fit_frame.assign(konst="same")
        sens = "konst"
    if "sensitive_unknown" in defects:
        sens = "nope"
    if "sensitive_label" in defects:
        sens = lab
    if sens is not None and sens != lab and sens not in ("nope", "konst"):
        # a sensitive column must hold two values among members and non-members; with few rows it may not
        if any(sens not in t.columns for t in tables.values()):
            joint = pd.Series([], dtype=float)  # dropped by a column defect: refused for that
        else:
            joint = pd.concat([tables["mem"][sens], tables["non"][sens]]).dropna()
        if sens in tables["mem"].columns and joint.nunique() < 2:
            maybe = True
    # ---- write the tables
    fmts = list(spec.formats)
    if dup_in is not None:
        fmts[list(tables).index(dup_in)] = "csv"
    label_flag = "nope" if "unknown_label" in defects else lab
    argv = ["audit", "--check-inputs", "--out", str(out)] if not spec.full else ["audit", "--out", str(out)]
    paths = {}
    if spec.layout == "separate":
        for i, (k, t) in enumerate(tables.items()):
            paths[k] = _write(t, d / {"mem": "train", "non": "test", "pop": "population"}[k], fmts[i],
                              dup=k == dup_in)
        argv += ["--train", str(paths["mem"]), "--test", str(paths["non"])]
    else:
        m = tables["mem"], tables["non"]
        mvals = {"int": (1, 0), "str": ("1", "0"), "bool": (True, False)}[spec.membership]
        both = pd.concat([m[0].assign(member=mvals[0]), m[1].assign(member=mvals[1])], ignore_index=True)
        order = rng.permutation(len(both))
        both = both.iloc[order].reset_index(drop=True)
        if "bad_membership" in defects:
            both["member"] = both["member"].astype(object)
            both.loc[int(rng.integers(0, len(both))), "member"] = rng.choice(["yes", 2, None])
        paths["data"] = _write(both, d / "data", fmts[0], dup=dup_in in ("mem", "non"))
        argv += ["--data", str(paths["data"]), "--membership-column", "member"]
        if "pop" in tables:
            paths["pop"] = _write(tables["pop"], d / "population", fmts[2],
                                  dup=dup_in == "pop")
    if "pop" in paths:
        argv += ["--population", str(paths["pop"])]
    if dup_in is not None and spec.layout == "data" and dup_in == "pop" and "pop" not in paths:
        defects.discard("dup_col")
    # ---- the model or the predictions
    settings = {"label": label_flag}
    if sens is not None:
        settings["sensitive"] = sens
    model_input = spec.model_input if spec.target == "model" else None
    expect_input = None  # what the oracle feeds the model
    est = None
    if spec.target == "model":
        est, expect_input, model_input, extra = _fit_model(spec, fit_frame, fit_y, clean, defects, rng)
        must = must or extra.get("must", False)
        maybe = maybe or extra.get("maybe", False)
        # a model the audit refits with scikit-learn is refused up front where one of the audit's random halves of
        # the records (or the members less one) would hold a single class: with a class of fewer than 10 audited
        # records that depends on the audit's own draw, so either answer is right
        counts = pd.concat([mem[lab], non[lab]]).value_counts()
        maybe = maybe or len(counts) < 2 or int(counts.min()) < 10
        # ... and where a class has one member, which PDTP's members-less-one refit would leave without that class
        # (refused when PDTP measures every member, as the profile decides)
        maybe = maybe or bool((mem[lab].value_counts() == 1).any())
        import skops.io as sio

        sio.dump(est, d / "model.skops")
        argv += ["--model", str(d / "model.skops")]
        if model_input is not None:
            settings["model_input"] = model_input
    pred = None
    if spec.target == "predictions":
        pred = _write_predictions(spec, tables, d, defects, rng)
        argv += ["--predictions-train", str(pred["paths"][0]), "--predictions-test", str(pred["paths"][1])]
        must = must or pred["must"]
        maybe = maybe or pred["maybe"]
    # ---- settings: flags, or a TOML config (with random valid/invalid extra keys)
    if spec.use_config:
        lines = []
        for k, v in settings.items():
            lines.append(f"{k} = {json.dumps([v] if k == 'sensitive' else v)}")
        for j, k in enumerate(spec.config_keys):
            good, bad = CONFIG_VALUES[k]
            pick_bad = (not good) or ("config_invalid" in defects and j == 0)
            vals = bad if pick_bad else good
            v = vals[int(rng.integers(0, len(vals)))]
            if k in ("thresholds", "training"):
                lines.append(f"[{k}]\n" + "\n".join(s.strip() for s in v.strip("{} ").split(",")))
            else:
                lines.insert(0, f"{k} = {v}")
            must = must or pick_bad
        if "config_invalid" in defects and not spec.config_keys:
            lines.insert(0, "confidence = 1.5")
            must = True
        # tables ([thresholds]) after plain keys
        plain = [ln for ln in lines if not ln.startswith("[")]
        tabs = [ln for ln in lines if ln.startswith("[")]
        (d / "audit.toml").write_text("\n".join(plain + tabs) + "\n")
        argv += ["--config", str(d / "audit.toml")]
    else:
        if "config_invalid" in defects:
            argv += ["--profile", "huge"]
            must = True
        argv += ["--label", label_flag]
        if sens is not None:
            argv += ["--sensitive", sens]
        if model_input is not None:
            argv += ["--model-input", model_input]
    if spec.full:
        argv += ["--profile", "smoke"]
    must = must or bool(defects & MUST)
    clean = not defects and not maybe and not must
    oracle = _Oracle(spec, paths, lab, est, expect_input, pred, feat_names)
    return Built(argv, must, clean, oracle)


def _my_encoding(frames: list[pd.DataFrame]) -> tuple[list[pd.DataFrame], list[str]]:
    """docs/input.md's encoding, written here from the text: numbers z-scored with the mean and population standard
    deviation of members + non-members (a constant column: scale 1), columns of 0/1 or booleans as they are, text
    one-hot in sorted category order with a ``<missing>`` column where a value is missing; kinds and categories
    from the joint table; column order numeric, 0/1, then the one-hot groups. Returns the frames and the names."""
    full = pd.concat(frames, ignore_index=True)
    cand = pd.concat(frames[:2], ignore_index=True)
    num, binary, cat = [], [], []
    for c in full.columns:
        s = full[c]
        if pd.api.types.is_bool_dtype(s.dtype):
            binary.append(c)
        elif pd.api.types.is_numeric_dtype(s.dtype):
            (binary if s.notna().all() and s.isin([0, 1]).all() else num).append(c)
        else:
            cat.append(c)
    outs = [{} for _ in frames]
    names = list(num) + list(binary)
    for c in num:
        v = cand[c].astype(float)
        mu, sd = v.mean(), v.std(ddof=0)
        sd = sd if sd > 0 else 1.0
        for o, f in zip(outs, frames):
            o[c] = ((f[c].astype(float) - mu) / sd).to_numpy()
    for c in binary:
        for o, f in zip(outs, frames):
            o[c] = f[c].astype(float).to_numpy()
    for c in cat:
        cats = sorted(full[c].dropna().unique().tolist())
        for v in cats:
            names.append(f"{c}={v}")
            for o, f in zip(outs, frames):
                o[f"{c}={v}"] = (f[c] == v).fillna(False).to_numpy(dtype=float)  # a missing value is no category
        if full[c].isna().any():
            names.append(f"{c}=<missing>")
            for o, f in zip(outs, frames):
                o[f"{c}=<missing>"] = f[c].isna().to_numpy(dtype=float)
    return [pd.DataFrame(o, index=f.index)[names] for o, f in zip(outs, frames)], names


def _fit_model(spec: Spec, frame: pd.DataFrame, y: pd.Series, clean, defects, rng):
    from sklearn.compose import ColumnTransformer
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler
    from sklearn.tree import DecisionTreeClassifier

    extra = {}
    clf = {"lr": lambda: LogisticRegression(max_iter=300),
           "dt": lambda: DecisionTreeClassifier(max_depth=4, random_state=0),
           "rf": lambda: RandomForestClassifier(n_estimators=3, max_depth=3, random_state=0),
           "knn": lambda: KNeighborsClassifier(n_neighbors=3, algorithm="brute")}[spec.model]()
    frame = frame[[c for c in frame.columns if c != "konst"]]
    cols = list(frame.columns)
    model_input = spec.model_input
    if spec.fit_on == "subset" and len(cols) > 1:
        k = int(rng.integers(1, len(cols)))
        cols = [str(c) for c in rng.permutation(cols)[:k]]
    elif spec.fit_on == "subset":
        cols = cols[::-1]
    # labels
    yv = y.to_numpy()
    vals = _label_values(spec)
    if spec.fit_y == "str":
        yv = np.array([str(v) for v in yv], dtype=object)
    elif spec.fit_y == "codes":
        order = sorted(vals)
        yv = np.array([order.index(v) for v in yv], dtype=np.int64)
        names = [str(v) for v in vals]
        if all(re.fullmatch(r"-?\d+", n) for n in names) and sorted(names) != sorted(str(i) for i in range(len(vals))):
            extra["must"] = True  # integer classes beside integer label values: ambiguous, refused
    sel = np.arange(len(frame))  # the members' rows the model is fitted on
    if "model_missing_class" in defects:
        keep = yv != yv[0]
        if len(np.unique(yv[keep])) >= 2:
            sel, yv = sel[keep], yv[keep]
        else:  # two classes: a one-class model, which scikit-learn refuses to fit
            defects.discard("model_missing_class")
    if "model_extra_class" in defects and yv.dtype == bool:
        defects.discard("model_extra_class")
    if "model_unknown_feature" in defects and spec.fit_on not in ("frame", "subset"):
        defects.discard("model_unknown_feature")
    if "model_extra_class" in defects:
        sel = np.r_[sel, sel[:2]]
        extra_v = "extra" if yv.dtype == object else 99
        yv = np.concatenate([yv, np.array([extra_v, extra_v], dtype=yv.dtype)])
    fit_X = frame[cols].iloc[sel].reset_index(drop=True)
    if "model_fit_types" in defects:  # fitted on every column as text: the file's numbers are not what it saw
        fit_X = fit_X.astype(str)
    text_cols = [c for c in cols if not pd.api.types.is_numeric_dtype(fit_X[c].dtype)]
    expect_input = ("frame", cols)
    if spec.fit_on in ("frame", "subset"):
        if text_cols:
            # dense one-hot: a KNN on sparse rows stores a scipy csr_matrix, a type skops (and leakaudit) do not
            # trust, so that model is refused whatever the data
            ct = ColumnTransformer([("cat", OneHotEncoder(handle_unknown="ignore", sparse_output=False), text_cols)],
                                   remainder=StandardScaler() if spec.model in ("lr", "knn") else "passthrough")
            est = Pipeline([("prep", ct), ("clf", clf)])
        else:
            est = Pipeline([("scale", StandardScaler()), ("clf", clf)]) if rng.random() < 0.5 else clf
        if "model_unknown_feature" in defects:
            fit_X = fit_X.rename(columns={cols[0]: "ghost"})
            if text_cols and cols[0] in text_cols:
                est.steps[0][1].transformers[0] = ("cat", OneHotEncoder(handle_unknown="ignore", sparse_output=False),
                                                   ["ghost" if c == cols[0] else c for c in text_cols])
        if text_cols and spec.model in ("lr", "knn"):
            fit_X = fit_X.copy()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est.fit(fit_X, yv)
        if model_input == "encoded":
            # fitted on the table's columns but declared as taking leakaudit's encoding: fed the encoded columns
            # of the same names where they exist (numeric tables), refused otherwise
            extra["maybe"] = True
            expect_input = ("encoded-names", cols)
        if "model_fit_types" in defects:
            extra["maybe"] = True
    elif spec.fit_on == "encoded":
        encs, enc_names = _my_encoding(clean)
        enc = encs[0].iloc[sel]  # the members' rows
        enc_cols = [str(c) for c in rng.permutation(enc_names)] if rng.random() < 0.5 else enc_names
        est = clf
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est.fit(enc[enc_cols], yv)
        as_raw = set(enc_cols) <= set(frame.columns)  # no text column: the encoded names are the table's own
        expect_input = ("encoded-names", enc_cols) if model_input != "columns" else ("frame", enc_cols)
        if model_input is None and as_raw:  # auto reads them as the table's own columns (documented)
            expect_input = ("frame", enc_cols)
        if model_input == "columns" and not as_raw:
            extra["must"] = True  # one-hot names are not columns of the table
    else:  # bare array of the table's feature columns in the members' order (or of their encoding)
        raw = list(frame.columns)
        text = [c for c in raw if not pd.api.types.is_numeric_dtype(frame[c].dtype)]
        if model_input == "encoded" or text:
            encs, enc_names = _my_encoding(clean)
            Xb = encs[0].iloc[sel][enc_names].to_numpy()
            expect_input = ("bare-encoded", enc_names)
            if model_input == "columns":
                extra["must"] = True  # 'columns' needs numeric columns (documented)
        else:
            Xb = frame[raw].iloc[sel].to_numpy(dtype=float)
            expect_input = ("bare-columns", raw)
            if any(k == "bool" for _, k in spec.features):
                extra["maybe"] = True  # 'columns' takes numbers; leakaudit refuses a column of booleans
        est = clf
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est.fit(Xb, yv)
        if model_input is None:
            extra["must"] = True
    if spec.permute_classes and spec.model == "lr" and "model_fit_types" not in defects:
        lr = est.steps[-1][1] if hasattr(est, "steps") else est
        k = len(lr.classes_)
        if k == 2:
            lr.classes_ = lr.classes_[::-1].copy()
            lr.coef_ = -lr.coef_
            lr.intercept_ = -lr.intercept_
        else:
            perm = rng.permutation(k)
            lr.classes_, lr.coef_, lr.intercept_ = lr.classes_[perm], lr.coef_[perm], lr.intercept_[perm]
    return est, expect_input, model_input, extra


def _write_predictions(spec: Spec, tables, d: Path, defects, rng) -> dict:
    vals = _label_values(spec)
    names = [str(v) for v in vals]
    C = len(names)
    sorted_names = [str(v) for v in sorted(vals)]
    out = {"paths": [], "columns": [], "must": False, "maybe": False}
    for i, t in enumerate(("mem", "non")):
        n = len(tables[t])
        p = rng.dirichlet(np.ones(C) * 0.7, size=n)
        k = C
        if "pred_rows" in defects and i == 0:
            n2 = n + int(rng.choice([-1, 1, 3]))
            p = rng.dirichlet(np.ones(C), size=max(n2, 1))
            out["must"] = n2 != n
        if "pred_cols" in defects and i == 1:
            k = C + 1
            p = rng.dirichlet(np.ones(k), size=n)
            out["must"] = True
        if "pred_logits" in defects:  # scores that are not probabilities: logits, unnormalised, negative
            how = spec.seed % 3
            p = np.log(p + 1e-3) * 2 if how == 0 else (p * 2 if how == 1 else p - 0.3)
            out["must"] = True
        hdr = spec.pred_header
        if hdr == "names":
            header = names + (["extra"] if k > C else [])
            classes = header
        elif hdr == "shuffled":
            perm = list(rng.permutation(C))
            header = [names[j] for j in perm] + (["extra"] if k > C else [])
            classes = header
        elif hdr == "p":
            perm = list(rng.permutation(k))
            header = [f"p{j}" for j in perm]
            classes = [sorted_names[j] if j < C else None for j in perm]
        elif hdr == "digits":
            perm = list(range(k))
            header = [str(j) for j in perm]
            if all(re.fullmatch(r"-?\d+", n) for n in names) and set(header) != set(names) \
                    and set(header) & set(names):
                out["must"] = True  # digits beside integer classes: names or codes? refused as ambiguous
            if set(header) == set(names):
                classes = header
            else:
                classes = [sorted_names[j] if j < C else None for j in perm]
        elif hdr == "empty":
            header = [""] * k
            classes = [sorted_names[j] if j < C else None for j in range(k)]
        else:  # headerless
            header = None
            classes = [sorted_names[j] if j < C else None for j in range(k)]
        if "pred_header" in defects:
            header = [f"q{j}" for j in range(k)]
            out["must"] = True
        df = pd.DataFrame(p)
        if "pred_text" in defects and i == 0:
            df = df.astype(object)
            df.iloc[0, 0] = "high"
            out["must"] = True
        path = d / f"pred_{t}.csv"
        if header is None:
            df.to_csv(path, index=False, header=False)
        else:
            df.columns = header
            df.to_csv(path, index=False)
        out["paths"].append(path)
        out["columns"].append(header)
        out.setdefault("probs", []).append(p)
    return out


# --------------------------------------------------------------------------------------------- the oracle

def _read(path: Path) -> pd.DataFrame:
    df = pd.read_parquet(path) if path.suffix == ".parquet" else pd.read_csv(path)
    for c in df.columns:  # docs/input.md: nullable types read as a CSV file's would be, a missing value as NaN
        dt = df[c].dtype
        if pd.api.types.is_extension_array_dtype(dt) and getattr(dt, "na_value", None) is pd.NA:
            v = df[c].to_numpy(dtype=object)
            v = np.array([np.nan if x is pd.NA else x for x in v], dtype=object)
            s = pd.Series(v, index=df.index)
            if s.notna().all():
                s = s.infer_objects()
            elif pd.api.types.is_numeric_dtype(dt) and not pd.api.types.is_bool_dtype(dt):
                s = s.astype(float)
            df[c] = s
    return df


def _contract_frames(paths: dict, label: str) -> list[pd.DataFrame]:
    """Members, non-members (and population) as docs/input.md reads them, with pandas only."""
    if "data" in paths:
        df = _read(paths["data"])
        m = df["member"]
        m = m.astype(int) if m.dtype == bool else pd.to_numeric(m)
        frames = [df[m == 1].drop(columns=["member"]).reset_index(drop=True),
                  df[m == 0].drop(columns=["member"]).reset_index(drop=True)]
    else:
        frames = [_read(paths["mem"]), _read(paths["non"])]
    if "pop" in paths:
        frames.append(_read(paths["pop"]))
    cols = list(frames[0].columns)
    frames = [f[cols].copy() for f in frames]
    for c in cols:  # numbers in one table and text in another: the text is parsed as numbers
        isnum = [pd.api.types.is_numeric_dtype(f[c]) for f in frames]
        nonempty = [f[c].notna().any() for f in frames]
        if any(a and b for a, b in zip(isnum, nonempty)) and any((not a) and b for a, b in zip(isnum, nonempty)):
            for f, a in zip(frames, isnum):
                if not a:
                    f[c] = pd.to_numeric(f[c])
        isbool = [pd.api.types.is_bool_dtype(f[c]) for f in frames]
        if any(isbool) and not all(b or not ne for b, ne in zip(isbool, nonempty)):
            for f, b in zip(frames, isbool):
                if b:
                    f[c] = f[c].astype(np.int64)
    return frames


def _as_name(v) -> str:
    return str(v.item() if isinstance(v, np.generic) else v)


def _correct_bounds(P: np.ndarray, col_names: list, truth: list[str]) -> tuple[int, int]:
    """How many rows are right at least (the true class alone at the top) and at most (among the top)."""
    lo = hi = 0
    for row, t in zip(P, truth):
        top = np.flatnonzero(row >= row.max() - 1e-12)
        tops = {col_names[j] for j in top}
        hi += t in tops
        lo += tops == {t}
    return lo, hi


def _header_classes(header: list | None, joint: pd.Series) -> list[str]:
    """The class of each column of a predictions file, by docs/input.md: the class names in any order, or
    p0..p{C-1} (and bare column numbers, empty headers, no header) for the classes in sorted order."""
    names = [_as_name(v) for v in joint.unique()]
    ordered = [_as_name(v) for v in sorted(joint.unique().tolist())]
    if header is None:
        return ordered
    if sorted(header) == sorted(names):
        return list(header)
    try:  # the class values written another way (0 for 0.0)
        hv, nv = [float(h) for h in header], [float(n) for n in names]
        if sorted(hv) == sorted(nv):
            return [names[nv.index(h)] for h in hv]
    except ValueError:
        pass
    nums = [re.fullmatch(r"p?(\d+)", h) for h in header]
    if all(h == "" for h in header):
        return ordered
    assert all(nums), f"a predictions header {header} that names no class of {names} was accepted"
    k = [int(x.group(1)) for x in nums]
    assert sorted(k) == list(range(len(names))), f"predictions header {header} accepted for classes {names}"
    return [ordered[j] for j in k]


class _Oracle:
    def __init__(self, spec, paths, label, est, expect_input, pred, feat_names):
        self.spec, self.paths, self.label, self.est = spec, paths, label, est
        self.expect_input, self.pred, self.feat_names = expect_input, pred, feat_names

    def __call__(self, summary: dict) -> None:
        acc = [summary["target"]["train_accuracy"], summary["target"]["test_accuracy"]]
        frames = _contract_frames(self.paths, self.label)
        # the label as one column of members and non-members (ints beside whole floats are floats)
        joint = pd.concat([f[self.label] for f in frames[:2]], ignore_index=True)
        if joint.dtype == object and all(isinstance(v, bool) for v in joint):
            joint = joint.astype(bool)
        n_mem = len(frames[0])
        truth = [[_as_name(v) for v in joint[:n_mem]], [_as_name(v) for v in joint[n_mem:]]]
        if self.pred is not None:
            for i in range(2):
                P, cls = self.pred["probs"][i], _header_classes(self.pred["columns"][i], joint)
                self._check(i, acc[i], *_correct_bounds(P, cls, truth[i]), len(truth[i]))
            return
        est = self.est
        kind, cols = self.expect_input
        feats = [c for c in frames[0].columns if c != self.label]
        if kind == "frame":
            X = [f[cols] for f in frames[:2]]
        elif kind == "bare-columns":
            X = [f[feats].to_numpy(dtype=float) for f in frames[:2]]
        else:
            encf, _ = _my_encoding([f[feats] for f in frames])
            X = [e[cols] for e in encf[:2]] if kind == "encoded-names" else [e[cols].to_numpy() for e in encf[:2]]
        names = sorted({t for tr in truth for t in tr})
        all_vals = joint.unique().tolist()
        sorted_names = [_as_name(v) for v in sorted(all_vals)]
        keys = [_as_name(c) for c in est.classes_]
        def num(v):
            try:
                return float(_as_name(v))
            except ValueError:
                return None

        by_value = {num(v): _as_name(v) for v in all_vals}
        if all(k in names for k in keys):
            col_names = keys  # by name
        elif None not in by_value and all(num(c) in by_value for c in est.classes_):
            col_names = [by_value[num(c)] for c in est.classes_]  # 1 is 1.0
        else:  # label codes: the classes in sorted order
            assert all(0 <= int(c) < len(sorted_names) for c in est.classes_), (
                f"model classes {keys} accepted for data classes {names}")
            col_names = [sorted_names[int(c)] for c in est.classes_]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for i in range(2):
                P = np.asarray(est.predict_proba(X[i]), dtype=float)
                self._check(i, acc[i], *_correct_bounds(P, col_names, truth[i]), len(truth[i]))

    def _check(self, i, acc, lo, hi, n):
        got = acc * n
        assert lo - 1e-6 <= got <= hi + 1e-6, (
            f"{'members' if i == 0 else 'non-members'}: leakaudit reports accuracy {acc:.6f} ({got:.1f} of {n}); "
            f"the model's own is {lo}..{hi} of {n}")
