#!/usr/bin/env python3
"""The canonical stream's golden digest recomputed from the specification alone.

A second implementation of docs/data.md §3–§5 and docs/goldens.md §2 in plain Python, written
from those pages (and docs/repops.md §6 for Philox), using only rules they state and no trail
code or library (a maintainer wrote it; an outside port from the docs is the real test). It
builds no shard and opens no file: it derives every token of the synthetic corpus from its
formula, lays out the source streams, interleaves them and packs each window, then hashes the
record goldens.md §2 specifies. `make test` runs it and compares with goldens/stream.txt, so the
code cannot drift from the rules written here and in those pages without this test failing.

    stream_port.py [GOLDENS_STREAM_TXT]   prints the digests ("stream", "stream_bos"); with the
                                          file, exits 1 unless each equals its line
"""
import hashlib
import struct
import sys

M64 = (1 << 64) - 1


# ---- docs/data.md (preamble) and docs/repops.md §6: Mix64, FNV-1a-64, Philox4x32-10 ----------
def mix64(x):
    x &= M64
    x ^= x >> 30
    x = (x * 0xBF58476D1CE4E5B9) & M64
    x ^= x >> 27
    x = (x * 0x94D049BB133111EB) & M64
    x ^= x >> 31
    return x


def fnv1a64(name):
    h = 0xCBF29CE484222325
    for byte in name.encode():
        h = ((h ^ byte) * 0x100000001B3) & M64
    return h


def philox4x32(seed, stream, index):
    m0, m1, w0, w1 = 0xD2511F53, 0xCD9E8D57, 0x9E3779B9, 0xBB67AE85
    c = [index & 0xFFFFFFFF, index >> 32, stream & 0xFFFFFFFF, stream >> 32]
    k0, k1 = seed & 0xFFFFFFFF, seed >> 32
    for _ in range(10):
        p0, p1 = m0 * c[0], m1 * c[2]
        c = [(p1 >> 32) ^ c[1] ^ k0, p1 & 0xFFFFFFFF, (p0 >> 32) ^ c[3] ^ k1, p0 & 0xFFFFFFFF]
        k0, k1 = (k0 + w0) & 0xFFFFFFFF, (k1 + w1) & 0xFFFFFFFF
    return c


# ---- docs/data.md §3.2: Perm and the order streams S -----------------------------------------
class Perm:
    def __init__(self, n, seed, stream):
        self.n = n
        bits = 0
        while (1 << bits) < n:
            bits += 1
        self.h = max(1, (bits + 1) // 2)
        self.mask = (1 << self.h) - 1
        k = philox4x32(seed, stream, 0)
        self.keys = [mix64((k[r] << 32) | r) for r in range(4)]

    def __call__(self, i):
        x = i
        while True:
            left, right = x >> self.h, x & self.mask
            for r in range(4):
                left, right = right, left ^ (mix64(right ^ self.keys[r]) & self.mask)
            x = (left << self.h) | right
            if x < self.n:
                return x


def order_stream(name, role, a, b=0):
    return mix64(mix64(mix64(fnv1a64(name) ^ mix64(role)) ^ a) ^ ((b + 0x9E3779B97F4A7C15) & M64))


# ---- docs/goldens.md §2: the synthetic corpus ----------------------------------------------
VOCAB, EOS, PAD, BOS = 65536, 7, 3, 5  # BOS: the stream_bos case's tokenizer.bos_id
SOURCES = [  # name, share, shards, docs per shard, min, max length, sampling, max epochs
    ("web", 0.6, 3, 40, 1, 120, "permutation", 0),
    ("code", 0.3, 2, 25, 5, 90, "permutation", 2),
    ("books", 0.1, 1, 6, 50, 400, "replacement", 0),
]


def doc_length(s, h, d):
    lo, hi = SOURCES[s][4], SOURCES[s][5]
    return lo + mix64(0xABCDEF ^ (s << 40) ^ (h << 20) ^ d) % (hi - lo + 1)


def doc_token(s, h, d, j):
    t = (16 + mix64((s << 48) ^ (h << 32) ^ (d << 16) ^ j) % ((1 << 30) - 16)) % VOCAB
    return t + 16 if t < 16 else t


# ---- docs/data.md §3.1: pieces ---------------------------------------------------------------
class Config:
    def __init__(self, continuous, prepend_bos=False):
        self.seed, self.L, self.C, self.O, self.B = 20261202, 48, 40, 6, 1000
        self.append_eos, self.prepend_bos = True, prepend_bos
        self.overlap_once = not continuous          # overlap_loss: "once" | "both"
        self.boundary_independent = not continuous  # boundary: "independent" | "continuation"
        self.independent = not continuous           # semantics
        self.window_positions = continuous          # positions: "window" | "document"


def pieces_of(n, cfg):
    """(chunk k, first document token, token count) of each piece of an n-token document."""
    C, O = cfg.C, cfg.O
    if C == 0 or n <= C:
        return [(0, 0, n)]
    c = 1 + -(-(n - C) // (C - O))
    return [(k, k * (C - O), min(k * (C - O) + C, n) - k * (C - O)) for k in range(c)]


class Piece:
    def __init__(self, s, h, d, k, start, count, last, cfg):
        self.s, self.h, self.d, self.k, self.start, self.count = s, h, d, k, start, count
        self.eos = cfg.append_eos and (last or cfg.boundary_independent)
        self.bos = 1 if cfg.prepend_bos and (k == 0 or cfg.boundary_independent) else 0
        self.length = self.bos + count + (1 if self.eos else 0)  # its stream tokens, marks included


# ---- docs/data.md §3.2: a source's token stream ----------------------------------------------
class Source:
    def __init__(self, s, cfg):
        self.s, self.cfg = s, cfg
        self.name, _, shards, docs, _, _, self.sampling, self.max_epochs = SOURCES[s]
        self.pieces = []  # per shard, pieces in document order
        for h in range(shards):
            ps = []
            for d in range(docs):
                n = doc_length(s, h, d)
                cut = pieces_of(n, cfg)
                ps += [Piece(s, h, d, k, a, c, k == len(cut) - 1, cfg) for k, a, c in cut]
            self.pieces.append(ps)
        self.shard_tokens = [sum(p.length for p in ps) for ps in self.pieces]
        self.E = sum(self.shard_tokens)
        self.all_pieces = [p for ps in self.pieces for p in ps]
        finite = self.sampling == "permutation" and self.max_epochs > 0
        self.total = self.max_epochs * self.E if finite else None

    def runs(self, p, n):
        """The runs (piece, offset in piece, count, pass) of stream tokens [p, p + n)."""
        if self.total is not None:
            n = max(0, min(n, self.total - p))
        out = []
        while n > 0:
            piece, off, room, pas = (self.locate_perm(p) if self.sampling == "permutation"
                                     else self.locate_draw(p))
            k = min(n, room)
            out.append((piece, off, k, pas))
            p, n = p + k, n - k
        return out

    def locate_perm(self, p):
        e, q = divmod(p, self.E)
        shard_order = Perm(len(self.pieces), self.cfg.seed, order_stream(self.name, 1, e))
        for i in range(len(self.pieces)):
            j = shard_order(i)
            if q < self.shard_tokens[j]:
                break
            q -= self.shard_tokens[j]
        ps = self.pieces[j]
        piece_order = Perm(len(ps), self.cfg.seed, order_stream(self.name, 2, e, j))
        for i in range(len(ps)):
            piece = ps[piece_order(i)]
            if q < piece.length:
                return piece, q, piece.length - q, e
            q -= piece.length

    def locate_draw(self, p):
        b, q = divmod(p, self.cfg.B)
        stream = order_stream(self.name, 3, b)
        i, filled = 0, 0
        while True:
            r = philox4x32(self.cfg.seed, stream, i)
            u = (r[1] << 32) | r[0]
            piece = self.all_pieces[(u * len(self.all_pieces)) >> 64]
            take = min(piece.length, self.cfg.B - filled)  # the block's last draw is cut
            if q < take:
                return piece, q, take - q, b
            q, filled, i = q - take, filled + take, i + 1


# ---- docs/data.md §3.3: interleaving sources ---------------------------------------------------
P = 65536


def quantize(shares, active):
    total = 0.0
    for s, share in enumerate(shares):
        if active[s]:
            total += share
    counts, rem = [0] * len(shares), []
    for s, share in enumerate(shares):
        if active[s] and share > 0:
            exact = share / total * P
            counts[s] = int(exact // 1)
            rem.append((exact - counts[s], s))
    rem.sort(key=lambda r: -r[0])  # stable: ties keep the lower index first
    for i in range(P - sum(counts)):
        counts[rem[i % len(rem)][1]] += 1
    for _, s in rem:
        if counts[s] == 0:
            big = counts.index(max(counts))
            counts[big] -= 1
            counts[s] = 1
    slot_source, slot_rank, slots, given = [], [], [[] for _ in shares], [0] * len(shares)
    order = [s for s in range(len(shares)) if counts[s] > 0]
    for r in range(P):
        best = max(order, key=lambda s: ((r + 1) * counts[s] - P * given[s], -s))
        slot_source.append(best)
        slot_rank.append(given[best])
        slots[best].append(r)
        given[best] += 1
    return counts, slot_source, slot_rank, slots


def windows_left(src, offset, used, L):
    if src.total is None:
        return None  # endless
    if src.total <= 1:
        return 1 if used == 0 else 0
    return 0 if offset >= src.total - 1 else -(-(src.total - 1 - offset) // L)


def schedule(sources, L):
    """The phases: (start window, counts, slot_source, slot_rank, base windows, base offsets)."""
    shares = [SOURCES[s][1] for s in range(len(sources))]
    used, offset, start, phases = [0] * len(sources), [0] * len(sources), 0, []
    while True:
        left = [windows_left(src, offset[s], used[s], L) for s, src in enumerate(sources)]
        active = [(left[s] is None or left[s] > 0) and shares[s] > 0 for s in range(len(sources))]
        if not any(active):
            return phases
        counts, slot_source, slot_rank, slots = quantize(shares, active)
        phases.append((start, counts, slot_source, slot_rank, list(used), list(offset)))
        length = None
        for s in range(len(sources)):
            if counts[s] and left[s] is not None:
                m = left[s] - 1
                end = (m // counts[s]) * P + slots[s][m % counts[s]] + 1
                length = end if length is None else min(length, end)
        if length is None:
            return phases
        for s in range(len(sources)):
            full, rest = divmod(length, P)
            n = full * counts[s] + sum(1 for r in slots[s] if r < rest)
            used[s] += n
            offset[s] += n * L
        start += length


def owner(phases, w, L):
    ph = max((p for p in phases if p[0] <= w), key=lambda p: p[0])
    start, counts, slot_source, slot_rank, base, off = ph
    local = w - start
    s = slot_source[local % P]
    j = base[s] + (local // P) * counts[s] + slot_rank[local % P]
    return s, j, off[s] + (j - base[s]) * L


# ---- docs/data.md §3.3 (a window), §5 (packing), docs/goldens.md §2 (the record) ---------------
def window_record(sources, phases, w, cfg):
    L = cfg.L
    s, j, o = owner(phases, w, L)
    tokens, doc, pos, ok, segs = [], [], [], [], []
    for piece, off, n, pas in sources[s].runs(o, L + 1):
        at = len(tokens)
        segs.append((piece.h, piece.d, piece.k, off, n, pas))
        b = piece.bos  # offset 0 is the BOS; chunk token j is at offset b + j
        for i in range(off, off + n):
            if i < b:
                tokens.append(BOS)
            elif i < b + piece.count:
                tokens.append(doc_token(s, piece.h, piece.d, piece.start + i - b))
            else:
                tokens.append(EOS)
            doc.append(len(segs) - 1)
            ok.append(0 if (piece.k > 0 and cfg.overlap_once and b <= i < b + cfg.O) else 1)
            # continuation: offsets in the document's stream tokens (its first piece's BOS).
            shift = 1 if cfg.prepend_bos and piece.k > 0 else 0
            first = 0 if cfg.boundary_independent else piece.start + shift
            pos.append(len(pos) if cfg.window_positions else first + i)
    real = len(tokens)
    while len(tokens) < L + 1:  # padding
        pos.append(len(pos) if cfg.window_positions else (pos[-1] if pos else -1) + 1)
        doc.append(doc[-1] if doc else 0)
        tokens.append(PAD)
        ok.append(0)
    rec = struct.pack("<QQQ", w, s, j)
    for seg in segs:
        rec += struct.pack("<6Q", *seg)
    valid = [i + 1 < real and ok[i + 1] and (not cfg.independent or doc[i] == doc[i + 1])
             for i in range(L)]
    rows = [
        ("<%di" % L, tokens[:L]),
        ("<%di" % L, [tokens[i + 1] if valid[i] else -100 for i in range(L)]),
        ("<%di" % L, [doc[i] if cfg.independent else 0 for i in range(L)]),
        ("<%di" % L, pos[:L]),
        ("<%dB" % L, [1 if (i < real or (real == 0 and i == 0)) else 0 for i in range(L)]),
        ("<%dB" % L, [1 if v else 0 for v in valid]),
    ]
    for fmt, values in rows:
        rec += struct.pack(fmt, *values)
    return rec


def digest(prepend_bos):
    h = hashlib.sha256()
    windows = list(range(200)) + [1_000_000, 10_000_001, 123_456_789, 4_000_000_000]
    for continuous in (False, True):
        cfg = Config(continuous, prepend_bos)
        sources = [Source(s, cfg) for s in range(len(SOURCES))]
        phases = schedule(sources, cfg.L)
        for w in windows:
            h.update(window_record(sources, phases, w, cfg))
    return h.hexdigest()


if __name__ == "__main__":
    failed = False
    for name, prepend_bos in (("stream", False), ("stream_bos", True)):
        got = digest(prepend_bos)
        print(name, got)
        if len(sys.argv) > 1:
            want = [l.split()[1] for l in open(sys.argv[1]) if l.startswith(name + " ")][0]
            if got != want:
                print("FAIL: the port of docs/data.md gives another %s digest than "
                      "goldens/stream.txt (%s)" % (name, want))
                failed = True
    if failed:
        sys.exit(1)
    if len(sys.argv) > 1:
        print("stream port: the digests of goldens/stream.txt, from the specification alone")
