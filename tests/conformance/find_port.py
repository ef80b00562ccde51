#!/usr/bin/env python3
"""The find index and the committed document set recomputed from the specification alone.

A second implementation of docs/data.md §1 (the .tshard layout), §2 (the manifest's sources and
shards), §9.2 (document numbers, content and gram hashes, winnowing, the index file) and §9.3
(the training-document set), in plain Python, written from those pages and using no trail code.
`make test` runs it on a corpus-factory build and compares its bytes with the files `trail data
index` and `trail publish` wrote.

    find_port.py MANIFEST INDEX [SET]   exits 1 unless INDEX (and SET) are the bytes computed
                                        here; --gram N --window W when the index used others
"""
import hashlib
import json
import os
import struct
import sys

M64 = (1 << 64) - 1


def mix64(x):
    x ^= x >> 30
    x = (x * 0xbf58476d1ce4e5b9) & M64
    x ^= x >> 27
    x = (x * 0x94d049bb133111eb) & M64
    x ^= x >> 31
    return x


# ---- docs/data.md §1, §2: the training documents in their numbering ------------------------------

def shard_documents(path):
    """The token ids of every document of a .tshard file, in index order."""
    data = open(path, "rb").read()
    assert data[:8] == b"TRLSHRD1", path
    version, token_bytes, num_docs, num_tokens, tokens_offset, index_offset = struct.unpack_from(
        "<IIQQQQ", data, 8)
    assert version == 1
    fmt = "<H" if token_bytes == 2 else "<I"
    docs = []
    for d in range(num_docs):
        start, _key_offset, length = struct.unpack_from("<QQI", data, index_offset + 32 * d)
        at = tokens_offset + token_bytes * start
        docs.append([struct.unpack_from(fmt, data, at + token_bytes * j)[0] for j in range(length)])
    return docs


def training_documents(manifest_path):
    """Sources in manifest order, each source's shards in list order, documents in index order."""
    m = json.load(open(manifest_path))
    base = os.path.dirname(os.path.abspath(manifest_path))
    for source in m["sources"]:
        for shard in source["shards"]:
            yield from shard_documents(os.path.join(base, shard["path"]))


# ---- §9.2: hashes, winnowing, the index file -----------------------------------------------------

def content_hash(ids):
    return hashlib.sha256(b"".join(struct.pack("<I", t) for t in ids)).digest()


def gram_hash(ids):
    x = 0x9e3779b97f4a7c15
    for t in ids:
        x = mix64(x ^ t)
    return x


def winnowed(ids, n, w):
    """The selected gram offsets (ascending) and every gram's hash."""
    if len(ids) < n:
        return [], []
    h = [gram_hash(ids[i:i + n]) for i in range(len(ids) - n + 1)]
    selected = set()
    for i in range(max(1, len(h) - w + 1)):  # one window of all grams when fewer than w
        window = range(i, min(i + w, len(h)))
        selected.add(min(window, key=lambda j: (h[j], -j)))  # least hash, largest offset on a tie
    return sorted(selected), h


def index_bytes(manifest_path, n, w):
    docs, grams = [], []
    for number, ids in enumerate(training_documents(manifest_path)):
        docs.append((content_hash(ids), number))
        offsets, h = winnowed(ids, n, w)
        grams.extend((h[o], number, o) for o in offsets)
    docs.sort()
    grams.sort()
    manifest_sha = hashlib.sha256(open(manifest_path, "rb").read()).digest()
    out = bytearray(b"TRLFIND1" + struct.pack("<IIII", 1, n, w, 0) +
                    struct.pack("<QQ", len(docs), len(grams)) + manifest_sha)
    out += bytes(128 - len(out))
    for digest, number in docs:
        out += digest + struct.pack("<Q", number)
    for h, number, offset in grams:
        out += struct.pack("<QII", h, number, offset)
    return bytes(out + b"TRLFEND1" + hashlib.sha256(out).digest()), docs


# ---- §9.3: the committed set ---------------------------------------------------------------------

def set_bytes(docs):
    hashes = sorted({digest for digest, _ in docs})
    return b"TRLDSET1" + struct.pack("<IIQ", 1, 0, len(hashes)) + b"".join(hashes)


def main(argv):
    n, w, args = 13, 38, []
    i = 0
    while i < len(argv):
        if argv[i] in ("--gram", "--window"):
            if argv[i] == "--gram":
                n = int(argv[i + 1])
            else:
                w = int(argv[i + 1])
            i += 2
        else:
            args.append(argv[i])
            i += 1
    manifest, index = args[0], args[1]
    want, docs = index_bytes(manifest, n, w)
    ok = True
    if open(index, "rb").read() != want:
        print(f"FAIL: {index} is not the index the specification gives ({len(want)} bytes)")
        ok = False
    else:
        print(f"{index}: {len(docs)} documents, {(len(want) - 168 - 40 * len(docs)) // 16} grams: "
              "equal to the specification")
    if len(args) > 2:
        if open(args[2], "rb").read() != set_bytes(docs):
            print(f"FAIL: {args[2]} is not the set the specification gives")
            ok = False
        else:
            print(f"{args[2]}: equal to the specification")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
