"""The language-model audit with and without its cache of scored texts (issue 89): the tiny demo recipe (100 members,
100 non-members, one reference model), leakaudit.audit at smoke without a cache, with an empty cache and with the
cache holding the scores, three times each; CPU and wall seconds and the scoring stage. Usage:
    .venv/bin/python benchmarks/lm_score_cache.py
"""
import json
import shutil
import tempfile
import time
from pathlib import Path
import leakaudit
from leakaudit.lm.demo import build_demo
from leakaudit.lm.load import load_causal_lm
tmp = Path(tempfile.mkdtemp())
d = build_demo(tmp / "demo", size="tiny", n_members=100, n_nonmembers=100, n_public=300, pretrain_epochs=2, epochs=10,
               seed=0, n_threads=1)
read = lambda p: [json.loads(l)["text"] for l in open(p)]
mem, non = read(d.members), read(d.nonmembers)
lm, ref = load_causal_lm(d.target_dir), load_causal_lm(d.base_dir)
kw = dict(tokenizer=lm.tokenizer, references=[ref.model], profile="smoke", extraction=False, verbose=False)
rows = []
for label, cache in [("no cache", None), ("empty cache", tmp / "c1"), ("cache holding the scores", tmp / "c1")] * 3:
    c0, t0 = time.process_time(), time.perf_counter()
    r = leakaudit.audit(lm.model, mem, non, cache_dir=None if cache is None else str(cache), **kw)
    rows.append((label, time.process_time() - c0, time.perf_counter() - t0, r.timings.get("scoring")))
    if label == "cache holding the scores":
        shutil.rmtree(cache)
for row in rows: print("%-26s cpu %.2f s wall %.2f s scoring stage %s s" % row)
