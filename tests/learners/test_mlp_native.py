"""TorchMLP on the compiled kernel (_mlp_native.c) = the torch trainer, its reference.

The kernel trains float32 nets with one hidden layer of a width it has a copy for. Same algorithm, inits and row
orders as the torch trainer; sums in another order and Eigen's rational tanh (<= 4.4 ulp) instead of torch's, so
weights agree to float32 rounding: after the <= 24 steps of these tests (lr 0.01) within 2e-6, the tolerance
test_mlp_reference.py argues for (a wrong step, order, bias correction, weight decay or gradient scale moves weights
by ~lr * |g| or more). The models of an Adult audit's size are compared statistically instead (accuracy over seeds).
"""

import importlib.util

import numpy as np
import pytest
from _learner_helpers import adult_like  # noqa: E402

from leakaudit.learners import TorchMLP  # noqa: E402
from leakaudit.learners import _mlp_native  # noqa: E402

if _mlp_native.library() is None:  # pragma: no cover - machines without a C compiler
    pytest.skip(f"native kernel unavailable: {_mlp_native.KERNEL.reason}", allow_module_level=True)

TOL = 2e-6
SUBSETS = [np.arange(30), np.arange(5, 22), np.array([3, 17, 4, 29, 11, 0, 8, 21, 13])]  # 30, 17, 9 rows
SEEDS = [5, 6, 7]


def max_diff(a, b):
    return max(max(np.abs(x - y).max() for x, y in zip(a.weights_, b.weights_)),
               max(np.abs(x - y).max() for x, y in zip(a.biases_, b.biases_)))


def build_kernel_with(tmp_path, *definitions):
    """The MLP kernel compiled as setup.py compiles the variant in use, plus ``definitions`` (needs a C compiler)."""
    from leakaudit.learners._kernel_flags import compile_with

    variant = _mlp_native.KERNEL.load().variant
    try:
        path = compile_with("mlp", variant, list(definitions), tmp_path / "mlp_test_build.so")
    except RuntimeError as e:
        pytest.skip(str(e))
    return _mlp_native.KERNEL.open_file(path, variant)


def sparse_data(n=30, d=12, n_classes=2, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * (rng.random((n, d)) < 0.25)
    y = rng.integers(0, n_classes, n)
    y[:n_classes] = np.arange(n_classes)
    return X, y


def against_torch(X, y, kw):
    """Train SUBSETS with the compiled kernel and with the torch trainer; within TOL. (compiled, torch)."""
    pytest.importorskip("torch")
    nat = TorchMLP(backend="compiled", **kw).fit_many(X, y, SUBSETS, SEEDS)
    assert nat.info["kernel"] == "native"
    tb = TorchMLP(backend="torch", **kw).fit_many(X, y, SUBSETS, SEEDS)
    assert tb.info["kernel"] == "torch"
    assert max_diff(nat, tb) < TOL
    # the models trained (moved well beyond the tolerance)
    assert max(np.abs(w - w0).max() for w, w0 in zip(nat.weights_, TorchMLP(backend="torch", **{
        **kw, "epochs": 1, "lr": 1e-30}).fit_many(X, y, SUBSETS, SEEDS).weights_)) > 1e-3
    return nat, tb


@pytest.mark.parametrize("order", ["independent", "shared"])
@pytest.mark.parametrize("optimizer", ["adam", "sgd"])
@pytest.mark.parametrize("activation", ["tanh", "relu"])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_native_equals_torch_path(order, optimizer, activation, n_classes):
    X, y = sparse_data(n_classes=n_classes)
    kw = dict(hidden=(16,), mode="fast", epochs=4, batch_size=8, lr=0.01, order=order, optimizer=optimizer,
              activation=activation, weight_decay=1e-3, sparse_input=True)
    nat, tb = against_torch(X, y, kw)
    assert max_diff(nat, tb) > 0  # really two trainers (sums in another order)


def test_adult_shaped_nets_agree_and_threads_do_not_change_any_model():
    X, y = adult_like(400)
    subsets = [np.arange(0, 300), np.arange(100, 400), np.arange(0, 400, 2), np.arange(50, 250)]
    kw = dict(hidden=(64,), mode="fast", epochs=3, batch_size=50, lr=1e-3, weight_decay=1e-4)
    one = TorchMLP(n_threads=1, **kw).fit_many(X, y, subsets, [1, 2, 3, 4])
    two = TorchMLP(n_threads=2, **kw).fit_many(X, y, subsets, [1, 2, 3, 4])
    assert one.info["kernel"] == two.info["kernel"] == "native"
    for a, b in zip(one.weights_ + one.biases_, two.weights_ + two.biases_):
        np.testing.assert_array_equal(a, b)
    pytest.importorskip("torch")
    tb = TorchMLP(backend="torch", **kw).fit_many(X, y, subsets, [1, 2, 3, 4])
    # the 2-column group's share goes through the one-hot table: sums reassociated, and Adam magnifies the rounding
    # of a near-zero gradient: within 1e-5 of torch's float32 run and of the float64 run (a wrong step moves a
    # weight by ~lr = 1e-3)
    assert one.info["onehot_groups"] >= 1  # the 2-column group (a model may find one more)
    f64 = TorchMLP(dtype="float64", **kw).fit_many(X, y, subsets, [1, 2, 3, 4])
    assert max_diff(one, tb) < 1e-5 and max_diff(one, f64) < 1e-5


def skewed_onehot(n, seed=0):
    """n rows: 3 numeric columns, then one-hot groups of 6, 2 and 12 columns whose first column holds 60 % of the
    rows (dropped by the kernel), a lone 0/1 column, a group of 4 at 25-25-25-25 % (kept: no column holds enough),
    and a group of 5 whose last column no row holds; binary y."""
    rng = np.random.default_rng(seed)
    blocks = [rng.normal(size=(n, 3))]
    for w in (6, 2, 12):
        b = np.zeros((n, w))
        b[np.arange(n), rng.choice(w, n, p=np.r_[0.6, np.full(w - 1, 0.4 / (w - 1))])] = 1
        blocks.append(b)
    blocks.append(rng.integers(0, 2, (n, 1)).astype(float))
    b = np.zeros((n, 4))
    b[np.arange(n), np.arange(n) % 4] = 1
    blocks.append(b)
    b = np.zeros((n, 5))
    b[np.arange(n), np.r_[np.zeros(n // 2, int), rng.integers(1, 4, n - n // 2)]] = 1
    blocks.append(b)
    X = np.hstack(blocks)
    return X, (X[:, 0] + X[:, 3] - X[:, 9] > 0).astype(int)


def prepare(X, rows, member=None):
    from leakaudit.learners._mlp_native import csr_rows

    return _mlp_native.onehot_prepare(*csr_rows(X.astype(np.float32), True), rows, X.shape[1], member)


def reference_groups(X, rows, share=_mlp_native.MIN_DOMINANT_SHARE):
    """The definition, column by column: runs of adjacent 0/1 columns, each row of ``rows`` holding exactly one,
    the most frequent column (the first of equals) in at least ``share`` of them; (dominants, others)."""
    Xu = X[rows]
    n = len(rows)
    cand = [((Xu[:, j] == 0) | (Xu[:, j] == 1)).all() for j in range(X.shape[1])] + [False]
    out, a = ([], []), None
    for j in range(X.shape[1] + 1):
        if a is not None and (not cand[j] or (Xu[:, a:j + 1].sum(1) > 1).any()):
            cnt = Xu[:, a:j].sum(0)
            if j - a >= 2 and (Xu[:, a:j].sum(1) == 1).all() and cnt.max() >= share * n:
                dom = a + int(np.argmax(cnt))
                out[0].append(dom)
                out[1].append([c for c in range(a, j) if c != dom and cnt[c - a] > 0])
            a = None
        if cand[j] and a is None:
            a = j
    return out


def test_onehot_groups_are_found_in_each_models_rows():
    X, _ = skewed_onehot(200)
    dom, groups, rest, _ = prepare(X, np.arange(200))
    # groups at columns 3-8, 9-10, 11-22 (dominant: the first), 23 alone (no group), 24-27 (each column holds
    # exactly MIN_DOMINANT_SHARE = 25 %: kept, dominant the first of equals), 28-32 (dominant 28, 32 held by no row:
    # in no list); then the columns of no group that rows list (the table copies their rows)
    assert dom.tolist() == [3, 9, 11, 24, 28]
    assert groups == [list(range(4, 9)), [10], list(range(12, 23)), [25, 26, 27], [29, 30, 31]]
    assert rest == [0, 1, 2, 23]
    assert (dom.tolist(), groups) == reference_groups(X, np.arange(200))
    X2 = X.copy()
    X2[5, 4] = 1  # row 5 holds two columns of the first group: that run is no group; nor is a 2 a one-hot value
    X2[7, 10] = 2.0
    dom2 = prepare(X2, np.arange(200))[0].tolist()
    assert 3 not in dom2 and 9 not in dom2 and 11 in dom2 and (dom2, prepare(X2, np.arange(200))[1]) == \
        reference_groups(X2, np.arange(200))
    assert prepare(X2, np.arange(8, 200))[0].tolist() == dom.tolist()  # only the rows given
    member = np.ones(200, np.uint8)
    member[[5, 7]] = 0  # or those the member mask keeps
    assert prepare(X2, np.arange(200), member)[0].tolist() == dom.tolist()
    X3 = X.copy()
    X3[0, 3:9] = 0  # row 0 holds none of the first group
    assert 3 not in prepare(X3, np.arange(200))[0]
    rng = np.random.default_rng(0)
    for t in range(20):  # random subsets (with repeats) of rows: the definition's groups
        rows = rng.choice(200, size=int(rng.integers(1, 60)))
        got = prepare(X2, rows)
        assert (got[0].tolist(), got[1]) == reference_groups(X2, rows), t
    assert prepare(rng.normal(size=(20, 6)), np.arange(20))[0].size == 0
    assert prepare(X, np.arange(0))[0].size == 0


def test_onehot_rows_list_the_other_columns():
    from leakaudit.learners._mlp_native import csr_rows

    X, _ = skewed_onehot(50)
    rows = np.array([3, 7, 7, 0, 49, 12])
    dom, _, _, (rstart, rend, ridx, rval) = prepare(X, rows)
    X32 = X.astype(np.float32)
    X32[:, dom] = 0
    ip, ind, val = csr_rows(X32, True)
    for r in rows:
        np.testing.assert_array_equal(ridx[rstart[r]:rend[r]], ind[ip[r]:ip[r + 1]])
        np.testing.assert_array_equal(rval[rstart[r]:rend[r]], val[ip[r]:ip[r + 1]])


@pytest.mark.parametrize("order", ["independent", "shared"])
@pytest.mark.parametrize("optimizer", ["adam", "sgd"])
@pytest.mark.parametrize("activation", ["tanh", "relu"])
@pytest.mark.parametrize("output", ["softmax", "logistic"])
def test_onehot_table_trains_the_models_of_the_plain_rows(monkeypatch, order, optimizer, activation, output):
    """The dominant columns dropped and added back through the bias and the table of differences: the models of the
    full rows to float32 rounding; threads change nothing; weight decay and rows no
    subset holds included."""
    X, y = skewed_onehot(240)
    subsets = [np.arange(0, 200), np.arange(40, 240), np.arange(0, 240, 3)]
    kw = dict(hidden=(16,), mode="fast", epochs=3, batch_size=20, lr=0.01, order=order, optimizer=optimizer,
              activation=activation, weight_decay=1e-3, output=output, sparse_input=True)
    one = TorchMLP(n_threads=1, **kw).fit_many(X, y, subsets, [1, 2, 3])
    two = TorchMLP(n_threads=2, **kw).fit_many(X, y, subsets, [1, 2, 3])
    assert one.info["kernel"] == "native" and one.info["onehot_groups"] == 5
    for a, b in zip(one.weights_ + one.biases_, two.weights_ + two.biases_):
        np.testing.assert_array_equal(a, b)
    if order == "independent":  # a model alone or beside others, the same bit for bit: groups of its own rows
        alone = TorchMLP(**kw).fit(X[subsets[2]], y[subsets[2]], random_state=3, n_classes=2)
        for a, b in zip(alone.weights_ + alone.biases_, [w[2] for w in one.weights_ + one.biases_]):
            np.testing.assert_array_equal(a, b)
    with monkeypatch.context() as mp:
        mp.setattr(_mlp_native, "ONEHOT", False)
        plain = TorchMLP(**kw).fit_many(X, y, subsets, [1, 2, 3])
    assert plain.info["onehot_groups"] == 0
    assert 0 < max_diff(one, plain) < TOL
    monkeypatch.setenv("LEAKAUDIT_NATIVE", "0")
    assert max_diff(one, TorchMLP(**kw).fit_many(X, y, subsets, [1, 2, 3])) < TOL


@pytest.fixture(scope="module")
def row_at_a_time(tmp_path_factory):
    """The kernel built to take one row at a time (compiled once for the module's tests)."""
    return build_kernel_with(tmp_path_factory.mktemp("row_at_a_time"), "-DLEAKAUDIT_ROW_GROUP=1")


@pytest.mark.slow  # compiles a second kernel (about 25 s)
@pytest.mark.parametrize("output", ["softmax", "logistic"])
def test_rows_taken_together_give_the_row_at_a_time_models_bit_for_bit(monkeypatch, row_at_a_time, output):
    """The kernel takes a step's rows 4 (2) at a time so their dependent chains overlap, adding every gradient term
    in row order: the same models, bit for bit, as a build that takes one row at a time (-DLEAKAUDIT_ROW_GROUP=1),
    for widths taken 4 (8, 16, 64) and 2 (96) at a time, both activations, 2 and 3 classes, and batches that leave
    1-3 rows over (17 rows in batches of 8, 300 in batches of 50, 9 rows in one batch). (At 8 units the compiler
    fused the first layer's multiply-adds in one copy and not the other until they were made explicit.) The rows
    taken together also add the inputs they all list at the same positions (here the 5 numeric columns every row
    lists first) in one pass over the group; the row-at-a-time build scatter-adds row after row."""
    X, y2 = adult_like(300)
    y3 = np.arange(300) % 3
    subsets = [np.arange(0, 300), np.arange(5, 22), np.array([3, 17, 4, 29, 11, 0, 8, 21, 13])]
    runs = []
    for hidden, activation, y, batch in [(8, "tanh", y2, 50), (16, "tanh", y2, 8), (64, "relu", y2, 50),
                                         (64, "tanh", y3, 50), (96, "tanh", y2, 8), (96, "relu", y3, 50)]:
        if output == "logistic" and y is y3:
            continue
        kw = dict(hidden=(hidden,), activation=activation, mode="fast", epochs=2, batch_size=batch, lr=1e-2,
                  weight_decay=1e-4, output=output)
        runs.append((kw, y))
    grouped = [TorchMLP(**kw).fit_many(X, y, subsets, [1, 2, 3]) for kw, y in runs]
    with monkeypatch.context() as mp:
        mp.setattr(_mlp_native.KERNEL, "load", lambda: row_at_a_time)
        single = [TorchMLP(**kw).fit_many(X, y, subsets, [1, 2, 3]) for kw, y in runs]
        assert _mlp_native.library() is row_at_a_time.lib
    for g, one in zip(grouped, single):
        assert g.info["kernel"] == one.info["kernel"] == "native"
        for a, b in zip(g.weights_ + g.biases_, one.weights_ + one.biases_):
            np.testing.assert_array_equal(a, b)


@pytest.fixture(scope="module")
def eight_lanes(tmp_path_factory):
    """The AVX-512 kernel built without its 16-lane rows (-DLEAKAUDIT_VEC16=0); skipped on other CPUs."""
    if _mlp_native.KERNEL.load().variant != "avx512":
        pytest.skip("the 16-lane rows are in the avx512 variant only; this CPU runs "
                    f"{_mlp_native.KERNEL.load().variant}")
    return build_kernel_with(tmp_path_factory.mktemp("eight_lanes"), "-DLEAKAUDIT_VEC16=0")


@pytest.mark.slow  # compiles a second kernel (about 50 s)
def test_sixteen_lane_rows_give_the_eight_lane_models_bit_for_bit(monkeypatch, eight_lanes):
    """The AVX-512 build takes a step's rows in 16-lane vectors where the width is a multiple of 16: every lane's
    operations are those of the 8-lane copy, and the sums across hidden units (the logits, DP-SGD's norms) add 8-lane
    halves in order. The same models bit for bit, on sparse one-hot rows and dense rows, mini-batch Adam and DP-SGD
    (clipping and noise), widths 16, 64 and 96 (16-lane) and 8 and 24 (8-lane either way), both activations, 2 and 3
    classes, softmax and logistic outputs."""
    from leakaudit.learners.dp_sgd import DPSGD

    X, y2 = adult_like(300)
    y3 = np.arange(300) % 3
    dense = np.random.default_rng(1).normal(size=(300, 11))
    subsets = [np.arange(0, 300), np.arange(5, 22), np.array([3, 17, 4, 29, 11, 0, 8, 21, 13])]
    runs = []
    for hidden, activation, y, output, rows in [(16, "tanh", y2, "softmax", X), (64, "tanh", y2, "softmax", X),
                                                (64, "relu", y3, "softmax", X), (96, "tanh", y2, "logistic", X),
                                                (8, "tanh", y2, "softmax", X), (24, "relu", y3, "softmax", X),
                                                (64, "tanh", y2, "softmax", dense), (96, "relu", y3, "softmax", dense)]:
        mlp = TorchMLP(hidden=(hidden,), activation=activation, mode="fast", epochs=2, batch_size=50, lr=1e-2,
                       weight_decay=1e-4, output=output)
        runs.append((mlp, rows, y))
        if rows is X and activation == "tanh" and output == "softmax":  # DPSGD's nets: softmax outputs
            runs.append((DPSGD(learner=TorchMLP(hidden=(hidden,), activation=activation),
                               noise_multiplier=1.0, max_grad_norm=0.5, sampling_rate=0.2, epochs=2, lr=0.5), rows, y))

    def train():
        banks = [learner.fit_many(rows, y, subsets, [1, 2, 3]) for learner, rows, y in runs]
        assert all(b.info["kernel"] == "native" for b in banks)
        return banks

    wide = train()
    with monkeypatch.context() as mp:
        mp.setattr(_mlp_native.KERNEL, "load", lambda: eight_lanes)
        narrow = train()
        assert _mlp_native.library() is eight_lanes.lib
    for w, n in zip(wide, narrow):
        for a, b in zip(w.weights_ + w.biases_, n.weights_ + n.biases_):
            np.testing.assert_array_equal(a, b)


def libm_expf_against_the_kernels(tmp_path, stride: int) -> str:
    """Compile a program with the kernel's exp_f32 (as the variant in use is compiled) that compares it with libm's
    expf on every ``stride``-th float bit pattern; its report ("N checked, M differ" and the first differences)."""
    import platform
    import shutil
    import subprocess
    from pathlib import Path

    from leakaudit.learners import _kernel_flags

    variant = _mlp_native.KERNEL.load().variant
    libc, version = platform.libc_ver()
    if variant == "portable":
        pytest.skip("the portable build calls libm's expf itself")
    if libc != "glibc" or tuple(int(v) for v in version.split(".")[:2]) < (2, 28):
        pytest.skip(f"exp_f32 is glibc 2.28's expf; this libc is {libc or 'unknown'} {version}")
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler")
    src = Path(_mlp_native.__file__).with_name("_mlp_common.c")
    (tmp_path / "expf_check.c").write_text(f"""#include <stdio.h>
#include <stdlib.h>
#include "{src}"
int main(int argc, char **argv) {{
    const uint64_t stride = strtoull(argv[1], NULL, 10);
    uint64_t n = 0, bad = 0;
    for (uint64_t u = 0; u < (1ull << 32); u += stride) {{
        const uint32_t b = (uint32_t)u;
        float x, ours, libm;
        memcpy(&x, &b, 4);
        ours = exp_f32(x);
        libm = expf(x);
        n++;
        if (memcmp(&ours, &libm, 4) != 0 && !(ours != ours && libm != libm)) {{
            if (bad++ < 3) printf("x = %a: exp_f32 %a, expf %a\\n", x, ours, libm);
        }}
    }}
    printf("%llu checked, %llu differ\\n", (unsigned long long)n, (unsigned long long)bad);
    return 0;
}}
""")
    exe = tmp_path / "expf_check"
    subprocess.run([cc, *_kernel_flags.COMMON, *_kernel_flags.VARIANTS[variant], "-o", str(exe),
                    str(tmp_path / "expf_check.c"), "-lm"], check=True, capture_output=True)
    return subprocess.run([str(exe), str(stride)], check=True, capture_output=True, text=True).stdout


def test_the_kernels_expf_is_libms_bit_for_bit(tmp_path):
    """The softmax of a row group calls exp_f32, glibc's expf written into the kernel (inlined, so no vector register
    is spilled around a call): libm's result on every 257th float bit pattern (16.7 million, every exponent of
    both signs among them; the slow test below takes all 2^32, NaN and the infinities included)."""
    report = libm_expf_against_the_kernels(tmp_path, 257)
    assert report.endswith("16711936 checked, 0 differ\n"), report


@pytest.mark.slow  # every float: about 35 s
def test_the_kernels_expf_is_libms_on_every_float(tmp_path):
    report = libm_expf_against_the_kernels(tmp_path, 1)
    assert report.endswith("4294967296 checked, 0 differ\n"), report


def test_orders_drawn_in_the_training_task_match_any_block_size():
    """The native kernel draws each model's orders in the task that trains it (a buffer per thread): blocks of one
    epoch, one block, one model per chunk and 1 or 2 threads give the same models bit for bit."""
    X, y = adult_like(200)
    subsets = [np.arange(0, 150), np.arange(40, 200), np.arange(0, 200, 2), np.arange(10, 90)]
    kw = dict(hidden=(16,), mode="fast", epochs=5, batch_size=16, lr=1e-2)
    ref = TorchMLP(n_threads=1, **kw).fit_many(X, y, subsets, [1, 2, 3, 4])
    assert ref.info["kernel"] == "native"
    for n_threads, block_rows, chunk in [(2, 10**6, 32e6), (2, 100, 32e6), (1, 100, 1.0), (2, 1, 1.0)]:
        L = TorchMLP(n_threads=n_threads, **kw)
        L.order_block_rows, L.chunk_bytes = block_rows, chunk
        got = L.fit_many(X, y, subsets, [1, 2, 3, 4])
        for a, b in zip(ref.weights_ + ref.biases_, got.weights_ + got.biases_):
            np.testing.assert_array_equal(a, b)


def test_falls_back_to_torch_where_it_does_not_apply():
    pytest.importorskip("torch")
    X, y = sparse_data()
    kw = dict(mode="fast", epochs=1, batch_size=8, sparse_input=True)
    assert TorchMLP(hidden=(20,), **kw).fit_many(X, y, SUBSETS, SEEDS).info["kernel"] == "torch"  # no copy for 20
    assert TorchMLP(hidden=(16,), dtype="float64", **kw).fit_many(X, y, SUBSETS, SEEDS).info["kernel"] == "torch"
    assert TorchMLP(hidden=(16,), backend="torch", **kw).fit_many(X, y, SUBSETS, SEEDS).info["kernel"] == "torch"
    dense = dict(kw, sparse_input=False)
    assert TorchMLP(hidden=(20,), **dense).fit_many(X, y, SUBSETS, SEEDS).info["kernel"] == "torch"


def dense_data(n=90, d=13, n_classes=2, seed=0):
    """Dense rows with some exact zeros and negative zeros (which the kernel must add as they are)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X[rng.random((n, d)) < 0.1] = 0.0
    X[rng.random((n, d)) < 0.05] = -0.0
    y = rng.integers(0, n_classes, n)
    y[:n_classes] = np.arange(n_classes)
    return X, y


@pytest.mark.parametrize("order", ["independent", "shared"])
@pytest.mark.parametrize("optimizer", ["adam", "sgd"])
@pytest.mark.parametrize("activation", ["tanh", "relu"])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_dense_rows_native_equals_torch_path(order, optimizer, activation, n_classes):
    """Dense rows (no sparse first layer) train on the C kernel's blocked matrix products: the torch path's models
    to float32 rounding."""
    X, y = dense_data(n=30, n_classes=n_classes)
    kw = dict(hidden=(16,), mode="fast", epochs=4, batch_size=8, lr=0.01, order=order, optimizer=optimizer,
              activation=activation, weight_decay=1e-3, sparse_input=False)
    nat, _ = against_torch(X, y, kw)
    assert not nat.info["sparse_input"] and nat.info.get("onehot_groups", 0) == 0


@pytest.mark.parametrize("output", ["softmax", "logistic"])
def test_dense_rows_give_the_models_of_csr_rows_listing_every_column_bit_for_bit(monkeypatch, output):
    """The dense copies (two register-blocked products a step: 6 rows or inputs at a time, 4 or 2 vectors of hidden
    units) add every term in the CSR path's order: the same models bit for bit, for widths that leave 1-3 vectors over
    a block of 4 (8, 16, 24, 40, 56 units) or none (64, 96, 128, 256), inputs that leave 0-5 over (12, 13, 17; 3: fewer
    than a block), batches that leave rows over, -0.0 and 0.0 inputs, both activations and orders, 2 and 3 classes;
    and 1 or 2 threads, and a model alone or in a batch, give the same model."""
    runs = []
    ind, sh = "independent", "shared"
    for hidden, d, activation, n_classes, batch, order in [
            (8, 13, "tanh", 2, 7, ind), (24, 12, "relu", 3, 16, sh), (40, 17, "tanh", 3, 50, ind),
            (56, 13, "relu", 2, 9, ind), (64, 17, "tanh", 2, 32, sh), (96, 12, "tanh", 3, 11, ind),
            (128, 13, "relu", 2, 40, ind), (256, 12, "tanh", 3, 10, sh), (16, 3, "tanh", 2, 8, ind)]:
        if output == "logistic" and n_classes == 3:
            n_classes = 2
        X, y = dense_data(n=90, d=d, n_classes=n_classes, seed=hidden)
        kw = dict(hidden=(hidden,), activation=activation, mode="fast", epochs=2, batch_size=batch, lr=1e-2,
                  weight_decay=1e-4, output=output, order=order, sparse_input=False)
        runs.append((X, y, kw))
    subsets = [np.arange(0, 90), np.arange(5, 40), np.array([3, 17, 4, 29, 11, 0, 8, 21, 13, 60, 61])]
    for X, y, kw in runs:
        dense = TorchMLP(n_threads=2, **kw).fit_many(X, y, subsets, [1, 2, 3])
        one = TorchMLP(n_threads=1, **kw).fit_many(X, y, subsets, [1, 2, 3])
        with monkeypatch.context() as mp:
            mp.setattr(_mlp_native, "DENSE", False)
            csr = TorchMLP(**kw).fit_many(X, y, subsets, [1, 2, 3])
        assert dense.info["kernel"] == csr.info["kernel"] == "native" and dense.info["backend"] == "compiled"
        for other in (one, csr):
            for a, b in zip(dense.weights_ + dense.biases_, other.weights_ + other.biases_):
                np.testing.assert_array_equal(a, b)
        if kw["order"] == "independent":
            alone = TorchMLP(**kw).fit(X[subsets[2]], y[subsets[2]], random_state=3, n_classes=y.max() + 1)
            for a, b in zip(alone.weights_ + alone.biases_, [w[2] for w in dense.weights_ + dense.biases_]):
                np.testing.assert_array_equal(a, b)


def test_auto_trains_dense_rows_on_the_c_kernel_where_it_applies():
    X, y = dense_data()
    kw = dict(mode="fast", epochs=1, batch_size=8, sparse_input=False)
    assert TorchMLP(hidden=(16,), **kw).fit_many(X, y, SUBSETS, SEEDS).info["kernel"] == "native"
    if importlib.util.find_spec("torch") is not None:  # the nets the kernel does not train: torch
        for other in (dict(hidden=(20,)), dict(hidden=(16,), backend="torch"), dict(hidden=(16, 8))):
            info = TorchMLP(**other, **kw).fit_many(X, y, SUBSETS, SEEDS).info
            assert info["backend"] == "torch" and info["kernel"] == "torch"


def test_removed_native_parameter_is_refused_naming_backend():
    from leakaudit.exceptions import InvalidParameterError

    with pytest.raises(InvalidParameterError, match="native= was removed.*native=False use backend='torch'"):
        TorchMLP(hidden=(16,), mode="fast", native=False)
    with pytest.raises(InvalidParameterError, match="native= was removed.*backend='auto'"):
        TorchMLP(hidden=(16,), native=True)
    with pytest.raises(InvalidParameterError, match=r"unexpected keyword argument\(s\) \['nativ'\]"):
        TorchMLP(nativ=True)
    assert "native" not in TorchMLP().get_params()


def test_the_best_variant_the_cpu_runs_is_chosen(monkeypatch):
    """The loader opens the best variant built that the CPU supports, the one LEAKAUDIT_KERNEL_VARIANT names, and
    refuses one the CPU cannot run, saying why; a kernel that was not built is None with the reason."""
    from leakaudit.learners import _native

    monkeypatch.delenv("LEAKAUDIT_KERNEL_VARIANT", raising=False)  # the loader's own choice first
    kernel = _native.CompiledKernel("mlp", _mlp_native._configure)
    monkeypatch.setattr(_native, "_CPU", [0])  # as on a CPU without AVX2
    # every variant in a wheel; an editable install builds only this CPU's best (setup.py)
    built = [v for v in _native.VARIANTS if _native.library_path(f"_mlp_kernel_{v}") is not None]
    loaded = kernel.load()
    if built[0] == "portable":  # not x86-64: the only variant
        assert loaded.variant == "portable" and kernel.reason is None
    else:
        assert f"the CPU lacks the {built[0]} instructions" in kernel.reason
        assert (loaded.variant == "portable") if "portable" in built else loaded is None
        monkeypatch.setenv("LEAKAUDIT_KERNEL_VARIANT", built[0])
        assert kernel.load() is None and f"CPU cannot run the {built[0]} variant" in kernel.reason
    monkeypatch.setenv("LEAKAUDIT_KERNEL_VARIANT", "sse9")
    assert kernel.load() is None and "variant must be one of avx512, avx2, portable" in kernel.reason
    monkeypatch.delenv("LEAKAUDIT_KERNEL_VARIANT")
    missing = _native.CompiledKernel("nosuch", _mlp_native._configure)
    assert missing.load() is None and "not built with the package" in missing.reason


def test_disabled_by_environment(monkeypatch):
    monkeypatch.setenv("LEAKAUDIT_NATIVE", "0")
    assert _mlp_native.library() is None and "LEAKAUDIT_NATIVE=0" in _mlp_native.KERNEL.reason
    assert not _mlp_native.supports(64, np.float32)


@pytest.mark.parametrize("activation", ["tanh", "relu"])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_faithful_native_equals_torch_path(activation, n_classes):
    """Per-example SGD (faithful mode): 3 epochs of <= 30 steps at lr 0.01; float32 rounding only."""
    X, y = sparse_data(n_classes=n_classes)
    kw = dict(hidden=(16,), mode="faithful", epochs=3, lr=0.01, activation=activation)
    against_torch(X, y, kw)


@pytest.mark.parametrize("hidden", [192, 256])
@pytest.mark.parametrize("mode, sparse", [("fast", True), ("fast", False), ("faithful", True)])
def test_widest_copies_train_on_the_kernel_and_equal_the_torch_path(hidden, mode, sparse):
    """The widths above 128 (24 and 32 vectors of hidden units, more than the registers hold) have copies too: a
    faithful 256-unit net took the per-example torch trainer, about 400 times slower, before them."""
    X, y = (sparse_data if sparse else dense_data)(n=30, n_classes=3)
    kw = dict(hidden=(hidden,), mode=mode, epochs=3, lr=0.01)
    if mode == "fast":
        kw.update(batch_size=8, optimizer="adam", weight_decay=1e-3, sparse_input=sparse)
    assert _mlp_native.supports(hidden, np.float32) and _mlp_native.supports_dense(hidden, np.float32)
    against_torch(X, y, kw)


def test_faithful_native_threads_and_fallbacks():
    X, y = adult_like(200)
    subsets = [np.arange(0, 150), np.arange(50, 200), np.arange(0, 200, 2)]
    kw = dict(hidden=(32,), mode="faithful", epochs=2)
    one = TorchMLP(n_threads=1, **kw).fit_many(X, y, subsets, [1, 2, 3])
    two = TorchMLP(n_threads=2, **kw).fit_many(X, y, subsets, [1, 2, 3])
    assert one.info["kernel"] == two.info["kernel"] == "native"
    for a, b in zip(one.weights_ + one.biases_, two.weights_ + two.biases_):
        np.testing.assert_array_equal(a, b)
    for other in (dict(hidden=(20,)), dict(weight_decay=1e-3), dict(dtype="float64"), dict(hidden=(8, 8)),
                  dict(backend="torch")):
        if importlib.util.find_spec("torch") is None:
            break
        got = TorchMLP(**{**kw, **other}).fit_many(X, y, subsets[:1], [1], n_classes=2)
        assert got.info["kernel"] == "torch", other


@pytest.mark.parametrize("hidden", [8, 40, 64])
def test_native_first_layer_equals_numpys_products(monkeypatch, hidden):
    """Banks trained with a sparse first layer are queried through the C first layer: the logits numpy's products
    (BLAS, what runs without the kernel) give, to float32 rounding, and a row's logits whatever rows come with it."""
    X, y = adult_like(120, seed=3)
    bank = TorchMLP(hidden=(hidden,), mode="fast", epochs=2, batch_size=16).fit_many(X, y, [np.arange(80)] * 3,
                                                                                      [1, 2, 3])
    assert bank.info["sparse_input"] and _mlp_native.supports(hidden, np.float32)
    native = bank.decision_function(X)
    np.testing.assert_array_equal(bank.decision_function(X[7:8])[:, 0], native[:, 7])
    with monkeypatch.context() as mp:
        mp.setenv("LEAKAUDIT_NATIVE", "0")
        blas = bank.decision_function(X)
    np.testing.assert_allclose(native, blas, rtol=0, atol=2e-5)
    assert np.abs(native).max() > 0.1


@pytest.mark.parametrize("H", [1, 2, 3, 7])
def test_native_logit_layer_sums_every_input_in_order(H):
    """Fewer than 8 outputs (a net's logits): the C layer adds every input in ascending order by one FMA (checked
    against the float64 sums to float32 rounding), and a row's outputs do not depend on the rows queried with it
    (8-row blocks, tails)."""
    assert _mlp_native.supports_dense(H, np.float32) and not _mlp_native.supports_dense(H, np.float64)
    assert not _mlp_native.supports_dense(9, np.float32) and _mlp_native.supports_dense(16, np.float32)
    rng = np.random.default_rng(H)
    for n, d in [(1, 3), (7, 64), (8, 64), (203, 64), (37, 104)]:
        h = rng.normal(size=(3, n, d)).astype(np.float32) * (rng.random((3, n, d)) < 0.7)
        W, b = rng.normal(size=(3, d, H)).astype(np.float32), rng.normal(size=(3, H)).astype(np.float32)
        got = np.full((3, n, H), np.nan, np.float32)
        ref = np.matmul(h.astype(np.float64), W.astype(np.float64)) + b[:, None, :]
        _mlp_native.dense_layer(h, W, b, got)
        np.testing.assert_allclose(got, ref, rtol=0, atol=1e-4 * np.sqrt(d))
        last = np.empty((3, 1, H), np.float32)
        _mlp_native.dense_layer(np.ascontiguousarray(h[:, -1:]), W, b, last, n_threads=1)
        np.testing.assert_array_equal(last[:, 0], got[:, -1])
    shared = np.empty((3, 5, H), np.float32)  # x of shape (1, n, d): the same inputs for every net
    _mlp_native.dense_layer(np.ascontiguousarray(h[:1, :5]), W, b, shared)
    for k in range(3):
        one = np.empty((1, 5, H), np.float32)
        _mlp_native.dense_layer(np.ascontiguousarray(h[:1, :5]), W[k : k + 1], b[k : k + 1], one)
        np.testing.assert_array_equal(shared[k], one[0])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("H", [5, 9, 20])
def test_generic_layer_is_row_independent_and_equals_the_products(dtype, H):
    """The plain-loop layer (widths and dtypes without a specialised copy): numpy's products to rounding, zeros
    skipped, and a row's outputs bit for bit the same queried alone or with others."""
    rng = np.random.default_rng(H)
    x = (rng.normal(size=(2, 37, 11)) * (rng.random((2, 37, 11)) < 0.6)).astype(dtype)
    W, b = rng.normal(size=(2, 11, H)).astype(dtype), rng.normal(size=(2, H)).astype(dtype)
    got = np.full((2, 37, H), np.nan, dtype)
    _mlp_native.layer(x, W, b, got)
    np.testing.assert_allclose(got, np.matmul(x, W) + b[:, None, :], rtol=1e-5 if dtype == np.float32 else 1e-12,
                               atol=1e-5 if dtype == np.float32 else 1e-12)
    alone = np.empty((2, 1, H), dtype)
    _mlp_native.layer(np.ascontiguousarray(x[:, 20:21]), W, b, alone)
    np.testing.assert_array_equal(alone[:, 0], got[:, 20])


def test_for_each_model_runs_every_task_once_and_raises_the_first_error():
    """The shared pool: every k once, on at most n_threads threads (the caller is one); an error stops new tasks
    and is raised in the caller; a call from inside a task runs inline (no nested waits on the pool)."""
    import threading

    from leakaudit.learners import _threads

    for n_threads in (1, 2, 3):
        seen, threads = [], set()

        def one(k):
            seen.append(k)
            threads.add(threading.get_ident())

        _threads.for_each_model(one, 50, n_threads)
        assert sorted(seen) == list(range(50)) and len(threads) <= n_threads

    def bad(k):
        if k == 3:
            raise ValueError("task 3 failed")

    with pytest.raises(ValueError, match="task 3 failed"):
        _threads.for_each_model(bad, 20, 2)
    inner = []
    _threads.for_each_model(lambda k: _threads.for_each_model(lambda j: inner.append((k, j)), 3, 2), 4, 2)
    assert sorted(inner) == [(k, j) for k in range(4) for j in range(3)]


def test_for_each_model_waits_for_running_tasks_when_the_caller_is_interrupted():
    """A Ctrl-C that reaches the caller while it waits on the pool (and a second one while it waits again) is
    raised only once every running task has returned: a task inside a compiled kernel reads arrays that only the
    caller's frames keep alive, and raising past them first freed those arrays under it (CI saw a segfault,
    status -11, after the interrupted audit's line)."""
    import signal
    import threading
    import time

    from leakaudit.learners import _threads

    if threading.current_thread() is not threading.main_thread():  # pragma: no cover - signals reach the main one
        pytest.skip("signal handlers run on the main thread only")
    main, started, finished = threading.get_ident(), threading.Event(), []

    def one(k):
        if threading.get_ident() == main:  # the caller's own task: done once the pool's task has begun
            started.wait(5)
            return
        started.set()
        time.sleep(0.1)  # the caller is now waiting on the pool
        for _ in range(2):
            signal.pthread_kill(main, signal.SIGUSR1)
            time.sleep(0.2)
        finished.append(k)

    def interrupt(signum, frame):
        raise KeyboardInterrupt

    old = signal.signal(signal.SIGUSR1, interrupt)
    try:
        with pytest.raises(KeyboardInterrupt):
            _threads.for_each_model(one, 2, 2)
    finally:
        signal.signal(signal.SIGUSR1, old)
    assert started.is_set() and len(finished) == 1


@pytest.mark.parametrize("m", [0, 1, 2, 3, 257, 1000])
def test_native_permutations_are_numpys(m):
    """_mlp_native.permutations draws what rng.permutation draws, epoch after epoch, and leaves the generator where
    numpy leaves it (also from a state with a buffered 32-bit half, which numpy's PCG64 keeps between calls)."""
    for pre in (False, True):
        a, b = np.random.default_rng(11), np.random.default_rng(11)
        if pre:
            a.integers(0, 10, dtype=np.uint32)
            b.integers(0, 10, dtype=np.uint32)
        out = np.full(3 * m, -1, np.int64)
        assert _mlp_native.permutations(a, out, 3)
        ref = np.concatenate([b.permutation(m) for _ in range(3)]) if m else out[:0]
        np.testing.assert_array_equal(out, ref)
        assert a.integers(1 << 62) == b.integers(1 << 62) and a.random() == b.random()


@pytest.mark.parametrize("bit_generator", ["PCG64", "PCG64DXSM", "MT19937", "Philox", "SFC64"])
def test_native_permutations_are_numpys_for_every_bit_generator(bit_generator):
    """Through any bit generator's C interface, permutations draws rng.permutation's numbers and leaves the whole
    generator state where numpy does, for states numpy's seeding makes and after an odd number of 32-bit draws (a
    buffered half, which the test above does not see: its checks draw 64 bits)."""
    if _mlp_native.library() is None:
        pytest.skip(f"the compiled MLP kernel is not available: {_mlp_native.KERNEL.reason}")
    make = getattr(np.random, bit_generator)
    for seed, pre in [(0, 0), (12345, 1), (2 ** 63 + 7, 3)]:
        a, b = (np.random.Generator(make(seed)) for _ in range(2))
        for g in (a, b):
            g.integers(0, 10, size=pre, dtype=np.uint32)
        out = np.empty(5 * 999, np.int64)
        assert _mlp_native.permutations(a, out, 5)
        np.testing.assert_array_equal(out, np.concatenate([b.permutation(999) for _ in range(5)]))
        assert _same_state(a.bit_generator.state, b.bit_generator.state)


def _same_state(x, y) -> bool:
    """Whether two bit generators' ``state`` (nested dicts of ints, strings and arrays) are equal."""
    if isinstance(x, dict):
        return isinstance(y, dict) and x.keys() == y.keys() and all(_same_state(x[k], y[k]) for k in x)
    return np.array_equal(x, y)
