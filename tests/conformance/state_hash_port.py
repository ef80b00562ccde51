#!/usr/bin/env python3
"""A checkpoint's state hashes recomputed from the specification alone.

Written from docs/repops.md §7 (the state digest `trail.state.v3`: chunks of 65,536 elements,
BLAKE3 leaves in derive-key mode, tensor nodes, a Merkle tree) and docs/training.md
("Checkpoints": model.safetensors holds the parameters, optim.safetensors the moments, meta.json
their hashes), using only rules those pages state and no trail code or library. BLAKE3 is b3sum's (`--derive-key`), an independent
implementation. Parses both safetensors files, hashes them as the spec says and compares with
meta.json's `params_hash` and `optimizer_hash`.

    state_hash_port.py CHECKPOINT_DIR   exit 1 when a hash differs
"""
import hashlib
import json
import math
import os
import struct
import subprocess
import sys

CHUNK = 65536
DTYPES = {"F32": (1, 4), "I8": (2, 1), "I32": (3, 4), "U16": (4, 2), "U32": (5, 4), "F64": (6, 8)}


def safetensors(path):
    raw = open(path, "rb").read()
    n, = struct.unpack_from("<Q", raw, 0)
    header = json.loads(raw[8:8 + n])
    header.pop("__metadata__", None)
    data = raw[8 + n:]
    return {name: (t["dtype"], t["shape"], data[t["data_offsets"][0]:t["data_offsets"][1]])
            for name, t in header.items()}


def canonical(dtype, data):
    """The elements little-endian with every NaN replaced by the canonical quiet NaN."""
    if dtype == "F32":
        words = list(struct.unpack("<%dI" % (len(data) // 4), data))
        words = [0x7FC00000 if (w & 0x7F800000) == 0x7F800000 and (w & 0x7FFFFF) else w
                 for w in words]
        return struct.pack("<%dI" % len(words), *words)
    if dtype == "F64":
        words = list(struct.unpack("<%dQ" % (len(data) // 8), data))
        words = [0x7FF8000000000000 if (w >> 52) & 0x7FF == 0x7FF and (w & ((1 << 52) - 1))
                 else w for w in words]
        return struct.pack("<%dQ" % len(words), *words)
    return data


def leaf(elements, index, count):
    out = subprocess.run(["b3sum", "--derive-key", "trail.chunk.v3", "--no-names", "--raw"],
                         input=elements + struct.pack("<QQ", index, count),
                         capture_output=True, check=True).stdout
    return out[:32]


def merkle(nodes):
    if not nodes:
        return hashlib.sha256(b"").digest()
    while len(nodes) > 1:
        nxt = [hashlib.sha256(b"\x01" + nodes[i] + nodes[i + 1]).digest()
               for i in range(0, len(nodes) - 1, 2)]
        if len(nodes) % 2:
            nxt.append(nodes[-1])  # an odd node is carried up unchanged
        nodes = nxt
    return nodes[0]


def tensor_node(name, dtype, shape, data):
    code, size = DTYPES[dtype]
    elements = canonical(dtype, data)
    n = len(data) // size
    leaves = [leaf(elements[i * CHUNK * size:(i + 1) * CHUNK * size], i, min(CHUNK, n - i * CHUNK))
              for i in range(math.ceil(n / CHUNK))]
    head = (b"trail.tensor.v3" + struct.pack("<Q", len(name)) + name.encode() + bytes([code]) +
            struct.pack("<Q", len(shape)) + b"".join(struct.pack("<q", d) for d in shape))
    return hashlib.sha256(head + merkle(leaves)).digest()


def state_hash(tensors):
    return merkle([tensor_node(name, *tensors[name]) for name in sorted(tensors)]).hex()


if __name__ == "__main__":
    ckpt = sys.argv[1]
    meta = json.load(open(os.path.join(ckpt, "meta.json")))
    for file, key in (("model.safetensors", "params_hash"), ("optim.safetensors", "optimizer_hash")):
        got = state_hash(safetensors(os.path.join(ckpt, file)))
        if got != meta[key]:
            print("FAIL: %s hashes to %s, meta.json's %s is %s" % (file, got, key, meta[key]))
            sys.exit(1)
    print("state hash port: %s's parameter and optimizer hashes, from the specification alone"
          % ckpt)
