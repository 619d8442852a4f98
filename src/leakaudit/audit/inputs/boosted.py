"""XGBoost, LightGBM and CatBoost models as audit targets: read from their own model files, or given in memory.

Files (``--model``): XGBoost's JSON or UBJSON model (``Booster.save_model("m.json")`` / ``"m.ubj"``, also what
``XGBClassifier.save_model`` writes), LightGBM's text model (``Booster.save_model("m.txt")``,
``LGBMClassifier.booster_.save_model``) and CatBoost's JSON or cbm model (``save_model("m.json", format="json")``,
``save_model("m.cbm")``). Never a pickle. In memory: ``XGBClassifier`` / ``LGBMClassifier`` / ``CatBoostClassifier``
and each library's native model (``Booster``, ``CatBoost``).

A CatBoost JSON model is checked before CatBoost reads it (:func:`check_catboost_json`) and loaded from the checked
values written anew; a cbm file (CatBoost's flatbuffer, not a pickle) has its frame checked (:func:`_check_cbm`), is
parsed by CatBoost, and the model it gives is checked as JSON before any prediction. CatBoost records every training
parameter (``get_all_params()``), which gives its recipe (:func:`leakaudit.learners.catboost.catboost_recipe`).

A file is parsed here, in Python, and checked before the library sees a byte of it
(:func:`check_xgboost_model`, :func:`parse_lightgbm_text`): the library's compiled prediction walks each tree by its
child indices and reads the feature each split names without bounds checks, so every tree's arrays must agree in
length with its node count, every child must lie after its parent and inside the tree (each node reached once: no
cycle), every split feature inside the model's input width, every number finite and of its type; the sizes the
file declares are bounded (its bytes against the memory budget, the trees' nodes). Then the library loads a copy
written anew from the checked values (the same model, none of the file's own bytes: no parser differential). A
refusal is one line naming the file, exit status 2, as for a crafted scikit-learn tree.

The training recipe comes from the model: LightGBM writes every training parameter into its text model
(``parameters:``); XGBoost records them in a trained booster's configuration (``save_config()``: in memory), but
its model file holds only the objective, the trees (so the rounds and the depth they reach) and the class
weighting: the learning rate and regularisation of a model from a file are XGBoost's defaults, and the target's
description says so.
"""

from __future__ import annotations

import json
import math
import re
import struct
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..._extras import require
from ..._text import byte_size
from ..._validation import check_model_file, clip
from ...exceptions import InvalidInputError, InvalidParameterError, UnsafeFileError, UnsupportedError
from ...learners._recipe import recipe_error

__all__ = ["boosted_library", "load_boosted_file", "boosted_from_memory", "xgb_leaf_records", "generic_names",
           "is_boosted_file", "check_catboost_json",
           "check_xgboost_model", "parse_lightgbm_text", "decode_ubjson", "Boosted"]

#: nodes a model may hold across its trees (a 1,000-tree model of 255-node trees holds 255,000)
MAX_NODES = 50_000_000
#: memory a parsed model takes per byte of its file (Python lists of numbers and dicts), for the memory budget
PARSE_FACTOR = 10
#: XGBoost's "no parent" in ``parents`` (the root's)
_XGB_NO_PARENT = 2147483647
_UBJ_NESTING = 64


def _refuse(where: str, bad: str):
    raise UnsafeFileError(f"{where}: malformed model ({bad}); refusing to use it")


def boosted_library(obj) -> str | None:
    """``"xgboost"``, ``"lightgbm"`` or ``"catboost"`` for a model object of one of those libraries (a scikit-learn
    wrapper, a native ``Booster``, CatBoost's ``CatBoost``), else None; imports none of them."""
    root = type(obj).__module__.split(".")[0]
    if root == "xgboost" and (type(obj).__name__ == "Booster" or hasattr(obj, "get_booster")):
        return "xgboost"
    if root == "lightgbm" and (type(obj).__name__ == "Booster" or hasattr(obj, "booster_")):
        return "lightgbm"
    if root == "catboost" and hasattr(obj, "get_all_params"):
        return "catboost"
    return None


def is_boosted_file(path: Path) -> str | None:
    """``"xgboost-json"``, ``"xgboost-ubj"``, ``"lightgbm"``, ``"catboost-json"`` or ``"catboost-cbm"`` for a file in
    one of those formats (by its first bytes), else None."""
    try:
        with open(path, "rb") as f:
            head = f.read(64)
    except OSError:
        return None
    stripped = head.lstrip()
    if head.startswith(b"tree\n") or head.startswith(b"tree\r\n"):
        return "lightgbm"
    if head.startswith(CBM_MAGIC):
        return "catboost-cbm"
    if stripped.startswith(b"{") and re.match(rb'\{\s*"(features_info|model_info|oblivious_trees|scale_and_bias)"',
                                              stripped):
        return "catboost-json"
    if stripped.startswith(b"{"):
        after = stripped[1:2]
        if head.startswith(b"{") and after in (b"i", b"U", b"I", b"l", b"L", b"$", b"#"):
            return "xgboost-ubj"
        return "xgboost-json"
    return None


# -- UBJSON -----------------------------------------------------------------------------------------------------------

_UBJ_NUM = {b"i": (">b", 1), b"U": (">B", 1), b"I": (">h", 2), b"l": (">i", 4), b"L": (">q", 8),
            b"d": (">f", 4), b"D": (">d", 8)}
_UBJ_CONSTANTS = {b"Z": None, b"T": True, b"F": False}


def decode_ubjson(blob: bytes, where: str = "model file"):
    """Universal Binary JSON (what XGBoost's ``.ubj`` files hold) as Python values: objects, arrays (typed and
    counted ones as lists), numbers, strings, booleans and null. Refuses, naming the offset, a truncated value, a
    count beyond the bytes left, an unknown marker and nesting deeper than 64."""
    pos = 0
    n = len(blob)

    def take(k: int) -> bytes:
        nonlocal pos
        if k < 0 or pos + k > n:
            _refuse(where, f"UBJSON truncated at byte {pos}")
        out = blob[pos:pos + k]
        pos += k
        return out

    def marker() -> bytes:
        m = take(1)
        while m == b"N":  # no-op
            m = take(1)
        return m

    def integer(m: bytes) -> int:
        if m not in (b"i", b"U", b"I", b"l", b"L"):
            _refuse(where, f"UBJSON length of another type at byte {pos}")
        fmt, size = _UBJ_NUM[m]
        v = struct.unpack(fmt, take(size))[0]
        if v < 0:
            _refuse(where, f"UBJSON negative length at byte {pos}")
        return v

    def string() -> str:
        k = integer(marker())
        try:
            return take(k).decode("utf-8")
        except UnicodeDecodeError:
            _refuse(where, f"UBJSON string not UTF-8 before byte {pos}")

    def value(m: bytes, depth: int):
        if depth > _UBJ_NESTING:
            _refuse(where, f"UBJSON nested deeper than {_UBJ_NESTING}")
        if m in _UBJ_NUM:
            fmt, size = _UBJ_NUM[m]
            return struct.unpack(fmt, take(size))[0]
        if m in _UBJ_CONSTANTS:
            return _UBJ_CONSTANTS[m]
        if m == b"C":
            return take(1).decode("latin-1")
        if m in (b"S", b"H"):  # a string, or a high-precision number written as one
            return string()
        if m in (b"[", b"{"):
            return container(m, depth + 1)
        _refuse(where, f"an unknown UBJSON marker at byte {pos - 1}")

    def container(open_: bytes, depth: int):
        nonlocal pos
        typ, count = None, None
        if blob[pos:pos + 1] == b"$":
            pos += 1
            typ = take(1)
            if blob[pos:pos + 1] != b"#":
                _refuse(where, f"UBJSON typed container without a count at byte {pos}")
        if blob[pos:pos + 1] == b"#":
            pos += 1
            count = integer(marker())
            # every element takes at least one byte (a typed one of a sized type its size): no count beyond the data
            width = _UBJ_NUM[typ][1] if typ in _UBJ_NUM else (0 if typ in (b"Z", b"T", b"F") else 1)
            if count * max(width, 1 if typ is None else width) > n - pos and typ not in (b"Z", b"T", b"F"):
                _refuse(where, f"UBJSON count {count} beyond the file's remaining {n - pos} bytes")
            if typ in (b"Z", b"T", b"F") and count > n:
                _refuse(where, f"UBJSON count {count} beyond the file's size")
        if open_ == b"[":
            if typ in _UBJ_NUM and count is not None:  # a typed numeric array in one read
                fmt, size = _UBJ_NUM[typ]
                arr = np.frombuffer(take(count * size), dtype=np.dtype(fmt))
                return arr.astype(np.float64 if fmt[-1] in "fd" else np.int64).tolist()
            out = []
            if count is not None:
                for _ in range(count):
                    out.append(value(typ if typ is not None else marker(), depth))
                return out
            while True:
                m = marker()
                if m == b"]":
                    return out
                out.append(value(m, depth))
        obj: dict = {}
        if count is not None:
            for _ in range(count):
                k = string()
                obj[k] = value(typ if typ is not None else marker(), depth)
            return obj
        while True:
            if blob[pos:pos + 1] == b"}":
                pos += 1
                return obj
            k = string()
            obj[k] = value(marker(), depth)

    return value(marker(), 0)


# -- XGBoost ----------------------------------------------------------------------------------------------------------

def _as_int(v, where: str, what: str, lo: int | None = None, hi: int | None = None) -> int:
    """An int written as a JSON number or as a string of digits (XGBoost writes its parameters as strings)."""
    if isinstance(v, bool):
        _refuse(where, f"{what} is a boolean")
    if isinstance(v, str) and re.fullmatch(r"-?\d{1,19}", v.strip()):
        v = int(v)
    if not isinstance(v, int):
        _refuse(where, f"{what} is a {type(v).__name__}, not an integer")
    if (lo is not None and v < lo) or (hi is not None and v > hi):
        _refuse(where, f"{what} = {v} outside [{lo}, {hi}]")
    return v


def _floats(s, where: str, what: str) -> list[float]:
    """XGBoost's float parameters: ``"5E-1"`` or ``"[4.6E-1]"`` (a vector in 3.x)."""
    if not isinstance(s, str):
        s = str(s)
    parts = [p for p in s.strip().strip("[]").split(",") if p.strip()]
    try:
        vals = [float(p) for p in parts]
    except ValueError:
        _refuse(where, f"{what} is not numbers")
    if not vals or not all(math.isfinite(v) for v in vals):
        _refuse(where, f"{what} is not finite numbers")
    return vals


def _array(t: dict, key: str, n: int, where: str, kind: str) -> np.ndarray:
    v = t.get(key)
    if not isinstance(v, list):
        _refuse(where, f"{key} is {type(v).__name__}, not a list")
    if len(v) != n:
        _refuse(where, f"{key} has {len(v)} entries for {n} nodes")
    if not all(type(x) in ((int,) if kind == "int" else (int, float)) for x in v):
        bad = next(x for x in v if type(x) not in ((int,) if kind == "int" else (int, float)))
        _refuse(where, f"{key} holds a {type(bad).__name__}")
    a = np.asarray(v, dtype=np.int64 if kind == "int" else np.float64) if v else np.zeros(0)
    if kind != "int" and a.size and not np.isfinite(a).all():
        _refuse(where, f"{key} holds a NaN or infinite value")
    return a


def _check_children(left: np.ndarray, right: np.ndarray, n: int, where: str, *, leaf_marker) -> None:
    """Children of a tree in node-array form: a node is a leaf when both children are ``leaf_marker(value)``, else
    both lie after it and inside the tree; every node but the root is reached once."""
    idx = np.arange(n)
    leaf_l, leaf_r = leaf_marker(left), leaf_marker(right)
    if (leaf_l != leaf_r).any():
        _refuse(where, f"node {int(np.flatnonzero(leaf_l != leaf_r)[0])} has one child")
    inner = ~leaf_l
    for name, c in (("left", left), ("right", right)):
        bad = inner & ((c <= idx) | (c >= n))
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            _refuse(where, f"node {i}'s {name} child {int(c[i])} is not after it inside the tree's {n} nodes")
    reached = np.bincount(np.r_[left[inner], right[inner]].astype(np.int64), minlength=n)
    if n and (reached[0] != 0 or (reached[1:] != 1).any()):
        i = int(np.flatnonzero(np.r_[reached[0] != 0, reached[1:] != 1])[0])
        _refuse(where, f"node {i} is reached {int(reached[i])} times")


def check_xgboost_model(d, where: str) -> dict:
    """Check an XGBoost model (its JSON, parsed) before XGBoost loads it; return what the audit reads of it:
    ``objective``, ``n_outputs`` (1 for a binary objective, else the classes), ``num_feature``, ``feature_names``,
    ``n_trees``, ``rounds`` (boosting rounds, an early-stopped model's best iteration + 1), ``parallel``
    (``num_parallel_tree``), ``depth`` (the deepest tree), ``attributes`` and ``trees`` (each tree's leaf mask).

    Raises UnsafeFileError (one line naming ``where``) for anything out of shape."""
    from ...learners.xgb import XGB_OBJECTIVES

    if not isinstance(d, dict) or not isinstance(d.get("learner"), dict):
        _refuse(where, "no 'learner' object: not an XGBoost JSON/UBJSON model")
    ver = d.get("version")
    if not (isinstance(ver, list) and len(ver) == 3 and all(type(v) is int for v in ver)):
        _refuse(where, "version is not three integers")
    if ver[0] < 2:
        raise UnsupportedError(f"{where} was written by XGBoost {'.'.join(map(str, ver))}; leakaudit reads models of "
                               "XGBoost 2 or later: load it and save it again with a recent XGBoost")
    lrn = d["learner"]
    gb = lrn.get("gradient_booster")
    if not isinstance(gb, dict) or not isinstance(gb.get("model"), dict):
        _refuse(where, "no gradient_booster model")
    if gb.get("name") != "gbtree":
        raise UnsupportedError(f"{where}: an XGBoost booster other than gbtree; leakaudit audits tree "
                               "boosters (gbtree)")
    obj = lrn.get("objective")
    objective = obj.get("name") if isinstance(obj, dict) else None
    if objective not in XGB_OBJECTIVES:
        raise UnsupportedError(f"{where}: an XGBoost objective leakaudit does not audit; it audits classifiers "
                               f"trained with {', '.join(XGB_OBJECTIVES)}")
    mp = lrn.get("learner_model_param")
    if not isinstance(mp, dict):
        _refuse(where, "no learner_model_param")
    num_class = _as_int(mp.get("num_class"), where, "num_class", 0, 100_000)
    num_feature = _as_int(mp.get("num_feature"), where, "num_feature", 1, 100_000_000)
    _as_int(mp.get("num_target", "1"), where, "num_target", 1, 1)
    _floats(mp.get("base_score", "0.5"), where, "base_score")
    binary = objective.startswith("binary:")
    if (num_class > 1) if binary else (num_class < 2):
        _refuse(where, f"objective {objective} with num_class {num_class}")
    groups = 1 if binary else num_class
    names = lrn.get("feature_names", [])
    types = lrn.get("feature_types", [])
    for what, v in (("feature_names", names), ("feature_types", types)):
        if not isinstance(v, list) or not all(isinstance(x, str) for x in v) or len(v) not in (0, num_feature):
            _refuse(where, f"{what} is not a list of {num_feature} strings")
    if any(t in ("c", "categorical") for t in types):
        raise UnsupportedError(f"{where}: an XGBoost model with categorical features; leakaudit audits models on "
                               "numeric inputs (leakaudit's one-hot encoding, or the table's numeric columns)")
    attrs = lrn.get("attributes", {})
    if not isinstance(attrs, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in attrs.items()):
        _refuse(where, "attributes are not strings")
    model = gb["model"]
    gp = model.get("gbtree_model_param", {})
    if not isinstance(gp, dict):
        _refuse(where, "gbtree_model_param is not an object")
    n_trees = _as_int(gp.get("num_trees"), where, "num_trees", 0, MAX_NODES)
    parallel = _as_int(gp.get("num_parallel_tree", "1"), where, "num_parallel_tree", 1, 100_000)
    trees, info = model.get("trees"), model.get("tree_info")
    if not isinstance(trees, list) or len(trees) != n_trees:
        _refuse(where, f"{len(trees) if isinstance(trees, list) else 'no'} trees where num_trees is {n_trees}")
    if not isinstance(info, list) or len(info) != n_trees or not all(type(g) is int and 0 <= g < groups for g in info):
        _refuse(where, f"tree_info is not {n_trees} output groups in [0, {groups})")
    if n_trees % (groups * parallel):
        _refuse(where, f"{n_trees} trees are not whole rounds of {groups * parallel}")
    rounds = n_trees // (groups * parallel)
    indptr = model.get("iteration_indptr")
    if indptr is not None:
        if (not isinstance(indptr, list) or len(indptr) != rounds + 1
                or not all(type(v) is int for v in indptr) or indptr[0] != 0 or indptr[-1] != n_trees
                or any(b < a for a, b in zip(indptr, indptr[1:]))):
            _refuse(where, "iteration_indptr does not run from 0 to the trees' number")
    if "best_iteration" in attrs:
        rounds = _as_int(attrs["best_iteration"], where, "best_iteration", 0, rounds - 1) + 1
    total, depth, leaves = 0, 0, []
    for k, t in enumerate(trees):
        w = f"{where}: tree {k}"
        if not isinstance(t, dict) or not isinstance(t.get("tree_param"), dict):
            _refuse(w, "no tree_param")
        tp = t["tree_param"]
        n = _as_int(tp.get("num_nodes"), w, "num_nodes", 1, MAX_NODES)
        total += n
        if total > MAX_NODES:
            raise UnsafeFileError(f"{where}: its trees hold more than {MAX_NODES:,} nodes; refusing to load it")
        if _as_int(tp.get("num_feature"), w, "num_feature") != num_feature:
            _refuse(w, f"num_feature {tp.get('num_feature')} where the model's is {num_feature}")
        if _as_int(tp.get("num_deleted", "0"), w, "num_deleted") != 0:
            _refuse(w, "deleted nodes")
        if _as_int(tp.get("size_leaf_vector", "1"), w, "size_leaf_vector", 0, 1) > 1:
            _refuse(w, "vector leaves")
        if t.get("id", k) != k:
            _refuse(w, "id out of order")
        left = _array(t, "left_children", n, w, "int")
        right = _array(t, "right_children", n, w, "int")
        parents = _array(t, "parents", n, w, "int")
        feat = _array(t, "split_indices", n, w, "int")
        for key in ("split_conditions", "base_weights", "loss_changes", "sum_hessian"):
            _array(t, key, n, w, "float")
        dl = _array(t, "default_left", n, w, "int")
        st = _array(t, "split_type", n, w, "int")
        if ((dl != 0) & (dl != 1)).any():
            _refuse(w, "default_left is not 0/1")
        if (st != 0).any() or any(t.get(key, []) != [] for key in ("categories", "categories_nodes",
                                                                   "categories_segments", "categories_sizes")):
            raise UnsupportedError(f"{w}: categorical splits; leakaudit audits models on numeric inputs")
        _check_children(left, right, n, w, leaf_marker=lambda c: c == -1)
        inner = left != -1
        if ((feat < 0) | (feat >= num_feature))[inner].any():
            i = int(np.flatnonzero(inner & ((feat < 0) | (feat >= num_feature)))[0])
            _refuse(w, f"node {i} splits on feature {int(feat[i])} of {num_feature}")
        if parents[0] != _XGB_NO_PARENT:
            _refuse(w, f"the root's parent is {int(parents[0])}")
        kids = np.r_[left[inner], right[inner]]
        owners = np.r_[np.flatnonzero(inner), np.flatnonzero(inner)]
        if (parents[kids] != owners).any():
            _refuse(w, "parents do not match the children")
        d_ = np.zeros(n, dtype=np.int64)
        for i in np.flatnonzero(inner):  # children after their parent: one pass in node order
            d_[left[i]] = d_[right[i]] = d_[i] + 1
        depth = max(depth, int(d_.max()))
        leaves.append(~inner)
    return {"objective": objective, "n_outputs": groups, "num_feature": num_feature, "feature_names": names,
            "n_trees": n_trees, "rounds": rounds, "parallel": parallel, "depth": depth, "attributes": attrs,
            "leaves": leaves, "scale_pos_weight": (obj.get("reg_loss_param") or {}).get("scale_pos_weight")}


def _xgb_booster_from(d: dict):
    """An XGBoost Booster loaded from the checked model ``d``, written anew as JSON (never the file's own bytes)."""
    xgb = require("xgboost", "an XGBoost model")
    b = xgb.Booster()
    b.load_model(bytearray(json.dumps(d, allow_nan=False).encode("utf-8")))
    b.set_param({"nthread": 1})
    return b


# -- LightGBM ---------------------------------------------------------------------------------------------------------

_INT = re.compile(r"-?\d{1,19}")
_FLOAT = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d{1,4})?")
_LGB_TREE_KEYS = {"num_leaves": "int1", "num_cat": "int1", "split_feature": "int", "split_gain": "float",
                  "threshold": "float", "decision_type": "int", "left_child": "int", "right_child": "int",
                  "leaf_value": "float", "leaf_weight": "float", "leaf_count": "int", "internal_value": "float",
                  "internal_weight": "float", "internal_count": "int", "is_linear": "int1", "shrinkage": "float1"}


def _tokens(v: str, where: str, key: str, kind: str) -> list:
    pat = _INT if kind.startswith("int") else _FLOAT
    toks = v.split()
    for tok in toks:
        if not pat.fullmatch(tok):
            _refuse(where, f"{key} holds a token that is not a number")
    vals = [int(t) for t in toks] if kind.startswith("int") else [float(t) for t in toks]
    if not kind.startswith("int") and not all(math.isfinite(x) for x in vals):
        _refuse(where, f"{key} holds an infinite value")
    if kind.endswith("1") and len(vals) != 1:
        _refuse(where, f"{key} is not one number")
    return vals


def _fmt(vals: list, kind: str) -> str:
    return " ".join(str(int(v)) if kind.startswith("int") else repr(float(v)) for v in vals)


def parse_lightgbm_text(text: str, where: str) -> dict:
    """Parse and check a LightGBM text model before LightGBM loads it; return ``objective``, ``n_outputs``,
    ``num_feature``, ``feature_names``, ``n_trees``, ``rounds``, ``parameters`` (the ``parameters:`` section, name
    -> value), ``leaf_counts`` and ``canonical`` (the model written anew from the checked values).

    Raises UnsafeFileError (one line naming ``where``) for anything out of shape."""
    from ...learners.lgbm import LGBM_OBJECTIVES

    lines = text.split("\n")
    if not lines or lines[0].strip() != "tree":
        _refuse(where, "it does not start with LightGBM's 'tree' line")
    end = next((i for i, ln in enumerate(lines) if ln.strip() == "end of trees"), None)
    if end is None:
        _refuse(where, "no 'end of trees' line")
    first_tree = next((i for i in range(1, end) if lines[i].startswith("Tree=")), end)
    header: dict[str, str] = {}
    flags = []
    for ln in lines[1:first_tree]:
        ln = ln.strip()
        if not ln:
            continue
        if "=" in ln:
            k, v = ln.split("=", 1)
            if k in header:
                _refuse(where, "a header key given twice")
            header[k] = v
        else:
            flags.append(ln)
    for key in ("version", "num_class", "num_tree_per_iteration", "max_feature_idx", "objective", "feature_names",
                "feature_infos"):
        if key not in header:
            _refuse(where, f"no {key} in the header")
    if not re.fullmatch(r"v[1-9]", header["version"].strip()):
        _refuse(where, "a version other than v1 to v9")
    num_class = _tokens(header["num_class"], where, "num_class", "int1")[0]
    per_iter = _tokens(header["num_tree_per_iteration"], where, "num_tree_per_iteration", "int1")[0]
    max_idx = _tokens(header["max_feature_idx"], where, "max_feature_idx", "int1")[0]
    label_index = _tokens(header.get("label_index", "0"), where, "label_index", "int1")[0]
    if not 0 <= max_idx < 100_000_000:
        _refuse(where, f"max_feature_idx {max_idx}")
    n_feat = max_idx + 1
    obj_tokens = header["objective"].split()
    objective = obj_tokens[0] if obj_tokens else ""
    if objective not in LGBM_OBJECTIVES:
        raise UnsupportedError(f"{where}: a LightGBM objective leakaudit does not audit; it audits classifiers "
                               f"trained with {' or '.join(LGBM_OBJECTIVES)}")
    obj_args = {}
    for tok in obj_tokens[1:]:
        k, _, v = tok.partition(":")
        if k not in ("sigmoid", "num_class") or not _FLOAT.fullmatch(v):
            _refuse(where, "an objective argument other than sigmoid:X or num_class:N")
        obj_args[k] = float(v)
    if objective == "binary":
        if num_class != 1 or per_iter != 1 or not (0 < obj_args.get("sigmoid", 1.0) < 1e6):
            _refuse(where, f"binary objective with num_class {num_class}, {per_iter} trees per iteration")
        n_outputs = 1
    else:
        if not 2 <= num_class <= 100_000 or per_iter != num_class or obj_args.get("num_class", num_class) != num_class:
            _refuse(where, f"multiclass objective with num_class {num_class}, {per_iter} trees per iteration")
        n_outputs = num_class
    names = header["feature_names"].split()
    infos = header["feature_infos"].split()
    if len(names) != n_feat or len(infos) != n_feat:
        _refuse(where, f"{len(names)} feature names and {len(infos)} feature infos for {n_feat} features")
    if any(not re.fullmatch(r"[\x21-\x7e\u00a0-\uffff]{1,1000}", x) for x in names):
        _refuse(where, "a feature name with control characters")
    if any(not re.fullmatch(r"none|\[[-+0-9.eE:a-z]{1,80}\]", x) for x in infos):
        raise UnsupportedError(f"{where}: a LightGBM model with categorical features; leakaudit audits models on "
                               "numeric inputs")
    # trees
    starts = [i for i in range(first_tree, end) if lines[i].startswith("Tree=")]
    if len(starts) % per_iter:
        _refuse(where, f"{len(starts)} trees are not whole iterations of {per_iter}")
    out = ["tree", f"version={header['version'].strip()}", f"num_class={num_class}",
           f"num_tree_per_iteration={per_iter}", f"label_index={label_index}", f"max_feature_idx={max_idx}",
           f"objective={objective}" + "".join(f" {k}:{_fmt([v], 'int' if k == 'num_class' else 'float')}"
                                              for k, v in obj_args.items()),
           f"feature_names={' '.join(names)}", f"feature_infos={' '.join(infos)}"]
    out += [f for f in flags if f == "average_output"]
    out.append("")
    total, leaf_counts, most_leaves = 0, [], 1
    for k, s in enumerate(starts):
        w = f"{where}: tree {k}"
        if lines[s].strip() != f"Tree={k}":
            _refuse(w, f"line {s + 1} is not Tree={k}")
        stop = starts[k + 1] if k + 1 < len(starts) else end
        t: dict[str, str] = {}
        for i, ln in enumerate(lines[s + 1:stop], s + 2):
            ln = ln.strip()
            if not ln:
                continue
            key, eq, v = ln.partition("=")
            if not eq:
                _refuse(w, f"line {i} is not key=value")
            if key in t:
                _refuse(w, f"line {i} gives a key twice")
            t[key] = v
        if "num_leaves" not in t or "leaf_value" not in t:
            _refuse(w, "no num_leaves or leaf_value")
        vals = {key: _tokens(t[key], w, key, kind) for key, kind in _LGB_TREE_KEYS.items() if key in t}
        nl = vals["num_leaves"][0]
        if not 1 <= nl <= 131_072:
            _refuse(w, f"num_leaves {nl}")
        most_leaves = max(most_leaves, nl)
        total += 2 * nl
        if total > MAX_NODES:
            raise UnsafeFileError(f"{where}: its trees hold more than {MAX_NODES:,} nodes; refusing to load it")
        if vals.get("num_cat", [0])[0] != 0 or "cat_boundaries" in t or "cat_threshold" in t:
            raise UnsupportedError(f"{w}: categorical splits; leakaudit audits models on numeric inputs")
        if vals.get("is_linear", [0])[0] != 0:
            raise UnsupportedError(f"{w}: a linear tree; leakaudit audits constant-leaf trees")
        n_in = nl - 1
        lengths = {"split_feature": n_in, "split_gain": n_in, "threshold": n_in, "decision_type": n_in,
                   "left_child": n_in, "right_child": n_in, "internal_value": n_in, "internal_weight": n_in,
                   "internal_count": n_in, "leaf_value": nl, "leaf_weight": nl, "leaf_count": nl}
        required = ("split_feature", "threshold", "decision_type", "left_child", "right_child") if n_in else ()
        for key, length in lengths.items():
            if key not in vals:
                if key in required:
                    _refuse(w, f"no {key}")
                continue
            if len(vals[key]) != length and not (length == n_in == 0 and not vals[key]):
                _refuse(w, f"{key} has {len(vals[key])} entries for {nl} leaves")
        if n_in:
            left, right = np.asarray(vals["left_child"]), np.asarray(vals["right_child"])
            for name, c in (("left", left), ("right", right)):
                bad = ((c >= 0) & ((c <= np.arange(n_in)) | (c >= n_in))) | ((c < 0) & (~c >= nl))
                if bad.any():
                    i = int(np.flatnonzero(bad)[0])
                    _refuse(w, f"node {i}'s {name} child {int(c[i])} is outside the tree")
            kids = np.r_[left, right]
            inner_reached = np.bincount(kids[kids >= 0], minlength=n_in)
            leaf_reached = np.bincount(~kids[kids < 0], minlength=nl)
            if inner_reached[0] != 0 or (inner_reached[1:] != 1).any() or (leaf_reached != 1).any():
                _refuse(w, "a node reached other than once")
            feat = np.asarray(vals["split_feature"])
            if ((feat < 0) | (feat >= n_feat)).any():
                i = int(np.flatnonzero((feat < 0) | (feat >= n_feat))[0])
                _refuse(w, f"node {i} splits on feature {int(feat[i])} of {n_feat}")
            dt = np.asarray(vals["decision_type"])
            if ((dt < 0) | (dt > 15)).any() or (dt & 1).any():
                raise UnsupportedError(f"{w}: a categorical or unknown decision type; leakaudit audits models on "
                                       "numeric inputs")
        counts = vals.get("leaf_count")
        if counts is not None and any(c < 0 for c in counts):
            _refuse(w, "a negative leaf count")
        leaf_counts.append(None if counts is None else np.asarray(counts, dtype=np.int64))
        out.append(f"Tree={k}")
        out += [f"{key}={_fmt(vals[key], kind)}" for key, kind in _LGB_TREE_KEYS.items() if key in vals]
        out += ["", ""]
    out += ["end of trees", ""]
    params: dict[str, str] = {}
    tail = lines[end + 1:]
    if "parameters:" in [ln.strip() for ln in tail]:
        i = [ln.strip() for ln in tail].index("parameters:")
        for ln in tail[i + 1:]:
            ln = ln.strip()
            if ln == "end of parameters":
                break
            m = re.fullmatch(r"\[([a-z_0-9]{1,60}): (.{0,10000})\]", ln)
            if m:
                params[m.group(1)] = m.group(2).strip()
    n_trees = len(starts)
    return {"objective": objective, "n_outputs": n_outputs, "num_feature": n_feat, "feature_names": names,
            "n_trees": n_trees, "rounds": n_trees // per_iter, "parameters": params, "leaf_counts": leaf_counts,
            "depth": max(int(math.ceil(math.log2(most_leaves))), 1), "most_leaves": most_leaves,
            "canonical": "\n".join(out)}


# -- CatBoost ---------------------------------------------------------------------------------------------------------

#: the magic a cbm file opens with, followed by its flatbuffer's length (little-endian uint32)
CBM_MAGIC = b"CBM1"
#: CatBoost grows trees up to depth 16
_CB_MAX_DEPTH = 16
_CB_NAN = ("AsIs", "AsFalse", "AsTrue")
_CB_OTHER_FEATURES = ("categorical_features", "text_features", "embedding_features", "ctr_data")


def _finite_numbers(v, where: str, what: str) -> list:
    if not isinstance(v, list) or not all(type(x) in (int, float) and math.isfinite(x) for x in v):
        _refuse(where, f"{what} is not a list of finite numbers")
    return v


def check_catboost_json(d, where: str) -> dict:
    """Check a CatBoost model (its JSON, ``save_model(format="json")``, parsed) before CatBoost loads it; return what
    the audit reads of it: ``objective``, ``n_outputs`` (1 for Logloss, else the classes), ``num_feature``,
    ``feature_names``, ``class_names``, ``n_trees``, ``rounds``, ``depth`` and ``params`` (the recorded training
    parameters).

    Every tree must be oblivious (``oblivious_trees``; CatBoost's other grow policies are refused as unsupported),
    of depth at most 16, with ``2^depth`` leaf weights and ``2^depth`` x outputs leaf values, each split on a float
    feature inside the model's width at one of that feature's borders; every number finite. Categorical, text and
    embedding features are refused as unsupported. Raises UnsafeFileError (one line naming ``where``)."""
    from ...learners.catboost import CATBOOST_OBJECTIVES

    if not isinstance(d, dict) or not isinstance(d.get("features_info"), dict):
        _refuse(where, "no 'features_info' object: not a CatBoost JSON model")
    if "trees" in d or "non_symmetric_trees" in d:
        raise UnsupportedError(f"{where}: a CatBoost model of non-symmetric trees (grow_policy Depthwise or "
                               "Lossguide); leakaudit audits CatBoost's default oblivious trees (SymmetricTree)")
    fi = d["features_info"]
    if any(fi.get(k) for k in _CB_OTHER_FEATURES) or d.get("ctr_data"):
        raise UnsupportedError(f"{where}: a CatBoost model with categorical, text or embedding features; leakaudit "
                               "audits models on numeric inputs (leakaudit's one-hot encoding, or the table's numeric "
                               "columns)")
    floats = fi.get("float_features")
    if not isinstance(floats, list) or not floats or len(floats) > 100_000_000:
        _refuse(where, "float_features is not a non-empty list")
    borders, names = [], []
    for i, f in enumerate(floats):
        w = f"{where}: float feature {i}"
        if not isinstance(f, dict):
            _refuse(w, "not an object")
        if _as_int(f.get("feature_index"), w, "feature_index") != i or _as_int(
                f.get("flat_feature_index", i), w, "flat_feature_index") != i:
            _refuse(w, "feature_index out of order")
        b = _finite_numbers(f.get("borders", []), w, "borders")
        if any(y <= x for x, y in zip(b, b[1:])):
            _refuse(w, "borders are not increasing")
        if f.get("nan_value_treatment", "AsIs") not in _CB_NAN:
            _refuse(w, f"nan_value_treatment is not one of {', '.join(_CB_NAN)}")
        name = f.get("feature_id", "")
        if not isinstance(name, str) or len(name) > 1000:
            _refuse(w, "feature_id is not a short string")
        borders.append(set(b))
        names.append(name)
    n_feat = len(floats)
    info = d.get("model_info")
    if not isinstance(info, dict) or not isinstance(info.get("params"), dict):
        _refuse(where, "no model_info params")
    params = info["params"]
    loss = params.get("loss_function")
    objective = loss.get("type") if isinstance(loss, dict) else None
    if objective not in CATBOOST_OBJECTIVES:
        raise UnsupportedError(f"{where}: a CatBoost loss function leakaudit does not audit; it audits "
                               f"classifiers trained with {', '.join(CATBOOST_OBJECTIVES)}")
    cp = info.get("class_params", {})
    class_names = cp.get("class_names", []) if isinstance(cp, dict) else None
    if (not isinstance(class_names, list) or len(class_names) > 100_000
            or not all(type(c) in (int, str) and (type(c) is int or len(c) <= 1000) for c in class_names)):
        _refuse(where, "class_names is not a list of labels")
    n_outputs = 1 if objective == "Logloss" else len(class_names)
    if objective == "Logloss" and len(class_names) not in (0, 2):
        _refuse(where, f"Logloss with {len(class_names)} classes")
    if objective == "MultiClass" and n_outputs < 2:
        _refuse(where, f"MultiClass with {n_outputs} classes")
    sb = d.get("scale_and_bias", [1, [0] * n_outputs])
    if (not isinstance(sb, list) or len(sb) != 2 or type(sb[0]) not in (int, float) or not math.isfinite(sb[0])
            or len(_finite_numbers(sb[1], where, "the bias")) != n_outputs):
        _refuse(where, f"scale_and_bias is not a scale and {n_outputs} biases")
    trees = d.get("oblivious_trees")
    if not isinstance(trees, list):
        _refuse(where, "oblivious_trees is not a list")
    total, depth = 0, 0
    for k, t in enumerate(trees):
        w = f"{where}: tree {k}"
        splits = t.get("splits") if isinstance(t, dict) else None
        if not isinstance(splits, list) or len(splits) > _CB_MAX_DEPTH:
            _refuse(w, f"splits is not a list of at most {_CB_MAX_DEPTH}")
        leaves = 2 ** len(splits)
        total += leaves
        if total > MAX_NODES:
            raise UnsafeFileError(f"{where}: its trees hold more than {MAX_NODES:,} leaves; refusing to load it")
        depth = max(depth, len(splits))
        for s in splits:
            if not isinstance(s, dict) or s.get("split_type") != "FloatFeature":
                raise UnsupportedError(f"{w}: a split of a type other than FloatFeature; leakaudit audits splits on "
                                       "numeric features")
            j = _as_int(s.get("float_feature_index"), w, "float_feature_index")
            if not 0 <= j < n_feat:
                _refuse(w, f"a split on feature {j} of {n_feat}")
            border = s.get("border")
            if type(border) not in (int, float) or border not in borders[j]:
                _refuse(w, f"a split at a value that is not one of feature {j}'s borders")
        if len(_finite_numbers(t.get("leaf_weights"), w, "leaf_weights")) != leaves:
            _refuse(w, f"{len(t['leaf_weights'])} leaf weights for {leaves} leaves")
        if any(x < 0 for x in t["leaf_weights"]):
            _refuse(w, "a negative leaf weight")
        if len(_finite_numbers(t.get("leaf_values"), w, "leaf_values")) != leaves * n_outputs:
            _refuse(w, f"{len(t['leaf_values'])} leaf values for {leaves} leaves of {n_outputs} outputs")
    # a model fitted on a bare array names no feature (feature_id ""): no names, as XGBoost's and LightGBM's
    names = [] if not any(names) else [n or str(i) for i, n in enumerate(names)]
    return {"objective": objective, "n_outputs": n_outputs, "num_feature": n_feat,
            "feature_names": names, "class_names": class_names,
            "n_trees": len(trees), "rounds": len(trees), "depth": depth, "params": params}


def _check_cbm(blob: bytes, where: str) -> None:
    """The frame of a cbm file (CatBoost's binary format, a flatbuffer, not a pickle): its magic and a declared
    length inside the file. CatBoost parses the rest; the model it loads is then checked as JSON
    (:func:`check_catboost_json`) before any prediction."""
    if len(blob) < 8 or blob[:4] != CBM_MAGIC:
        _refuse(where, "no CBM1 header")
    core = struct.unpack("<I", blob[4:8])[0]
    if core == 0 or 8 + core > len(blob):
        _refuse(where, f"its header declares {core:,} bytes of model in a file of {len(blob):,}")


def _cb_quiet():
    """CatBoost's own log lines (which quote a model's parameters) kept off stdout and stderr while it reads one."""
    import io

    from catboost.core import log_fixup

    sink = io.StringIO()
    return log_fixup(sink, sink)


def _cb_load(blob: bytes, fmt: str, where: str):
    """A CatBoost model loaded from ``blob`` (a cbm file's bytes, or checked JSON written anew)."""
    cb = require("catboost", "a CatBoost model file")
    model = cb.CatBoost()
    try:
        with _cb_quiet():
            if fmt == "cbm":
                model.load_model(blob=blob)
            else:
                import tempfile

                with tempfile.NamedTemporaryFile(suffix=".json") as f:
                    f.write(blob)
                    f.flush()
                    model.load_model(f.name, format="json")
    except Exception:  # noqa: BLE001 - CatBoostError, or anything the library raises on a checked model
        raise UnsafeFileError(f"{where} could not be loaded by CatBoost; refusing to use it") from None
    return model


def _grows_the_trees(params: dict, name: str, default: int, largest: int, what: str, where: str) -> None:
    """Refuse a recipe whose size setting ``name`` (the library's ``default`` when absent) could not have grown the
    model's own largest tree (``largest`` in ``what``): the trees its retraining grows are what the budget counts."""
    if int(params.get(name, default)) < largest:
        raise recipe_error(where, name, f"is {params.get(name, default)}; the model holds a tree of {what} {largest}")


def _cb_boosted(model, info: dict, *, source: str, classes=None, where: str) -> Boosted:
    from ...learners.catboost import CatBoostLearner, CatBoostModel, catboost_recipe

    try:
        with _cb_quiet():
            params = model.get_all_params()
    except Exception:  # noqa: BLE001 - CatBoostError: parameters CatBoost itself cannot read
        raise UnsafeFileError(f"{where}: CatBoost cannot read its recorded training parameters; refusing to use "
                              "it") from None
    recipe = catboost_recipe(params, rounds=info["rounds"], n_features=info["num_feature"], where=where)
    if recipe["objective"] != info["objective"]:
        _refuse(where, f"its parameters name another loss than its trees' {info['objective']}")
    n_classes = 2 if info["n_outputs"] == 1 else info["n_outputs"]
    if len(recipe["params"].get("class_weights", [1] * n_classes)) != n_classes:
        raise recipe_error(where, "class_weights", f"does not hold one weight for each of the model's {n_classes} "
                                                   "classes")
    _grows_the_trees(recipe["params"], "depth", 6, info["depth"], "depth", where)
    learner = CatBoostLearner(objective=recipe["objective"], n_rounds=recipe["n_rounds"], params=recipe["params"])
    cm = CatBoostModel(model, n_classes, info["num_feature"])
    p = recipe["params"]
    shown = ", ".join(f"{k} {p[k]:g}" if isinstance(p[k], float) else f"{k} {p[k]}"
                      for k in ("learning_rate", "depth", "l2_leaf_reg", "random_strength", "bootstrap_type",
                                "subsample", "rsm") if k in p)
    seed = f", random_seed {recipe['seed']}" if recipe["seed"] is not None else ""
    text = f"CatBoost {recipe['objective']}, {recipe['n_rounds']} iterations" + (f", {shown}" if shown else "") + seed
    if classes is None and info["class_names"] and info["class_names"] != list(range(n_classes)):
        classes = np.asarray(info["class_names"])
    return Boosted("catboost", cm, learner, info["num_feature"], info["feature_names"], text, classes=classes,
                   source=source, info=info)


def _load_catboost_file(path: Path, fmt: str, where: str) -> Boosted:
    require("catboost", "a CatBoost model file")
    from ...learners.catboost import catboost_json

    blob = path.read_bytes()
    if fmt == "catboost-cbm":
        _check_cbm(blob, where)
        model = _cb_load(blob, "cbm", where)
        info = check_catboost_json(catboost_json(model), where)
    else:
        d = _parse_json(blob, where)
        info = check_catboost_json(d, where)
        model = _cb_load(json.dumps(d, allow_nan=False).encode("utf-8"), "json", where)
    return _cb_boosted(model, info, source=str(path), where=where)


# -- loading ----------------------------------------------------------------------------------------------------------

@dataclass
class Boosted:
    """A checked XGBoost, LightGBM or CatBoost model: its leakaudit model, the learner that retrains its recipe, what
    it takes and how its outputs map to classes."""

    library: str  # xgboost | lightgbm | catboost
    model: object  # XGBoostModel | LightGBMModel | CatBoostModel
    learner: object
    num_feature: int
    feature_names: list[str]
    recipe: str  # the recipe, for the target's description
    classes: object = None  # the wrapper's classes_ (LGBMClassifier) or None: output k is class code k
    source: str = "memory"
    info: dict = field(default_factory=dict)


def _check_size(path: Path) -> None:
    """Refuse a model file whose parsed form (:data:`PARSE_FACTOR` times its bytes) exceeds the memory budget."""
    from ...engine import memory_budget

    size, budget = path.stat().st_size, memory_budget()
    if size * PARSE_FACTOR > budget:
        raise UnsafeFileError(f"model file {path} takes {byte_size(size)}: parsing it would take about "
                              f"{byte_size(size * PARSE_FACTOR)}, over the memory budget of {byte_size(budget)} "
                              "(`memory_budget`); refusing to load it")


def generic_names(names: list[str]) -> bool:
    """Names a library makes up for a model fitted on a bare array: none, ``f0..`` or LightGBM's ``Column_0..``."""
    return not names or all(n in (f"f{i}", f"Column_{i}") for i, n in enumerate(names))


#: the attribute of an XGBoost model that may carry its training configuration (``Booster.save_config()``), set
#: before saving: ``booster.set_attr(training_config=booster.save_config())``
CONFIG_ATTRIBUTE = "training_config"


def _xgb_recipe_text(learner, from_config: bool) -> str:
    p = learner.params or {}
    shown = ", ".join(f"{k} {p[k]}" for k in ("eta", "max_depth", "lambda", "alpha", "min_child_weight", "subsample",
                                             "colsample_bytree", "num_parallel_tree") if k in p)
    text = f"XGBoost {learner.objective}, {learner.n_rounds} rounds" + (f", {shown}" if shown else "")
    if not from_config:
        text += (" (XGBoost's model file records the objective, the rounds and the trees, not the training "
                 "parameters: max_depth is the deepest tree's, the learning rate and regularisation XGBoost's "
                 f"defaults; save the model with booster.set_attr({CONFIG_ATTRIBUTE}=booster.save_config()) first, "
                 "or audit it in memory, to read them all)")
    return text


def _xgb_learner_from_file(info: dict, where: str):
    """The learner of a model's recipe: the configuration it carries (:data:`CONFIG_ATTRIBUTE`), checked, or else
    what its trees show (the deepest tree's depth) and XGBoost's defaults; and whether it had the former."""
    from ...learners.xgb import XGBoostLearner, xgboost_recipe

    text = info["attributes"].get(CONFIG_ATTRIBUTE)
    if text is None:
        params: dict = {"max_depth": max(int(info["depth"]), 1)}
        if info["parallel"] > 1:
            params["num_parallel_tree"] = info["parallel"]
        if info.get("scale_pos_weight") not in (None, "1", 1):
            params["scale_pos_weight"] = info["scale_pos_weight"]
        return XGBoostLearner(objective=info["objective"], n_rounds=int(info["rounds"]), params=params), False
    try:
        config = json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        raise UnsafeFileError(f"{where}: its {CONFIG_ATTRIBUTE} attribute is not JSON; refusing to use it") from None
    if not isinstance(config, dict) or not isinstance(config.get("learner"), dict):
        _refuse(where, f"its {CONFIG_ATTRIBUTE} attribute is not XGBoost's configuration")
    try:
        recipe = xgboost_recipe(config, rounds=info["rounds"], n_features=info["num_feature"], where=where)
    except (AttributeError, TypeError):
        _refuse(where, f"its {CONFIG_ATTRIBUTE} attribute is not XGBoost's configuration")
    if recipe["objective"] != info["objective"]:
        _refuse(where, f"its {CONFIG_ATTRIBUTE} names another objective than its trees' {info['objective']}")
    p = recipe["params"]
    # the recipe must be able to have grown the model's own trees (its sizes are what the work budget counts)
    if int(p.get("num_parallel_tree", 1)) != info["parallel"]:
        raise recipe_error(where, "num_parallel_tree", f"is {p.get('num_parallel_tree', 1)}; the model's trees were "
                                                       f"grown {info['parallel']} a round")
    if int(p.get("max_depth", 6)) > 0:  # 0: no limit
        _grows_the_trees(p, "max_depth", 6, info["depth"], "depth", where)
    return XGBoostLearner(objective=info["objective"], n_rounds=int(info["rounds"]), params=p), True


def _configured(booster, d: dict) -> bool:
    """Whether an XGBoost booster in memory holds a training configuration beyond what its model file would (one
    trained in this process, not loaded from a file: a loaded booster's configuration is XGBoost's defaults)."""
    from ...learners.xgb import _sections

    loaded = _xgb_booster_from(d)
    return _sections(json.loads(booster.save_config())) != _sections(json.loads(loaded.save_config()))


def _xgb_boosted(d, where: str, *, source: str, booster=None) -> Boosted:
    """An XGBoost model from its JSON ``d`` (a file's, or a booster's in memory, with the configuration it was
    trained with as :data:`CONFIG_ATTRIBUTE`): checked, its recipe read the same way for both."""
    info = check_xgboost_model(d, where)
    if booster is None:
        try:
            booster = _xgb_booster_from(d)
        except Exception:  # noqa: BLE001 - XGBoostError, or anything the library raises on a checked model
            raise UnsafeFileError(f"{where} could not be loaded by XGBoost; refusing to use it") from None
    learner, configured = _xgb_learner_from_file(info, where)
    return Boosted("xgboost", _xgb_model(booster, info), learner, info["num_feature"], info["feature_names"],
                   _xgb_recipe_text(learner, from_config=configured), source=source, info=info)


def _xgb_model(booster, info: dict):
    from ...learners.xgb import XGBoostModel

    n_classes = 2 if info["n_outputs"] == 1 else info["n_outputs"]
    rounds = info["rounds"] if info["rounds"] * info["n_outputs"] * info["parallel"] != info["n_trees"] else None
    return XGBoostModel(booster, n_classes, info["objective"], info["num_feature"], rounds)


def _parse_json(blob: bytes, where: str):
    """A model file's JSON, refusing NaN and infinity constants, bad UTF-8 and nesting Python cannot parse."""
    try:
        return json.loads(blob.decode("utf-8"), parse_constant=lambda c: _refuse(where, f"JSON constant {c}"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise UnsafeFileError(f"{where} is not readable JSON: {clip(str(exc))}") from None


def load_boosted_file(path: Path) -> Boosted:
    """Load an XGBoost JSON/UBJSON, LightGBM text or CatBoost JSON/cbm model file, checked before the library reads
    it (the module's docstring); never a pickle."""
    path = check_model_file(path)
    fmt = is_boosted_file(path)
    where = f"model file {path}"
    if fmt is None:
        raise UnsafeFileError(f"{where} is not an XGBoost JSON/UBJSON, LightGBM text or CatBoost JSON/cbm model")
    _check_size(path)
    if fmt.startswith("catboost"):
        return _load_catboost_file(path, fmt, where)
    if fmt.startswith("xgboost"):
        require("xgboost", "an XGBoost model file")
        blob = path.read_bytes()
        if fmt == "xgboost-json":
            d = _parse_json(blob, where)
        else:
            try:
                d = decode_ubjson(blob, where)
            except RecursionError:
                raise UnsafeFileError(f"{where}: UBJSON nested too deep; refusing to use it") from None
        return _xgb_boosted(d, where, source=str(path))
    lgb = require("lightgbm", "a LightGBM model file")
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        raise UnsafeFileError(f"{where} is not UTF-8 text") from None
    info = parse_lightgbm_text(text, where)
    try:
        booster = lgb.Booster(model_str=info["canonical"])
    except Exception:  # noqa: BLE001
        raise UnsafeFileError(f"{where} could not be loaded by LightGBM; refusing to use it") from None
    return _lgb_boosted(booster, info, source=str(path), where=where)


def _lgb_boosted(booster, info: dict, *, source: str, where: str, classes=None) -> Boosted:
    from ...learners.lgbm import LightGBMLearner, LightGBMModel, lightgbm_recipe

    recipe = lightgbm_recipe(info["parameters"], objective=info["objective"], rounds=info["rounds"],
                             n_features=info["num_feature"], where=where)
    _grows_the_trees(recipe["params"], "num_leaves", 31, info["most_leaves"], "leaves", where)
    learner = LightGBMLearner(objective=recipe["objective"], n_rounds=recipe["n_rounds"], params=recipe["params"])
    n_classes = 2 if info["n_outputs"] == 1 else info["n_outputs"]
    model = LightGBMModel(booster, n_classes, info["num_feature"], info["rounds"])
    p = recipe["params"]
    shown = ", ".join(f"{k} {p[k]}" for k in ("learning_rate", "num_leaves", "max_depth", "min_data_in_leaf",
                                             "lambda_l1", "lambda_l2", "bagging_fraction", "bagging_freq",
                                             "feature_fraction") if k in p)
    seed = f", seed {recipe['seed']}" if recipe["seed"] is not None else ""
    text = f"LightGBM {recipe['objective']}, {recipe['n_rounds']} rounds" + (f", {shown}" if shown else "") + seed
    if not info["parameters"]:
        text += " (the model holds no parameters: section; LightGBM's defaults assumed)"
    return Boosted("lightgbm", model, learner, info["num_feature"], info["feature_names"], text, classes=classes,
                   source=source, info=info)


def boosted_from_memory(obj) -> Boosted:
    """A checked model from an ``XGBClassifier`` / ``LGBMClassifier`` / ``CatBoostClassifier`` or a native model
    (``Booster``, ``CatBoost``) given in memory, with the recipe its library records."""
    lib = boosted_library(obj)
    name = type(obj).__name__
    where = f"the given {name}"
    if lib in ("xgboost", "lightgbm"):
        try:  # a scikit-learn wrapper's booster, or the native booster itself
            booster = (obj.get_booster() if hasattr(obj, "get_booster") else obj) if lib == "xgboost" else (
                obj.booster_ if hasattr(obj, "booster_") else obj)
        except Exception as exc:  # noqa: BLE001 - the wrapper's NotFittedError or LGBMNotFittedError
            raise InvalidInputError(f"{where} is not fitted: {clip(str(exc))}") from None
    if lib == "xgboost":
        d = json.loads(bytes(booster.save_raw("json")))
        attrs = d.get("learner", {}).get("attributes")
        if isinstance(attrs, dict) and CONFIG_ATTRIBUTE not in attrs and _configured(booster, d):
            attrs[CONFIG_ATTRIBUTE] = booster.save_config()
        return _xgb_boosted(d, where, source=f"memory ({name})", booster=booster)
    if lib == "lightgbm":
        info = parse_lightgbm_text(booster.model_to_string(), where)
        classes = getattr(obj, "classes_", None) if hasattr(obj, "booster_") else None
        return _lgb_boosted(booster, info, source=f"memory ({name})", where=where, classes=classes)
    if lib == "catboost":
        from ...learners.catboost import catboost_json

        try:
            fitted = obj.is_fitted()
        except Exception:  # noqa: BLE001
            fitted = False
        if not fitted:
            raise InvalidInputError(f"{where} is not fitted")
        info = check_catboost_json(catboost_json(obj), where)
        classes = getattr(obj, "classes_", None) if hasattr(obj, "predict_proba") else None
        return _cb_boosted(obj, info, source=f"memory ({name})", classes=classes, where=where)
    raise InvalidParameterError(f"{name} is not an XGBoost, LightGBM or CatBoost model")


def check_retraining_work(b: Boosted, n_rows: int, where: str) -> float:
    """Refuse a model whose recipe, retrained on ``n_rows`` records, would take more steps than the work budget (the
    recipe's trees, not the file's: a file of 10 trees whose recipe grows 100,000 a round retrains the latter);
    return the estimate. Each tree passes over the rows and features once a level and builds each leaf's
    histograms over the bins, :data:`.model_budget.TREE_ROW_STEPS` steps a cell."""
    from ...engine import work_budget
    from .model_budget import TREE_ROW_STEPS

    p = b.learner.params or {}
    if (b.library == "catboost" and p.get("bootstrap_type", "MVS") in ("MVS", "Bernoulli")
            and p.get("subsample", 0.8) * n_rows / 2 < 2):  # CatBoost refuses to sample fewer rows
        raise recipe_error(where, "subsample", f"is {p.get('subsample', 0.8):g}: it samples fewer than 2 of the "
                                               f"{n_rows // 2:,} records a reference model trains on")
    n_classes = max(b.model.n_classes_, 2)
    t = b.learner.tree_shape(n_rows, n_classes)
    per_tree = t.levels * n_rows * b.num_feature + t.leaves * b.num_feature * min(t.bins, n_rows)
    steps = float(TREE_ROW_STEPS) * (t.trees * per_tree + b.learner.n_rounds * t.row_passes * n_rows)
    budget = work_budget()
    if steps > budget:
        raise UnsafeFileError(f"{where}: its recipe grows {t.trees:,} trees of up to {t.leaves:,} leaves, about "
                              f"{steps:.2g} steps to retrain on {n_rows:,} records, over the work budget of "
                              f"{budget:.2g} steps (LEAKAUDIT_WORK_BUDGET); refusing to use it")
    return steps


def xgb_leaf_records(model, X: np.ndarray, leaves: list[np.ndarray]) -> list[np.ndarray]:
    """Members per leaf of each tree of an XGBoost model, by routing the members through it (its file keeps each
    node's hessian sum, not a count of records); leaves no member reaches are left out."""
    xgb = require("xgboost", "an XGBoost model")
    kw = {} if model.rounds_ is None else {"iteration_range": (0, int(model.rounds_))}
    ids = np.asarray(model.booster_.predict(xgb.DMatrix(X, nthread=1, feature_names=model.booster_.feature_names),
                                               pred_leaf=True, **kw)).astype(np.int64)
    ids = ids.reshape(X.shape[0], -1)
    out = []
    for t in range(min(ids.shape[1], len(leaves))):
        counts = np.bincount(ids[:, t], minlength=leaves[t].size)[: leaves[t].size][leaves[t]]
        out.append(counts[counts > 0])
    return out
