"""trail.ops gives the committed golden digests (goldens/repops.txt): each case is rebuilt here
from its description in docs/goldens.md §1, so the Python ops, the spec text and the C++
backends agree bit for bit. Also: the same bits on every SIMD target, and clear errors."""

import hashlib

import numpy as np
import pytest

import trail
from trail import ops
from conftest import SOURCE


def committed():
    table = {}
    for line in (SOURCE / "goldens" / "repops.txt").read_text().splitlines():
        if line and not line.startswith("#"):
            name, digest = line.split()
            table[name] = digest
    return table


GOLDEN = committed()


def rand(n, stream, scale=1.0):
    return ops.fill_uniform(n, 2024, stream, -scale, scale)


class Case:
    """A case's digest: SHA-256 over its buffers' tensor digests (shape [n], in order)."""

    def __init__(self):
        self.h = hashlib.sha256()

    def add(self, name, a):
        a = np.ascontiguousarray(np.asarray(a, dtype=np.float32).reshape(-1))
        self.h.update(bytes.fromhex(ops.tensor_digest(a, name)))

    def hex(self):
        return self.h.hexdigest()


SHAPES = [(1, 1, 1), (3, 17, 255), (17, 255, 3), (64, 100, 130), (1, 1000, 17), (255, 3, 1000),
          (50, 800, 3080)]


@pytest.mark.parametrize("M,K,N", SHAPES)
def test_gemm_cases(M, K, N):
    tag = f"{M}x{K}x{N}"
    h = Case()
    a, b = rand(M * K, 1).reshape(M, K), rand(K * N, 2).reshape(K, N)
    c = ops.matmul(a, b)
    h.add("c", c)
    ops.matmul(a, b, out=c, accumulate=True)
    h.add("c_acc", c)
    assert h.hex() == GOLDEN[f"gemm_nn_{tag}"]
    h = Case()
    h.add("c", ops.matmul_bt(rand(M * K, 3).reshape(M, K), rand(N * K, 4).reshape(N, K)))
    assert h.hex() == GOLDEN[f"gemm_bt_{tag}"]
    h = Case()
    h.add("c", ops.matmul_at(rand(K * M, 5).reshape(K, M), rand(K * N, 6).reshape(K, N)))
    assert h.hex() == GOLDEN[f"gemm_at_{tag}"]


def test_reductions_case():
    h = Case()
    for n in (0, 1, 3, 17, 255, 1000, 4097):
        x, y = rand(n, 10 + n, 3.0), rand(n, 20 + n)
        h.add("sum", [ops.sum(x)])
        h.add("sum_sq", [ops.sum_sq(x)])
        h.add("dot", [ops.dot(x, y)])
        h.add("max", [ops.max(x)])
        h.add("axpy", ops.axpy(0.37, x, y))
    assert h.hex() == GOLDEN["reductions"]


def test_random_fills_case():
    h = Case()
    h.add("uniform", ops.fill_uniform(1000, 7, 1, -2.0, 3.0))
    h.add("normal", ops.fill_normal(1000, 7, 2, 0.5, 0.02))
    assert h.hex() == GOLDEN["random_fills"]


def test_rmsnorm_case():
    R, D = 17, 255
    x, g, dy = rand(R * D, 40, 2.0).reshape(R, D), rand(D, 41), rand(R * D, 42).reshape(R, D)
    h = Case()
    for gain in (g, None):
        y, rstd = ops.rmsnorm(x, gain, 1e-5)
        dx, dg = ops.rmsnorm_backward(dy, x, gain, rstd)
        for name, a in (("y", y), ("rstd", rstd), ("dx", dx),
                        ("dg", dg if dg is not None else np.zeros(D, np.float32))):
            h.add(name, a)
    assert h.hex() == GOLDEN["rmsnorm"]


def test_softmax_case():
    R, N = 17, 1000
    x, dy = rand(R * N, 50, 8.0).reshape(R, N), rand(R * N, 51).reshape(R, N)
    h = Case()
    y = ops.softmax(x)
    h.add("y", y)
    h.add("dx", ops.softmax_backward(y, dy))
    assert h.hex() == GOLDEN["softmax"]


def test_activations_case():
    n = 10007
    a, b, dh = rand(n, 60, 6.0), rand(n, 61, 2.0), rand(n, 62)
    h = Case()
    h.add("swiglu", ops.swiglu(a, b))
    da, db = ops.swiglu_backward(dh, a, b)
    h.add("swiglu_da", da)
    h.add("swiglu_db", db)
    h.add("gelu", ops.gelu(a))
    h.add("gelu_dx", ops.gelu_backward(dh, a))
    assert h.hex() == GOLDEN["activations"]


def test_cross_entropy_case():
    R, V = 17, 1000
    logits = rand(R * V, 90, 10.0).reshape(R, V)
    targets = np.array([-100 if r % 5 == 3 else (97 * r) % V for r in range(R)], np.int32)
    nll, lse_sq, valid, lse = ops.cross_entropy(logits, targets)
    assert valid == 14
    h = Case()
    h.add("nll_sum", [nll])
    h.add("lse_sq_sum", [lse_sq])
    h.add("lse", lse)
    h.add("dlogits", ops.cross_entropy_backward(logits, targets, lse, np.float32(1) / 14, 1e-4))
    assert h.hex() == GOLDEN["cross_entropy"]


def test_attention_case():
    B, H, T, hd = 2, 3, 17, 16
    n = B * H * T * hd
    docs = np.array([[i // 6 for i in range(T)]] * B, np.int32)
    valid = np.ones((B, T), np.uint8)
    valid[0, 5] = valid[1, 16] = 0
    h = Case()
    for variant in range(3):
        q, k, v, dout = (rand(n, s).reshape(B, H, T, hd) for s in (100, 101, 102, 103))
        masks = dict(window=5 if variant >= 1 else 0)
        if variant == 2:
            masks.update(doc_ids=docs, key_valid=valid)
        out, probs = ops.attention(q, k, v, **masks)
        dq, dk, dv = ops.attention_backward(q, k, v, probs, dout, **masks)
        for name, a in (("out", out), ("probs", probs), ("dq", dq), ("dk", dk), ("dv", dv)):
            h.add(name, a)
    assert h.hex() == GOLDEN["attention"]


def test_optimizer_case():
    n = 1000
    p, m, v = rand(n, 110), np.zeros(n, np.float32), np.zeros(n, np.float32)
    for t in (1, 2, 3):
        ops.adamw_step(p, rand(n, 111 + t, 0.5), m, v, t, lr=3e-3, beta1=0.9, beta2=0.95,
                       eps=1e-8, weight_decay=0.1)
    h = Case()
    h.add("p", p)
    h.add("m", m)
    h.add("v", v)
    g1, g2 = rand(255, 120, 3.0), rand(17, 121, 3.0)
    norm = ops.global_grad_norm([g1, g2])
    coef = ops.clip_grad_norm([g1, g2], norm, 1.0)
    h.add("norm", [norm])
    h.add("coef", [coef])
    h.add("g1", g1)
    h.add("pow", [ops.pow_int(0.95, 12345)])
    assert h.hex() == GOLDEN["optimizer"]


def test_every_simd_target_gives_the_same_bits():
    a, b = rand(50 * 800, 1).reshape(50, 800), rand(800 * 303, 2).reshape(800, 303)
    q = rand(2 * 3 * 17 * 16, 100).reshape(2, 3, 17, 16)
    start = trail.backend()
    results = {}
    try:
        for target in trail.simd_targets():
            trail.use_simd_target(target)
            results[target] = (ops.matmul(a, b).tobytes(), ops.attention(q, q, q)[0].tobytes(),
                               ops.sum_sq(a))
    finally:
        trail.use_simd_target(start.split("(")[1].rstrip(")"))
    assert len(results) >= 2 and "reference" in results
    assert all(r == results["reference"] for r in results.values())


def test_wrong_arguments_raise_clear_exceptions():
    a = rand(12, 1).reshape(3, 4)
    with pytest.raises(TypeError, match=r"matmul: a must be float32, not float64"):
        ops.matmul(a.astype(np.float64), a.T.copy())
    with pytest.raises(TypeError, match="C-contiguous"):
        ops.matmul(a, a.T)
    with pytest.raises(ValueError, match=r"b has shape \(3, 4\), expected \(4, 4\)"):
        ops.matmul(a, a)
    with pytest.raises(ValueError, match="2 dimensions"):
        ops.softmax(a.reshape(-1))
    with pytest.raises(TypeError, match="numpy.ndarray"):
        ops.sum([1.0, 2.0])
    with pytest.raises(TypeError, match="read-only"):
        ro = rand(4, 1)
        ro.flags.writeable = False
        ops.adamw_step(ro, rand(4, 2), np.zeros(4, np.float32), np.zeros(4, np.float32), 1, 1e-3)
    with pytest.raises(ValueError, match="outside the vocabulary"):
        ops.cross_entropy(a, np.array([0, 9, 1], np.int32))
    with pytest.raises(TypeError, match="targets must be int32"):
        ops.cross_entropy(a, np.array([0, 1, 2]))
    with pytest.raises(ValueError, match="accumulate=True needs out="):
        ops.matmul(a, a.T.copy(), accumulate=True)
