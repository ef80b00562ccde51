"""trail.Stream and trail.Tokenizer against the CLI: windows, lineage, rank shares and ids."""

import json

import numpy as np
import pytest

import trail
from conftest import cli, cli_json


@pytest.fixture(scope="module")
def stream(workdir):
    return trail.Stream(workdir / "manifest.json")


@pytest.mark.parametrize("w", [0, 1, 7, 100, 483])
def test_windows_equal_data_inspect(stream, workdir, w):
    expected = cli_json("data", "inspect", "--manifest", workdir / "manifest.json", "--window", w,
                        "--json")
    assert stream.inspect(w) == expected
    win = stream.window(w)
    tokens = expected["tokens"]
    L = len(tokens) - 1
    assert win.window == w and len(win.tokens) == L + 1 and len(win.inputs) == L
    assert win.tokens.tolist() == [t["token"] for t in tokens]
    assert win.inputs.tolist() == [t["token"] for t in tokens[:L]]
    assert win.labels.tolist() == [t["label"] for t in tokens[:L]]
    assert win.loss_mask.tolist() == [t["loss"] for t in tokens[:L]]
    assert win.key_valid.tolist() == [t["key_valid"] for t in tokens[:L]]
    assert win.positions.tolist() == [t["position"] for t in tokens[:L]]
    assert win.doc_ids.tolist() == [t["attn_doc"] for t in tokens[:L]]
    assert win.lineage == expected["documents"] and win.real_tokens == expected["real_tokens"]
    assert win.inputs.dtype == np.int32 and win.loss_mask.dtype == np.uint8


@pytest.mark.parametrize("step", [0, 3, 29])
def test_rank_shares_equal_data_inspect_step(stream, workdir, step):
    expected = cli_json("data", "inspect", "--manifest", workdir / "manifest.json", "--step", step,
                        "--ranks", 2, "--json")
    assert stream.inspect_step(step, ranks=2) == expected
    for rank in expected["ranks"]:
        windows = [w for mb in rank["micro_batches"] for w in mb["windows"] if w is not None]
        assert stream.rank_windows(step, rank["rank"], 2) == windows
        batch = stream.rank_batch(step, rank["rank"], 2)
        assert list(batch["windows"]) == windows and batch["inputs"].shape[0] == len(windows)
        for row, w in enumerate(windows):
            assert (batch["labels"][row] == stream.window(w, lineage=False).labels).all()
    assert list(stream.step_windows(step)) == list(range(*expected["windows"]))
    assert stream.step_targets(step) == expected["B_target"]
    assert all(stream.step_of_window(w) == step for w in stream.step_windows(step))


def test_the_seed_is_the_manifests_unless_given(workdir, stream):
    assert stream.seed == json.loads((workdir / "manifest.json").read_text())["stream"]["seed"]
    other = trail.Stream(workdir / "manifest.json", seed=stream.seed + 1, verify=False)
    same = trail.Stream(workdir / "manifest.json", seed=stream.seed, verify=False)
    assert (same.window(3).tokens == stream.window(3).tokens).all()
    assert any((other.window(w).tokens != stream.window(w).tokens).any() for w in range(4))
    assert "windows" in repr(stream) or "endless" in repr(stream)


def test_token_ids_equal_tokenizer_encode(workdir):
    tok = trail.Tokenizer(str(workdir / "tokenizer.json"))
    texts = ["In the beginning God created the heaven and the earth.",
             "  Spaces,\ttabs\nand ünïcödé — ok?", "<|endoftext|>after", ""]
    for text in texts:
        (workdir / "text.txt").write_text(text)
        expected = json.loads(cli("tokenizer", "encode", "--tokenizer", workdir / "tokenizer.json",
                                  "--input", workdir / "text.txt").stdout)
        assert tok.encode(text) == expected
        assert tok.decode(tok.encode(text)) == text.encode()
    (workdir / "text.txt").write_text(texts[2])
    special = json.loads(cli("tokenizer", "encode", "--tokenizer", workdir / "tokenizer.json",
                             "--input", workdir / "text.txt", "--allow-special").stdout)
    assert tok.encode(texts[2], allowed_special="all") == special
    assert special[0] == tok.special_tokens["<|endoftext|>"]
    assert tok.encode_batch(texts, threads=2) == [tok.encode(t) for t in texts]
    assert tok.vocab_size == 1024
    with pytest.raises(trail.TrailError):
        tok.decode([10**6])


def test_find_and_readings_equal_data_find(workdir):
    """find / find_key / readings against `trail data find --json` on the same run."""
    manifest = workdir / "manifest.json"
    cli("data", "index", "--manifest", manifest)
    s = trail.Stream(manifest, verify=False)
    key = s.inspect(5)["documents"][0]["key"]
    by_key = cli_json("data", "find", "--run", workdir / "run", "--key", key, "--json")
    assert s.find_key(key, steps=30) == by_key
    assert by_key["readings"], "window 5 is read by step 0 of 30"
    tokens = s.window(5, lineage=False).tokens.tolist()[1:40]  # inside one document or two
    ids = ",".join(map(str, tokens))
    expected = cli_json("data", "find", "--run", workdir / "run", "--tokens", ids,
                        "--min-tokens", 10, "--json")
    assert expected.pop("query") == "--tokens"  # the CLI names each query
    assert expected.pop("lineage") == []  # and says what the corpus build did with a text
    assert s.find(tokens, steps=30, min_tokens=10) == expected
    assert expected["runs"] and expected["runs"][0]["readings"]
    doc = by_key
    src = [i for i, x in enumerate(s.manifest["sources"]) if x["name"] == doc["source"]][0]
    assert s.readings(src, doc["shard"], doc["doc"], 0, doc["doc_length"], 30) == doc["readings"]


def test_verify_proof_matches_the_cli(workdir, tmp_path):
    manifest = workdir / "manifest.json"
    cli("data", "index", "--manifest", manifest)
    bundle = tmp_path / "bundle"
    cli("publish", "--run", workdir / "run", "--out", bundle, "--key", workdir / "trainer.key",
        "--quiet")
    key = trail.Stream(manifest, verify=False).inspect(5)["documents"][0]["key"]
    proof = tmp_path / "p.json"
    cli("data", "find", "--run", workdir / "run", "--key", key, "--proof", proof, "--bundle",
        bundle)
    got = trail.verify_proof(proof, bundle, cache=tmp_path / "cache")
    assert got["ok"] and got["binding"] == "trainer" and got["problems"] == []
    expected = cli_json("data", "verify-proof", "--proof", proof, "--bundle", bundle, "--cache",
                        tmp_path / "cache2", "--json")
    assert {k: v for k, v in got.items() if k != "fetched_bytes"} == \
        {k: v for k, v in expected.items() if k != "fetched_bytes"}
    bad = json.loads(proof.read_text())
    bad["readings"][0]["step"] += 1
    refused = trail.verify_proof(json.dumps(bad), bundle, cache=tmp_path / "cache")
    assert not refused["ok"] and "reading 0" in refused["problems"][0]
