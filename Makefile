# leakaudit: the two commands on a fresh machine are `make audit` and `make test`.
SHELL := /bin/bash
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python
PYTEST_ARGS ?=

.PHONY: install audit test test-slow test-all bench calibrate reproductions clean lm-demo

install: $(VENV)/.installed

# setup.py compiles the kernels (learners/*.c, the headers they include) into the checkout at install: a changed source reinstalls
KERNEL_SOURCES := setup.py src/leakaudit/learners/_kernel_flags.py $(wildcard src/leakaudit/learners/*.c) \
                  $(wildcard src/leakaudit/learners/*.h)
# the core install: what `make audit` (a scikit-learn audit) needs, no extras
$(VENV)/.installed-core: pyproject.toml Makefile $(KERNEL_SOURCES)
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e .
	touch $@

# everything, for the tests: the core install, then the dependencies of every extra and the test tools, read from
# pyproject.toml (not `pip install -e .[...]`, which would build the package and compile the kernels again)
EXTRAS := torch,ray,text,lm,dp,parquet,xgboost,lightgbm,catboost,mlflow,dev
$(VENV)/.installed: $(VENV)/.installed-core pyproject.toml Makefile
	# torch pinned to the CPU build on this machine's disk (a looser pin pulls a CUDA build of several GB)
	$(PY) -m pip install --quiet torch==2.13.0
	$(PY) -c 'import tomllib; extra = tomllib.load(open("pyproject.toml", "rb"))["project"]["optional-dependencies"]; \
	          print("\n".join(r for name in "$(EXTRAS)".split(",") for r in extra[name]))' > $(VENV)/extras.txt
	$(PY) -m pip install --quiet -r $(VENV)/extras.txt
	touch $@

audit: $(VENV)/.installed-core
	$(VENV)/bin/leakaudit audit --out runs/demo

# the default suite on two worker processes (pytest-xdist), a test module's tests kept on one worker
test: install
	$(PY) -m pytest -m "not slow" -n 2 --dist loadscope $(PYTEST_ARGS)

test-slow: install
	$(PY) -m pytest -m "slow" $(PYTEST_ARGS)

test-all: install
	$(PY) -m pytest $(PYTEST_ARGS)

bench: install
	$(PY) benchmarks/run_all.py

calibrate: install  # how often the verdict is wrong on models whose truth is known -> docs/calibration.md
	$(PY) benchmarks/calibration.py

# docs/reproduction.md: every reproduction at its page profile (reproduce/_page.py), keeping runs the same code stored,
# REPRO_JOBS of them at once (one per core on the 2-core machine the page is made on), each on one thread: the page's
# runs were made so, and a thread count changes the order of floating-point sums (benchmarks/thread_order.py)
REPRO_JOBS ?= 2
reproductions: install
	OMP_NUM_THREADS=1 $(VENV)/bin/leakaudit reproduce --all --jobs $(REPRO_JOBS) --out docs/reproduction --gather docs/reproduction.md

# the language-model demo: a small GPT-2 built and fine-tuned here on SpamAssassin e-mails, then audited (docs/lm.md)
LM_DEMO := runs/lm-demo
lm-demo: install
	$(PY) -m leakaudit.lm.demo --out $(LM_DEMO) --size small
	$(VENV)/bin/leakaudit audit --model-dir $(LM_DEMO)/target --reference-dir $(LM_DEMO)/base \
		--members $(LM_DEMO)/members.jsonl --nonmembers $(LM_DEMO)/nonmembers.jsonl --text-column text \
		--out $(LM_DEMO)/audit

clean:
	rm -rf $(VENV) runs .pytest_cache
