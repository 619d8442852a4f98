#!/usr/bin/env bash
# Create one virtual environment per peer tool under benchmarks/.peers/<tool>/ and install the peer there.
# The peers are NOT dependencies of leakaudit; they only serve the comparisons in benchmarks/bench_*.py.
# Usage: bash benchmarks/peers.sh [art|sacroml|privacymeter|tfprivacy ...]   (default: all, in parallel)
# Each install is capped at PEER_INSTALL_TIMEOUT seconds (default 1800: on a loaded 2-core machine
# unpacking torch alone took over 10 minutes); a failed install writes its last error line to
# benchmarks/.peers/<tool>/INSTALL_FAILED and the script moves on. Installed versions go to
# benchmarks/.peers/<tool>/versions.txt (pip freeze).
set -u
HERE="$(cd "$(dirname "$0")" && pwd)"
PEERS="$HERE/.peers"
PY="${PEER_PYTHON:-$(command -v python3.11 || command -v python3)}"
mkdir -p "$PEERS"

# pinned specs (the versions that installed on the benchmark machine; see versions.txt)
declare -A SPEC
# ART's PDTP and ShadowModels run on scikit-learn estimators here (its NN PDTP uses MLPClassifier), but
# `import art` itself imports torch (art/estimators/certification/object_seeker/pytorch.py): pin the CPU build
SPEC[art]="adversarial-robustness-toolbox==1.20.1 scikit-learn torch==2.13.0 packaging"  # art imports packaging, undeclared
# sacroml depends on torch; pin the CPU build on this machine (a loose spec pulls a CUDA build of several GB)
SPEC[sacroml]="sacroml==2.0.1 torch==2.13.0"
# the privacy-meter 1.0.1 wheel declares no dependencies, but privacy_meter/model.py imports tensorflow, torch
# and opacus at the top and audit_report.py imports seaborn, jinja2, PIL, pandas: install them explicitly
SPEC[privacymeter]="privacy-meter==1.0.1 numpy scipy scikit-learn pandas matplotlib seaborn jinja2 pillow torch==2.13.0 opacus==1.6.0 tensorflow-cpu==2.21.0"
# TF Privacy's attack library (LiRA scoring in privacy_tests/.../advanced_mia.py, with the Keras loop of its own
# example). The 0.9.0 wheel on PyPI lacks privacy_tests/ (its membership_inference_attack shim imports a missing
# module) and resolves to tensorflow 2.21, which its estimator imports break on; 0.8.12 ships advanced_mia but
# pins tf-models-official (not needed for the attacks): install its runtime dependencies, then it with --no-deps.
# scikit-learn < 1.5: its models.py imports sklearn.utils.parallel_backend (removed in 1.5).
SPEC[tfprivacy]="tensorflow==2.15.1 tensorflow-estimator==2.15.0 tensorflow-probability==0.22.1 dm-tree==0.1.8 dp-accounting==0.4.3 absl-py==1.4.0 immutabledict~=2.2 pandas~=1.4 matplotlib~=3.3 statsmodels~=0.13 scikit-learn==1.4.2 packaging~=22.0 attrs"
declare -A NODEPS
NODEPS[tfprivacy]="tensorflow-privacy==0.8.12"

install_one() {
  local tool="$1" dir="$PEERS/$1"
  rm -rf "$dir"; mkdir -p "$dir"
  "$PY" -m venv "$dir/venv" || { echo "venv creation failed" > "$dir/INSTALL_FAILED"; return 1; }
  "$dir/venv/bin/python" -m pip install --quiet --upgrade pip > "$dir/install.log" 2>&1
  if timeout "${PEER_INSTALL_TIMEOUT:-1800}" "$dir/venv/bin/python" -m pip install ${SPEC[$tool]} >> "$dir/install.log" 2>&1 \
     && { [ -z "${NODEPS[$tool]:-}" ] || "$dir/venv/bin/python" -m pip install --no-deps ${NODEPS[$tool]} >> "$dir/install.log" 2>&1; }; then
    "$dir/venv/bin/python" -m pip freeze > "$dir/versions.txt"
    echo "$tool: installed"
  else
    grep -E "ERROR|error:" "$dir/install.log" | tail -n 1 > "$dir/INSTALL_FAILED"
    [ -s "$dir/INSTALL_FAILED" ] || tail -n 1 "$dir/install.log" > "$dir/INSTALL_FAILED"
    echo "$tool: FAILED: $(cat "$dir/INSTALL_FAILED")"
  fi
}

tools=("$@"); [ ${#tools[@]} -eq 0 ] && tools=(art sacroml privacymeter tfprivacy)
for t in "${tools[@]}"; do install_one "$t" & done
wait
