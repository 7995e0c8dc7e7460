"""The README's Python session: the seed figure, a GPU kernel on its CPU model, your data, a study.

    build/venv/bin/python examples/quickstart.py
"""
import numpy as np

import sumlab

x = np.full(10_000_000, 0.1, dtype=np.float32)
print("serial  ", sumlab.sum(x, "serial").value)    # 1087937.0: left to right
print("pairwise", sumlab.sum(x, "pairwise").value)  # 1000000.0: a tree
print("exact   ", sumlab.reference(x))              # 1000000.0: correctly rounded

# A GPU kernel's bits for one launch shape, on the GPU or (backend="model") on its CPU model.
r = sumlab.sum(x, "gpu_two_pass", backend="model", shape=sumlab.LaunchShape(grid=264, block=128))
print(f"gpu_two_pass 264x128: {r.value} (bits {r.hex}), |error| {r.abs_error:.3g} <= bound {r.bound:.3g}: {r.verdict}")

# Your data: every algorithm next to the exact sum.
a = np.load("data/samples/absorbed.npy")
for r in sumlab.sum(a, ["serial", "pairwise", "kahan", "neumaier", "exact"]):
    print(f"{r.algorithm:9} {r.value:>8g}  |error| {r.abs_error:<6g} bound {r.bound:<8.3g} {r.verdict}")

# A study into the CLI's run folder (sumlab report renders it).
rows = sumlab.study.error_vs_n("runs/py-quick", quick=True, force=True, dtypes=["float32"],
                               dists=["uniform"], algorithms=["serial", "pairwise", "kahan"])
print(f"{len(rows)} rows in runs/py-quick; worst serial relative error "
      f"{max(r['rel_error'] for r in rows if r['algorithm'] == 'serial'):.3g}")
