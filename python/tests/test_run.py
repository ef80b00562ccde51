"""trail.Run against the CLI on the same run: trajectory, verdicts, checkpoints, traces,
plans, attestations, and errors for bad input."""

import json
import shutil
import struct
import threading
import time

import numpy as np
import pytest

import trail
from conftest import cli, cli_json

TIMING = ("seconds", "load_seconds")


def without_timing(j):
    """A replay report without its wall-clock fields (they differ between any two replays)."""
    if isinstance(j, dict):
        return {k: without_timing(v) for k, v in j.items() if k not in TIMING}
    if isinstance(j, list):
        return [without_timing(v) for v in j]
    return j


def test_trajectory_is_the_recorded_file(run_dir):
    run = trail.Run(run_dir)
    lines = (run_dir / "trajectory.jsonl").read_text().splitlines()
    records = list(run.trajectory())
    assert records == [json.loads(line) for line in lines] and len(records) == 30
    a = run.trajectory_array()
    assert len(a) == 30 and list(a["step"]) == list(range(30))
    for r, row in zip(records, a):
        assert row["loss_bits"] == int(r["loss_bits"], 16)
        assert np.float32(row["loss_bits"].view(np.float32)) == np.float32(r["loss"])
        assert list(row["windows"]) == r["windows"] and row["chain"] == r["chain"]
    assert len(list(run.metrics())) == 30


def test_recipe_manifest_and_info(run_dir, workdir):
    run = trail.Run(run_dir)
    assert run.recipe["train"]["steps"] == 30
    assert run.manifest == json.loads((workdir / "manifest.json").read_text())
    assert run.genesis == json.loads((run_dir / "run.json").read_text())["genesis"]
    statement = run.attestation["statement"]
    assert statement["genesis"] == run.genesis and statement["steps"] == 30
    assert statement["final_chain"] == list(run.trajectory())[-1]["chain"]
    assert "Run" in repr(run) and run.genesis[:12] in repr(run)


def test_verify_agrees_with_the_cli(run_dir):
    check = trail.Run(run_dir).verify()
    out = cli("train", "verify", "--run", run_dir).stdout
    assert check.ok and check.problems == []
    assert f"{check.steps} trajectory records" in out and check.steps == 30
    assert f"{len(check.checkpoints)} checkpoints verified" in out


def test_replay_verdicts_equal_the_cli(run_dir):
    report = trail.Run(run_dir).replay(range(20, 23))
    expected = cli_json("audit", "replay", "--run", run_dir, "--steps", "20:23", "--json", "--quiet")
    assert without_timing(report.json) == without_timing(expected)
    assert report.ok and [s.step for s in report if s.requested] == [20, 21, 22]
    assert report[21].verdict == "match" and report[21].chain


def test_replay_of_a_tampered_run_fails_as_the_cli_says(run_dir, tmp_path):
    bad = tmp_path / "run"
    shutil.copytree(run_dir, bad)
    lines = (bad / "trajectory.jsonl").read_text().splitlines(keepends=True)
    rec = json.loads(lines[26])
    rec["loss_bits"] = f"{int(rec['loss_bits'], 16) ^ 1:08x}"
    lines[26] = json.dumps(rec, separators=(",", ":")) + "\n"
    (bad / "trajectory.jsonl").write_text("".join(lines))
    report = trail.Run(bad).replay([27])
    p = cli("audit", "replay", "--run", bad, "--step", "27", "--json", "--quiet", check=False)
    assert p.returncode == 1 and not report.ok
    assert without_timing(report.json) == without_timing(json.loads(p.stdout))
    assert report.findings


def test_checkpoint_arrays_are_the_safetensors_bytes(run_dir):
    with trail.Run(run_dir) as run:
        assert run.checkpoints == cli_steps(run_dir)
        for step in run.checkpoints:
            c = run.checkpoint(step)
            assert c.step == step and c.optim is not None
            for name, f in (("model.safetensors", c.params), ("optim.safetensors", c.optim)):
                raw = (c.path / name).read_bytes()
                n = struct.unpack("<Q", raw[:8])[0]
                header = json.loads(raw[8:8 + n])
                names = [k for k in header if k != "__metadata__"]
                assert sorted(f) == sorted(names)
                for k in names:
                    begin, end = header[k]["data_offsets"]
                    a = f[k]
                    assert a.dtype == np.float32 and list(a.shape) == header[k]["shape"]
                    assert a.tobytes() == raw[8 + n + begin:8 + n + end], k
                    assert not a.flags.writeable and not a.flags.owndata
        with pytest.raises(KeyError, match="no checkpoint at step 7"):
            run.checkpoint(7)


def cli_steps(run_dir):
    return sorted(int(p.name.split("_")[1]) for p in (run_dir / "checkpoints").glob("step_*"))


def test_trace_and_bisect_equal_the_cli(run_dir, tmp_path):
    run = trail.Run(run_dir)
    mine = run.trace(10, out=tmp_path / "mine.trace", capture=3)
    cli("audit", "trace", "--run", run_dir, "--step", 10, "--out", tmp_path / "cli.trace")
    theirs, recorded = trail.Trace(tmp_path / "cli.trace"), run.recorded_trace(10)
    assert [o["hash"] for o in mine.ops] == [o["hash"] for o in theirs.ops]
    assert [o["hash"] for o in mine.ops] == [o["hash"] for o in recorded.ops]
    assert mine.chain == recorded.chain and len(mine) > 10
    values = mine.values(3)
    assert list(values.shape) == mine[3]["shape"] and values.dtype == np.float32
    d = trail.bisect(mine, recorded)
    assert not d.diverges
    assert not run.bisect(recorded, mine, strict=True).diverges  # the trainer signed its trace
    with pytest.raises(trail.TrailError, match="unsigned"):
        run.bisect(mine, recorded, strict=True)
    assert d.json == cli_json("audit", "bisect", tmp_path / "cli.trace", recorded.path, "--json")
    with pytest.raises(ValueError, match="hash only"):
        theirs.values(3)


def test_plan_certify_and_collect_equal_the_cli(run_dir, tmp_path):
    run = trail.Run(run_dir)
    keys = tmp_path / "keys"
    keys.mkdir()
    for i in range(2):
        cli("audit", "keygen", "--out", keys / f"auditor{i}")
    plan = run.plan(2, redundancy=1, sample=4, out=tmp_path / "plan.json")
    cli("audit", "plan", "--run", run_dir, "--auditors", 2, "--sample", 4,
        "--out", tmp_path / "cli-plan.json")
    assert plan == json.loads((tmp_path / "cli-plan.json").read_text())
    atts = []
    for i in range(2):
        report, att = run.certify(tmp_path / "plan.json", keys / f"auditor{i}.key", i,
                                  out=tmp_path / f"att{i}.json")
        assert report.ok and att["statement"]["auditor"] == i
        atts.append(tmp_path / f"att{i}.json")
        assert trail.read_attestation(atts[-1]).statement == att["statement"]
    trusted = tmp_path / "trusted"
    trusted.mkdir()
    for i in range(2):
        shutil.copy(keys / f"auditor{i}.pub", trusted)
    mine = run.collect(tmp_path / "plan.json", atts, trusted)
    theirs = cli_json("audit", "collect", "--run", run_dir, "--plan", tmp_path / "plan.json",
                      "--keys", trusted, *atts, "--json")
    assert mine.json == theirs and mine.verdict == "verified"


def test_a_forged_attestation_is_refused(run_dir, tmp_path):
    att = tmp_path / "att.json"
    att.write_text(json.dumps({"statement": {"format": "trail.audit.attestation.v1"},
                               "public_key": "00" * 32, "signature": "00" * 64}))
    with pytest.raises(trail.TrailError):
        trail.read_attestation(att)


def test_bad_input_raises_clear_exceptions(run_dir, tmp_path):
    with pytest.raises(FileNotFoundError, match="no run.json"):
        trail.Run(tmp_path / "missing")
    ck = tmp_path / "ck"
    shutil.copytree(run_dir / "checkpoints" / f"step_{cli_steps(run_dir)[-1]:08d}", ck)
    raw = (ck / "model.safetensors").read_bytes()
    (ck / "model.safetensors").write_bytes(raw[:len(raw) // 2])
    with pytest.raises(trail.TrailError, match="truncated"):
        trail.load_safetensors(ck / "model.safetensors")
    with pytest.raises(trail.TrailError):
        trail.Checkpoint(ck)
    flipped = bytearray(raw)
    flipped[-1] ^= 1
    (ck / "model.safetensors").write_bytes(bytes(flipped))
    with pytest.raises(trail.TrailError, match="model.safetensors"):
        trail.Checkpoint(ck)
    assert trail.Checkpoint(ck, verify=False).params  # unverified, it opens as it is
    with pytest.raises(trail.TrailError, match="beyond|recorded"):
        trail.Run(run_dir).replay([500])
    with pytest.raises(trail.TrailError):
        trail.Stream(tmp_path / "no-manifest.json")
    with pytest.raises(trail.TrailError):
        trail.Tokenizer(str(tmp_path / "no-tokenizer.json"))
    with pytest.raises(ValueError, match="ascending"):
        trail._trail.replay(str(run_dir), [3, 2])


def rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


def test_a_100_mb_checkpoint_opens_without_copying(tmp_path):
    n = 25 * 2**20  # 100 MiB of float32
    header = json.dumps({"w": {"dtype": "F32", "shape": [n // 1024, 1024],
                               "data_offsets": [0, 4 * n]}}).encode()
    header += b" " * (-len(header) % 8)
    path = tmp_path / "big.safetensors"
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(header)) + header)
        np.arange(n, dtype=np.float32).tofile(f)
    before = rss_bytes()
    f = trail.load_safetensors(path)
    w = f["w"]
    grown = rss_bytes() - before
    assert w.shape == (n // 1024, 1024) and w[1, 2] == 1026.0 and w[-1, -1] == np.float32(n - 1)
    assert grown < 10 * 2**20, f"opening grew the resident set by {grown / 2**20:.1f} MiB"


def test_long_calls_release_the_gil(run_dir):
    run, started, done = trail.Run(run_dir), threading.Event(), threading.Event()

    def replay():
        started.set()
        run.replay(range(0, 12))
        done.set()

    t = threading.Thread(target=replay)
    t.start()
    started.wait()
    time.sleep(0.05)
    ticks = 0
    while not done.is_set():
        ticks += 1
        time.sleep(0.001)
    t.join()
    assert ticks > 20, "the main thread did not run while a replay ran"
