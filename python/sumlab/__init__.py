"""sumlab: how the order of a floating-point sum changes its bits, measured against the exact sum.

The Python face of the lab whose other face is the ``sumlab`` command line; both run the same C++
library and give the same bits. Arrays come in through DLPack or the buffer protocol (NumPy,
PyTorch, CuPy, JAX; on the CPU or a CUDA device) without a copy where the data can be read in
place.

    >>> import numpy as np, sumlab
    >>> x = np.full(10_000_000, 0.1, dtype=np.float32)
    >>> sumlab.sum(x, "serial").value        # left to right
    1087937.0
    >>> sumlab.sum(x, "pairwise").value      # a tree
    1000000.0
    >>> sumlab.reference(x)                  # the exact sum, correctly rounded to float32
    1000000.0
    >>> sumlab.value(x, "kahan")             # one algorithm's bits, nothing measured
    1000000.0

``sumlab.study`` runs the studies into the same run folders as ``sumlab study`` (so ``sumlab
report DIR`` renders them), on generated inputs or on your data, with sumlab's algorithms and
kernels or with your own reductions (``sumlab.Subject``).
"""
from ._sumlab import __version__
from .core import LaunchShape, Result, SumlabError, CheckFailed, algorithms, cuda_available, kernels, reference, sum, value
from .subjects import Subject, bfloat16_round, bfloat16_to_float32
from . import study

__all__ = ["__version__", "LaunchShape", "Result", "SumlabError", "CheckFailed", "Subject", "algorithms",
           "bfloat16_round", "bfloat16_to_float32",
           "cuda_available", "kernels", "reference", "study", "sum", "value"]
