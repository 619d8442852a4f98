"""The DTP-1 confirmation on deterministic learners (issue 47): a 1-nearest-neighbour rule and a fully grown tree on
Census-Income, trained on the 1,000 audited members (leaky: must be withheld) or on 1,000 other records (null: the
DTP-1 records must not be confirmed on the given model), audited in memory at profile smoke, seeds 200-201.
Prints one line per audit: kind, learner, seed, outcome, (p-value of the like-with-like test, of the raw LiRA one).

Run: ``python benchmarks/dtp_confirmation_deterministic.py`` (about 10 minutes on the shared 2-core machine).
"""
import os

import numpy as np
from sklearn.compose import ColumnTransformer
from sklearn.neighbors import KNeighborsClassifier
from sklearn.tree import DecisionTreeClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler
import leakaudit
from leakaudit.data import load_census_kdd
ds = load_census_kdd(); table = ds.frame.assign(label=np.asarray(ds.class_names)[ds.y])
feats = [c for c in table.columns if c != "label"]
num = list(table[feats].select_dtypes("number").columns); cat = list(table[feats].select_dtypes(exclude="number").columns)
for kind in ("leaky", "null"):
  for est in (KNeighborsClassifier(n_neighbors=1, algorithm="brute"), DecisionTreeClassifier(random_state=0)):
    for seed in (200, 201):
        idx = np.random.default_rng(seed).permutation(len(table))
        mem, non, own = table.iloc[idx[:1000]], table.iloc[idx[1000:2000]], table.iloc[idx[2000:3000]]
        fit_on = mem if kind == "leaky" else own
        model = make_pipeline(ColumnTransformer([("num", StandardScaler(), num), ("cat", OneHotEncoder(handle_unknown="ignore"), cat)]), est).fit(fit_on[feats], fit_on["label"])
        r = leakaudit.audit(model, mem, non, label="label", profile="smoke", seed=seed, cache_dir=os.environ.get("LEAKAUDIT_CACHE", ".leakaudit-cache"), verbose=False)
        conf = (r.dtp or {}).get("confirmation")
        print(kind, type(est).__name__, seed, r.outcome, None if conf is None else (round(conf["p_value"], 4), round(conf["p_value_raw_lira"], 4)), flush=True)
