"""The package as a user meets it: its stubs cover the C++ module, every public name is
documented, and objects say what they are. (`make python`, pip's wheel and its install:
tests/python_wheel_test.sh.)"""

import ast
import inspect
from pathlib import Path

import trail
from trail import _trail
from conftest import SOURCE

PKG = SOURCE / "python" / "trail"


def stub_names(path: Path, klass: str = None):
    tree = ast.parse(path.read_text())
    body = tree.body
    if klass:
        body = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == klass).body
    names = {n.name for n in body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    names |= {n.target.id for n in body if isinstance(n, ast.AnnAssign)}
    return names


def public(obj):
    return {n for n in dir(obj) if not n.startswith("_")}


def test_the_stubs_cover_the_extension_module():
    assert public(_trail) <= stub_names(PKG / "_trail.pyi")
    assert public(_trail.ops) == stub_names(PKG / "ops.pyi") - {"F32"}
    assert set(trail.ops.__all__) == public(_trail.ops)
    for klass in ("Stream", "Tokenizer"):
        assert public(getattr(_trail, klass)) <= stub_names(PKG / "_trail.pyi", klass)
    assert (PKG / "py.typed").exists()


def test_every_public_name_is_documented():
    for name in trail.__all__:
        obj = getattr(trail, name)
        if callable(obj) or inspect.ismodule(obj):
            assert (obj.__doc__ or "").strip(), f"trail.{name} has no docstring"
    for name in trail.ops.__all__:
        assert getattr(trail.ops, name).__doc__.strip(), f"trail.ops.{name} has no docstring"


def test_objects_say_what_they_are(run_dir, workdir):
    with trail.Run(run_dir) as run:
        assert repr(run).startswith("<Run ") and "parameters" in repr(run)
        assert "Checkpoint step" in repr(run.checkpoint())
        assert "ReplayReport match" in repr(run.replay([29]))
    assert "Stream" in repr(trail.Stream(workdir / "manifest.json", verify=False))
    tok = trail.Tokenizer.from_contract(str(workdir / "contract.json"))
    assert tok.vocab_size == trail.Tokenizer(str(workdir / "tokenizer.json")).vocab_size
    assert issubclass(trail.TrailError, RuntimeError)
