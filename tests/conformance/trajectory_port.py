#!/usr/bin/env python3
"""A run's trajectory and a publication's root checked from the specification alone.

Written from docs/training.md ("Trajectory record", its bytes and the genesis) and docs/audit.md
("Publishing a run"), using only rules those pages state and no trail code or library:
  - the genesis hash from run.json's recipe and manifest hashes and checkpoint 0's parameter
    hash equals run.json's `genesis`;
  - every line of trajectory.jsonl is rebuilt byte for byte from its parsed values by the
    serialization rules (key order, number formats, bits and hashes), and its chain is
    SHA-256(previous chain's raw bytes + the line without its chain);
  - with a publication.json, its root is SHA-256("trail.publication.v1\\n" + the statement as
    compact JSON with sorted keys), printed for the caller to compare with trail's.

    trajectory_port.py RUN_DIR [PUBLICATION_JSON]   exit 1 on the first disagreement
"""
import hashlib
import json
import os
import struct
import sys

KEYS = ["step", "windows", "tokens", "targets", "lr", "lr_bits", "loss", "loss_bits",
        "z_loss_bits", "grad_norm", "grad_norm_bits", "clip_bits", "skipped", "batch", "grads",
        "params", "optim"]


def fail(why):
    print("FAIL: " + why)
    sys.exit(1)


def float_of_bits(bits):
    return struct.unpack(">f", bytes.fromhex(bits))[0]


def body_of(rec):
    """The record without its chain, rebuilt from its values by docs/training.md's rules."""
    def value(key):
        v = rec[key]
        if key == "windows":
            return "[%d,%d]" % (v[0], v[1])
        if key in ("lr", "loss", "grad_norm"):  # %.9g of the float the *_bits hold
            return "%.9g" % float_of_bits(rec[key + "_bits"])
        if v is None:
            return "null"
        if isinstance(v, str):
            return '"%s"' % v
        return str(v)
    return "{" + ",".join('"%s":%s' % (k, value(k)) for k in KEYS) + "}"


def check_run(run):
    info = json.load(open(os.path.join(run, "run.json")))
    meta_path = os.path.join(run, "checkpoints", "step_00000000", "meta.json")
    recomputed = os.path.exists(meta_path)
    if recomputed:
        initial = json.load(open(meta_path))["params_hash"]
        genesis = hashlib.sha256(("trail.trajectory.v1" + info["recipe_sha256"] +
                                  info["manifest_sha256"] + initial).encode()).digest()
        if genesis.hex() != info["genesis"]:
            fail("genesis %s, run.json says %s" % (genesis.hex(), info["genesis"]))
    else:  # the initial parameters' hash would need the initialization, not specified here
        print("trajectory port: no checkpoint 0 in %s: its genesis is taken from run.json, "
              "not recomputed" % run)
        genesis = bytes.fromhex(info["genesis"])
    chain, n = genesis, 0
    for line in open(os.path.join(run, "trajectory.jsonl"), "rb"):
        rec = json.loads(line)
        body = body_of(rec).encode()
        want = body[:-1] + b',"chain":"' + rec["chain"].encode() + b'"}\n'
        if line != want:
            fail("step %d: the line is not the spec's serialization of its values:\n  %s\n  %s"
                 % (rec["step"], line, want))
        chain = hashlib.sha256(chain + body).digest()
        if chain.hex() != rec["chain"]:
            fail("step %d: chain %s, recorded %s" % (rec["step"], chain.hex(), rec["chain"]))
        n += 1
    print("trajectory port: %s%d chained records of %s, from the specification alone"
          % ("the genesis and " if recomputed else "", n, run))
    return chain.hex()


def publication_root(path):
    statement = json.load(open(path))["statement"]
    text = json.dumps(statement, separators=(",", ":"), sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(("trail.publication.v1\n" + text).encode()).hexdigest()


if __name__ == "__main__":
    final = check_run(sys.argv[1])
    if len(sys.argv) > 2:
        pub = json.load(open(sys.argv[2]))["statement"]
        if pub["run"]["final_chain"] != final:
            fail("the publication's final_chain is not the trajectory's")
        print("root", publication_root(sys.argv[2]))
