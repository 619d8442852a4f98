"""Two page runs side by side: each reproduction's stored run at a git commit against the one in the work tree.

    python3 benchmarks/reproduction_diff.py REF [FOLDER]

REF is a git commit (e.g. the commit a page run started from); FOLDER defaults to docs/reproduction. Prints one
Markdown table row per reproduction: the seconds of both runs, how many values are bit for bit the same and how many
changed (matched by quantity), the largest relative change, and every row whose status changed. A run that is the
same file at REF says 'kept'.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path


def _at(ref: str, path: Path) -> dict | None:
    try:
        text = subprocess.run(["git", "show", f"{ref}:{path.as_posix()}"], check=True, capture_output=True,
                              text=True).stdout
    except subprocess.CalledProcessError:
        return None
    return json.loads(text)


def compare(old: dict, new: dict) -> str:
    before = {r["quantity"]: r for r in old["rows"]}
    same = changed = 0
    worst, worst_text, statuses = 0.0, "—", []
    for r in new["rows"]:
        o = before.get(r["quantity"])
        if o is None:
            statuses.append(f"{r['quantity']}: new")
            continue
        a, b = o["ours"], r["ours"]
        if a == b:
            same += 1
        else:
            changed += 1
            if a is not None and b is not None and abs(a - b) / max(abs(a), 1e-12) > worst:
                worst = abs(a - b) / max(abs(a), 1e-12)
                worst_text = f"{r['quantity']}: {a:.4g} -> {b:.4g}"
        if o["status"] != r["status"]:
            statuses.append(f"{r['quantity']}: {o['status']} -> {r['status']}")
    return (f"{old['seconds']:,.0f} | {new['seconds']:,.0f} | {same} / {changed} | {worst_text} | "
            f"{'; '.join(statuses) or '—'}")


def main(argv: list[str]) -> int:
    if not 1 <= len(argv) <= 2:
        print("usage: reproduction_diff.py REF [FOLDER]", file=sys.stderr)
        return 2
    ref, folder = argv[0], Path(argv[1] if len(argv) == 2 else "docs/reproduction")
    print("| reproduction | run at REF (s) | this run (s) | values identical / changed | largest relative change "
          "| status changes |")
    print("|---|---:|---:|---|---|---|")
    for path in sorted(folder.glob("*.json")):
        new, old = json.loads(path.read_text()), _at(ref, path)
        name = path.stem
        if old is None:
            print(f"| {name} | — | {new['seconds']:,.0f} | new | — | — |")
        elif old == new:
            print(f"| {name} | {old['seconds']:,.0f} | kept | — | — | — |")
        else:
            print(f"| {name} | {compare(old, new)} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
