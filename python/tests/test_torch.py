"""trail.torch.CanonicalDataset in a PyTorch training loop: two ranks, stopped, resumed on one
rank from the state_dict; the windows consumed are exactly those of trail's trajectory."""

import pytest

torch = pytest.importorskip("torch")

import trail  # noqa: E402
from trail.torch import CanonicalDataset  # noqa: E402
from torch.utils.data import DataLoader  # noqa: E402


class TinyLM(torch.nn.Module):
    def __init__(self, vocab=1024, d=32):
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, d)
        self.head = torch.nn.Linear(d, vocab)

    def forward(self, ids):
        return self.head(self.embed(ids.long()))


def rank_loss(model, item):
    """The rank's summed token losses; trail divides by the whole step's targets."""
    logits = model(item["inputs"])
    return torch.nn.functional.cross_entropy(logits.flatten(0, 1), item["labels"].long().flatten(),
                                             ignore_index=-100, reduction="sum")


def test_two_ranks_stopped_and_resumed_on_one_consume_the_trajectorys_windows(workdir, run_dir):
    manifest = workdir / "manifest.json"
    torch.manual_seed(0)
    model = TinyLM()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    consumed, losses = {}, []

    def train_step(items):
        opt.zero_grad()
        loss = sum(rank_loss(model, it) for it in items) / items[0]["step_targets"]
        loss.backward()  # as an all-reduce of the ranks' gradients would give
        opt.step()
        losses.append(loss.item())
        step = items[0]["step"]
        assert all(it["step"] == step for it in items)
        consumed[step] = sorted(w for it in items for w in it["windows"])

    ranks = [CanonicalDataset(manifest, r, 2) for r in range(2)]
    loaders = [iter(DataLoader(ds, batch_size=None)) for ds in ranks]
    for _ in range(12):
        train_step([next(it) for it in loaders])
    state = ranks[0].state_dict()
    assert state == ranks[1].state_dict() and list(state) == ["cursor"]

    resumed = CanonicalDataset(manifest, 0, 1, max_steps=30)  # one rank now
    resumed.load_state_dict(state)
    for item in DataLoader(resumed, batch_size=None):
        train_step([item])

    records = list(trail.Run(run_dir).trajectory())
    assert sorted(consumed) == [r["step"] for r in records] == list(range(30))
    for r in records:
        assert consumed[r["step"]] == list(range(*r["windows"])), r["step"]
    assert resumed.state_dict() == {"cursor": records[-1]["windows"][1]}
    assert losses[-1] < losses[0]


def test_items_are_the_streams_packed_windows(workdir):
    stream = trail.Stream(workdir / "manifest.json", verify=False)
    ds = CanonicalDataset(workdir / "manifest.json", 1, 3, max_steps=2, verify=False)
    items = list(ds)
    assert [it["step"] for it in items] == [0, 1]
    for it in items:
        assert it["windows"] == stream.rank_windows(it["step"], 1, 3)
        assert it["step_targets"] == stream.step_targets(it["step"])
        for row, w in enumerate(it["windows"]):
            win = stream.window(w, lineage=False)
            assert it["inputs"][row].tolist() == win.inputs.tolist()
            assert it["labels"][row].tolist() == win.labels.tolist()
            assert it["loss_mask"][row].tolist() == win.loss_mask.tolist()


def test_bad_states_and_ranks_are_refused(workdir):
    ds = CanonicalDataset(workdir / "manifest.json", 0, 2, verify=False)
    with pytest.raises(ValueError, match="inside step"):
        ds.load_state_dict({"cursor": 3})
    with pytest.raises(ValueError, match="cursor"):
        ds.load_state_dict({"position": 8})
    with pytest.raises(ValueError, match="not in"):
        CanonicalDataset(workdir / "manifest.json", 2, 2)
    with pytest.raises(ValueError, match="num_workers"):
        next(iter(DataLoader(ds, batch_size=None, num_workers=2)))
