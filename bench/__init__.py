"""hetero's benchmarks: `python -m bench NAME` (from the repository root).

Each benchmark measures hetero and its reference side by side in one process
(interleaved rounds, medians), prints a table and ends with one line
`NAME: X.XX× REFERENCE (details)`, X = reference time / hetero time (above 1:
hetero is faster).  Timings are never asserted in tests.
"""

BENCHMARKS = {
    "plan-devices": ("bench.plan_devices", "device planning on generated graphs of 1k-100k ops"),
    "matmul": ("bench.matmul", "fp32 matmul from hetero's codegen vs numpy.matmul"),
}
