"""The Python package's costs beside what a Python user would otherwise use (medians of 7):
trail.ops.matmul against numpy's matmul (OpenBLAS, its core type chosen for this CPU) at the
training step's GEMM shapes; the per-call overhead of a small op; windows per second from
trail.Stream; and the resident memory a mapped 100 MiB checkpoint adds when opened.
Usage (bench/run_python_bench.sh sets the environment): python_bench.py [MANIFEST]
"""

import json
import os
import statistics
import struct
import sys
import tempfile
import time

import numpy as np

import trail
from trail import ops


def median_seconds(fn, reps=7):
    fn()  # warm
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def gemm():
    print(f"trail.ops on {trail.backend()}, numpy {np.__version__}")
    for m, k, n in ((512, 768, 3072), (512, 3072, 768), (512, 768, 50304)):
        a = ops.fill_uniform(m * k, 1, 1, -1, 1).reshape(m, k)
        b = ops.fill_uniform(k * n, 1, 2, -1, 1).reshape(k, n)
        t_trail = median_seconds(lambda: ops.matmul(a, b))
        t_np = median_seconds(lambda: a @ b)
        gf = 2 * m * k * n / 1e9
        print(f"  matmul {m}x{k}x{n}: trail {gf / t_trail:6.1f} GF/s, numpy {gf / t_np:6.1f} GF/s,"
              f" trail/numpy time {t_trail / t_np:.2f}")


def overhead():
    x = np.ones(16, np.float32)
    n = 100000
    t = median_seconds(lambda: [ops.sum(x) for _ in range(n)], reps=3) / n
    t_np = median_seconds(lambda: [np.sum(x) for _ in range(n)], reps=3) / n
    print(f"  a call of ops.sum on 16 floats: {t * 1e9:.0f} ns (np.sum: {t_np * 1e9:.0f} ns)")


def windows(manifest):
    s = trail.Stream(manifest, verify=False)
    n = 2000
    t = median_seconds(lambda: [s.window(w, lineage=False) for w in range(n)], reps=3)
    print(f"  Stream.window: {n / t:,.0f} windows/s (lineage off), L = {len(s.window(0).inputs)}")


def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def mapped_checkpoint():
    n = 25 * 2**20
    header = json.dumps({"w": {"dtype": "F32", "shape": [n], "data_offsets": [0, 4 * n]}})
    header = header.encode() + b" " * (-len(header) % 8)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "w.safetensors")
        with open(path, "wb") as f:
            f.write(struct.pack("<Q", len(header)) + header)
            np.ones(n, np.float32).tofile(f)
        before = rss()
        f = trail.load_safetensors(path)
        w = f["w"]
        opened = rss() - before
        w.sum()
        touched = rss() - before
        print(f"  a 100 MiB safetensors file: +{opened / 2**20:.2f} MiB resident when opened, "
              f"+{touched / 2**20:.0f} MiB once every element was read")


if __name__ == "__main__":
    gemm()
    overhead()
    if len(sys.argv) > 1:
        windows(sys.argv[1])
    mapped_checkpoint()
