"""trail from Python: runs, checkpoints, audits, the canonical data stream and RepOps.

The C++ core does the work (``trail._trail``); these modules give it Python's shapes:
numpy arrays, dicts, iterators, context managers. See docs/python.md.

    >>> import trail
    >>> with trail.Run("runs/tiny") as run:
    ...     report = run.replay(range(10, 13))
    ...     report.ok
    True
"""

from . import _trail
from ._trail import TrailError, Tokenizer, backend, set_threads, simd_targets, use_simd_target
from . import ops
from .audit import Attestation, CollectReport, Divergence, ReplayReport, StepVerdict
from .audit import collect, read_attestation
from .checkpoint import Checkpoint, load_safetensors
from .data import Stream, Window, verify_proof
from .run import Run, Trace, bisect

__version__ = _trail.__version__

__all__ = [
    "Attestation", "Checkpoint", "CollectReport", "Divergence", "ReplayReport", "Run",
    "StepVerdict", "Stream", "Tokenizer", "Trace", "TrailError", "Window", "backend", "bisect",
    "collect", "load_safetensors", "ops", "read_attestation", "set_threads", "simd_targets",
    "use_simd_target",
]
