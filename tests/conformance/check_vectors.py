#!/usr/bin/env python3
"""The conformance vectors checked against the specification alone.

tests/conformance/vectors/README.md lists the files. From docs/training.md ("Trajectory record",
the genesis, the micro-batch digest), docs/data.md and docs/goldens.md §3, with no trail code:
  - each case's recipe hash is the SHA-256 of its .toml; its genesis is recomputed from that
    hash, the manifest string "golden" and the initial parameter hash;
  - every trajectory line is its values' serialization, byte for byte, and chains from the
    genesis; the last chain is the case's value in goldens/training.txt;
  - where a record commits state, its params and optim hashes are the .states.jsonl ones;
  - the micro-batches of every case are rebuilt from the synthetic corpus's formula and the
    stream spec (stream_port.py with goldens.md §3's corpus, batch schedule, mixture and length
    phases, padding rows), their digests computed, and each step's batch hash is the
    trajectory's `batch`; for mesh_1x1x2 the rebuilt rows are also the .batches.jsonl ones;
  - repops/buffers.jsonl lists every RepOps golden case's output buffers in order; each case's
    digest, SHA-256 over its buffers' tensor digests (docs/goldens.md §1), is the case's value in
    goldens/repops.txt, and every case there has its buffers listed.

    check_vectors.py VECTORS_DIR GOLDENS_DIR    exit 1 on the first disagreement
"""
import hashlib
import json
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stream_port as sp  # noqa: E402
from trajectory_port import body_of, fail  # noqa: E402

# docs/goldens.md §3: the corpus, stream and batch schedule of the training runs.
TRAINING_SOURCES = [("a", 0.6, 2, 12, 3, 40, "permutation", 0),
                    ("b", 0.4, 1, 10, 5, 30, "permutation", 0)]
PADDING_ROW = (1 << 64) - 1
SIMPLE = {"schedule": [(0, 4)], "micro": 2, "R": 1, "S": 1, "mixture": [], "lengths": []}
CASES = {
    "mesh_1x1x2": SIMPLE,
    "mesh_3x2x2": {**SIMPLE, "schedule": [(0, 12)], "micro": 1, "R": 3, "S": 2},
    "lifecycle_2x1x1": {**SIMPLE, "schedule": [(0, 4), (3, 3)], "R": 2,
                        "mixture": [(2, (0.0, 1.0))], "lengths": [(3, 24)]},
}
CASES["int8_1x1x2"] = CASES["int8_learned_1x1x2"] = CASES["mesh_1x1x2"]
CASES["gqa_1x1x2"] = CASES["qk_gain_1x1x2"] = CASES["olmo2_1x1x2"] = CASES["mesh_1x1x2"]
CASES["qwen3_1x1x2"] = CASES["mesh_1x1x2"]
CASES["int8_fp32bw_3x2x2"] = CASES["mqa_3x2x2"] = CASES["mesh_3x2x2"]


class TrainingStream:
    """The stream of a golden training case: docs/data.md §3 (phases from the manifest's
    mixture and length phases, §3.3) and §4 (the batch schedule)."""

    def __init__(self, name):
        sp.VOCAB, sp.SOURCES = 96, TRAINING_SOURCES
        self.case = CASES[name]
        self.cfg = sp.Config(continuous=False)  # docs/data.md §2's defaults
        self.cfg.seed, self.cfg.L, self.cfg.C, self.cfg.O = 99, 16, 24, 0
        self.sources = [sp.Source(s, self.cfg) for s in range(len(TRAINING_SOURCES))]
        self.phases = self._phases()

    def windows(self, step):
        return [n for frm, n in self.case["schedule"] if frm <= step][-1]

    def first(self, step):
        return sum(self.windows(s) for s in range(step))

    def seq_len(self, step):
        return ([16] + [L for frm, L in self.case["lengths"] if frm <= step])[-1]

    def _phases(self):
        """(start window, counts, slot source, slot rank, window bases, offsets, L) of every
        phase; the sources are endless, so phases start only where the manifest's do."""
        starts = sorted({frm for frm, _ in self.case["mixture"] + self.case["lengths"]})
        shares = tuple(src[1] for src in TRAINING_SOURCES)
        used, offset, phases = [0] * len(shares), [0] * len(shares), []
        for step in [0] + starts:
            shares = ([shares] + [sh for frm, sh in self.case["mixture"] if frm == step])[-1]
            counts, slot_source, slot_rank, slots = sp.quantize(
                list(shares), [share > 0 for share in shares])
            if phases:  # the previous phase ends here: its windows per source advance
                prev = phases[-1]
                full, rest = divmod(self.first(step) - prev[0], sp.P)
                for s, n_s in enumerate(prev[1]):
                    n = full * n_s + sum(1 for r in prev_slots[s] if r < rest)
                    used[s] += n
                    offset[s] += n * prev[6]
            phases.append((self.first(step), counts, slot_source, slot_rank, list(used),
                           list(offset), self.seq_len(step)))
            prev_slots = slots
        return phases

    def row(self, w):
        """Window w as one packed row: its record's last 18·L bytes (docs/goldens.md §2)."""
        phase = max((p for p in self.phases if p[0] <= w), key=lambda p: p[0])
        L = self.cfg.L = phase[6]
        tail = sp.window_record(self.sources, [p[:6] for p in self.phases], w, self.cfg)[-18 * L:]
        ints = struct.unpack("<%di" % (4 * L), tail[:16 * L])
        return {"inputs": list(ints[:L]), "labels": list(ints[L:2 * L]),
                "doc_ids": list(ints[2 * L:3 * L]), "positions": list(ints[3 * L:]),
                "key_valid": list(tail[16 * L:17 * L])}

    def padding_row(self, L):
        """A row completing a rank's last micro-batch (docs/data.md §5)."""
        return {"inputs": [sp.PAD] * L, "labels": [-100] * L, "doc_ids": [0] * L,
                "positions": list(range(L)), "key_valid": [1] + [0] * (L - 1)}


def training_stream(name="mesh_1x1x2"):
    return TrainingStream(name)


def micro_batches(name, step, stream):
    """(rank, micro, rows) of a step in mesh order, rows as (window or None, row): rank k
    holds the step's windows w with w mod R·S = k, ascending, micro_batch_windows to a
    micro-batch, a short last one completed with padding rows (docs/data.md §4)."""
    case = CASES[name]
    ranks = case["R"] * case["S"]
    first, L = stream.first(step), stream.seq_len(step)
    for k in range(ranks):
        mine = [w for w in range(first, first + stream.windows(step)) if w % ranks == k]
        for m in range(0, len(mine), case["micro"]):
            rows = [(w, stream.row(w)) for w in mine[m:m + case["micro"]]]
            rows += [(None, stream.padding_row(L))] * (case["micro"] - len(rows))
            yield k, m // case["micro"], rows


def batch_digest(windows, rows, L):
    """SHA-256 of rows and L (u64), then each array as a u64 count and its LE elements."""
    def arr(fmt, values):
        return struct.pack("<Q", len(values)) + struct.pack("<%d%s" % (len(values), fmt), *values)
    cat = lambda key: [v for r in rows for v in r[key]]  # noqa: E731
    windows = [PADDING_ROW if w is None else w for w in windows]
    data = struct.pack("<QQ", len(rows), L) + arr("Q", windows)
    data += arr("i", cat("inputs")) + arr("i", cat("labels")) + arr("i", cat("doc_ids"))
    data += arr("i", cat("positions")) + arr("B", cat("key_valid"))
    return hashlib.sha256(data).digest()


def check_batches(name, vectors, records):
    stream = training_stream(name)
    listed = None
    path = os.path.join(vectors, name + ".batches.jsonl")
    if os.path.exists(path):
        listed = [json.loads(l) for l in open(path)]
    n = 0
    for rec in records:
        step_hash = hashlib.sha256(b"trail.batch.v2")
        L = stream.seq_len(rec["step"])
        for k, m, rows in micro_batches(name, rec["step"], stream):
            windows = [w for w, _ in rows]
            digest = batch_digest(windows, [r for _, r in rows], L)
            if listed is not None:
                got = listed[n]
                want = {"step": rec["step"], "rank": k, "micro": m, "rows": len(rows),
                        "seq_len": L, "windows": windows}
                for key in ("inputs", "labels", "doc_ids", "positions", "key_valid"):
                    want[key] = [v for _, r in rows for v in r[key]]
                want["digest"] = digest.hex()
                if got != want:
                    fail("%s: micro-batch %d (step %d, rank %d, micro %d) is not the spec's"
                         % (name, n, rec["step"], k, m))
            step_hash.update(digest)
            n += 1
        if step_hash.hexdigest() != rec["batch"]:
            fail("%s step %d: batch hash %s from the spec, the trajectory says %s"
                 % (name, rec["step"], step_hash.hexdigest(), rec["batch"]))
    if listed is not None and n != len(listed):
        fail("%s: %d micro-batches listed, the spec gives %d" % (name, len(listed), n))
    return n


def check_case(name, vectors, golden):
    base = os.path.join(vectors, name)
    recipe_sha = hashlib.sha256(open(base + ".toml", "rb").read()).hexdigest()
    g = json.load(open(base + ".genesis.json"))
    if g["recipe_sha256"] != recipe_sha:
        fail("%s: the recipe hash is not the SHA-256 of %s.toml" % (name, name))
    genesis = hashlib.sha256(("trail.trajectory.v1" + recipe_sha + g["manifest"] +
                              g["initial_params_hash"]).encode()).digest()
    if genesis.hex() != g["genesis"]:
        fail("%s: genesis %s from the spec, the vector says %s" % (name, genesis.hex(),
                                                                  g["genesis"]))
    chain, records = genesis, []
    states = [json.loads(l) for l in open(base + ".states.jsonl")]
    for line in open(base + ".trajectory.jsonl", "rb"):
        rec = json.loads(line)
        body = body_of(rec).encode()
        if line != body[:-1] + b',"chain":"' + rec["chain"].encode() + b'"}\n':
            fail("%s step %d: the line is not its values' serialization" % (name, rec["step"]))
        chain = hashlib.sha256(chain + body).digest()
        if chain.hex() != rec["chain"]:
            fail("%s step %d: chain %s, recorded %s" % (name, rec["step"], chain.hex(),
                                                       rec["chain"]))
        st = states[rec["step"]]
        for key in ("params", "optim"):
            if rec[key] is not None and rec[key] != st[key]:
                fail("%s step %d: %s hash differs from .states.jsonl" % (name, rec["step"], key))
        records.append(rec)
    if chain.hex() != golden[name]:
        fail("%s: final chain %s, goldens/training.txt says %s" % (name, chain.hex(), golden[name]))
    batches = check_batches(name, vectors, records)
    print("%s: genesis and %d records chain to the golden%s" % (
        name, len(records),
        ", %d micro-batches rebuilt from the stream spec" % batches if batches else ""))


def table(path):
    return dict(l.split() for l in open(path) if l.strip() and not l.startswith("#"))


def check_repops(vectors, golden):
    cases = {}
    for line in open(os.path.join(vectors, "repops", "buffers.jsonl")):
        b = json.loads(line)
        listed = cases.setdefault(b["case"], [])
        if b["i"] != len(listed):
            fail("repops %s: buffer %d listed out of order" % (b["case"], b["i"]))
        listed.append(bytes.fromhex(b["digest"]))
    if sorted(cases) != sorted(golden):
        fail("repops: the cases listed %s are not goldens/repops.txt's" % sorted(cases))
    for name, digests in cases.items():
        if hashlib.sha256(b"".join(digests)).hexdigest() != golden[name]:
            fail("repops %s: its buffers' digests do not hash to the golden" % name)
    print("repops: %d cases, %d buffers, each case's digest from its buffers' digests"
          % (len(cases), sum(len(d) for d in cases.values())))


if __name__ == "__main__":
    goldens = sys.argv[2]
    check_repops(sys.argv[1], table(os.path.join(goldens, "repops.txt")))
    vectors = os.path.join(sys.argv[1], "training")
    golden = table(os.path.join(goldens, "training.txt"))
    names = sorted(f[:-5] for f in os.listdir(vectors) if f.endswith(".toml"))
    if sorted(golden) != names:
        fail("the vectors' cases %s are not goldens/training.txt's %s" % (names, sorted(golden)))
    for name in names:
        check_case(name, vectors, golden)
    print("conformance vectors: every case checked from the specification alone")
