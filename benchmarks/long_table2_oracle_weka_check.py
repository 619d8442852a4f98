"""Issue 88: the oracle's LMT and SimpleLogistic (benchmarks/_lmt_oracle.py, long_table2_oracle.py) against Weka's own.

Needs Java and Weka's jar (Debian's package `weka`, 3.6.14: /usr/share/java/weka.jar, or WEKA_JAR). For each seed,
the oracle's D (the same draw as long_table2_oracle.py) is written as ARFF (the Adult file's attribute order, fnlwgt
dropped, '?' a nominal value of its own as in the oracle, each nominal attribute's values in the oracle's order);
Weka's LMT and SimpleLogistic, default options, are trained on D's first 1,000 records (and on those less the first,
999) through a small Java driver that prints distributionForInstance at all 2,000 records with every digit; the
oracle's learners are trained on the same rows; the table gives the largest |p_weka - p_oracle| and Weka's tree size.

    OMP_NUM_THREADS=1 nice -n 10 python benchmarks/long_table2_oracle_weka_check.py --seeds 0 1 2 3 4
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

import long_table2_oracle as o
from _lmt_oracle import LMTLearner, leaves

DRIVER = """
import weka.core.Instances;
import weka.core.converters.ConverterUtils.DataSource;
import weka.classifiers.Classifier;
public class Driver {
  public static void main(String[] a) throws Exception {
    Instances tr = DataSource.read(a[1]); tr.setClassIndex(tr.numAttributes() - 1);
    Instances all = DataSource.read(a[2]); all.setClassIndex(all.numAttributes() - 1);
    Classifier c = a[0].equals("lmt") ? new weka.classifiers.trees.LMT()
                                      : new weka.classifiers.functions.SimpleLogistic();
    c.buildClassifier(tr);
    for (int i = 0; i < all.numInstances(); i++) {
      double[] d = c.distributionForInstance(all.instance(i));
      System.out.println(Double.toString(d[0]) + "," + Double.toString(d[1]));
    }
    System.err.println(c.toString());
  }
}
"""


def write_arff(adult, df, path):
    """The records of df (rows of the Adult frame `adult`) as ARFF; nominal values declared in the oracle's code
    order, '?' named MISSINGVAL (ARFF reads a bare ? as missing)."""

    def val(v):
        return "'MISSINGVAL'" if v == "?" else f"'{v}'"

    attrs = [c for c in o.COLS if c not in ("fnlwgt", "income")]
    lines = ["@relation adult"]
    for c in attrs:
        if c in o.NUM:
            lines.append(f"@attribute {c} numeric")
        else:
            vals = sorted(adult[c].unique())
            lines.append(f"@attribute {c} {{" + ",".join(val(v) for v in vals) + "}")
    lines += ["@attribute income {<=50K,>50K}", "@data"]
    for _, r in df.iterrows():
        cells = [r[c] if c in o.NUM else val(r[c]) for c in attrs]
        lines.append(",".join(cells + [r["income"].rstrip(".")]))
    Path(path).write_text("\n".join(lines) + "\n")


def weka(jar, work, model, train, test):
    out = subprocess.run(["java", "-cp", f"{jar}{os.pathsep}{work}", "Driver", model, train, test],
                         capture_output=True, text=True, check=True)
    tree = out.stderr
    size = next((int(line.split()[-1]) for line in tree.splitlines() if line.startswith("Size of the Tree")), None)
    return np.loadtxt(out.stdout.splitlines(), delimiter=","), size


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2, 3, 4])
    ap.add_argument("--out", default=None,
                    help="result file (default: results/long_table2_oracle/weka_check.json for seeds 0-4, the stored "
                         "check; weka_check_seeds_S.json beside it for other seeds, so a partial run keeps it)")
    args = ap.parse_args(argv)
    jar = os.environ.get("WEKA_JAR", "/usr/share/java/weka.jar")
    if not (shutil.which("java") and shutil.which("javac") and Path(jar).exists()):
        print(f"error: needs java, javac and Weka's jar at {jar} (Debian: apt-get install weka)", file=sys.stderr)
        return 2
    train = pd.read_csv(o.DATA / "adult.data.gz", names=o.COLS, skipinitialspace=True, dtype=str)
    test = pd.read_csv(o.DATA / "adult.test.gz", names=o.COLS, skipinitialspace=True, dtype=str, skiprows=1)
    adult = pd.concat([train, test], ignore_index=True).dropna(subset=["income"])
    num, cat, y, vocab = o.load_adult()
    rows = []
    with tempfile.TemporaryDirectory() as work:
        (Path(work) / "Driver.java").write_text(DRIVER)
        subprocess.run(["javac", "-cp", jar, "-d", work, str(Path(work) / "Driver.java")], check=True)
        for seed in args.seeds:
            D = np.sort(np.random.default_rng(seed).choice(len(y), o.N_D, replace=False))
            X = o.lr_design(num[D], cat[D], vocab)
            yD = y[D]
            write_arff(adult, adult.iloc[D], f"{work}/all.arff")
            for name, idx in (("first 1,000", np.arange(o.N_TRAIN)),
                              ("first 1,000 less the first", np.arange(1, o.N_TRAIN))):
                write_arff(adult, adult.iloc[D[idx]], f"{work}/train.arff")
                for model in ("lmt", "simplelogistic"):
                    p_weka, size = weka(jar, work, "lmt" if model == "lmt" else "sl", f"{work}/train.arff",
                                        f"{work}/all.arff")
                    ours = (LMTLearner(o.SimpleLogisticLearner(200), o.weka_attrs(vocab)) if model == "lmt"
                            else o.SimpleLogisticLearner())
                    p = ours.fit_predict(X[idx], yD[idx], X)
                    row = {"seed": seed, "rows": name, "model": model, "max_abs_diff": float(np.abs(p - p_weka).max()),
                           "same_bin_share": float(np.mean(o.bin_probs(p[:, 1]) == o.bin_probs(p_weka[:, 1])))}
                    if model == "lmt":
                        row.update(weka_tree_size=size, oracle_leaves=len(leaves(ours.root)))
                    rows.append(row)
                    print(json.dumps(row), flush=True)
    version = subprocess.run(["java", "-cp", jar, "weka.core.Version"], capture_output=True, text=True).stdout
    version = version.split()[0]
    stored = args.seeds == ap.get_default("seeds")
    out = Path(args.out) if args.out else o.OUT / ("weka_check.json" if stored else
                                                   f"weka_check_seeds_{'_'.join(map(str, args.seeds))}.json")
    out.write_text(json.dumps({"weka": version, "rows": rows}, indent=1))
    print(f"{out}: worst |p_weka - p_oracle| = {max(r['max_abs_diff'] for r in rows):.2e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
