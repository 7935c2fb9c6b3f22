"""A deterministic synthetic private bench, shaped like the records behind the RRF data kit.

It stands in for a researcher's own bench in tests and demos: it writes
records the way the bench's harness did, quirks included, and checks nothing.
"""

from kitbuild.synthetic._bench import generate_bench

__all__ = ["generate_bench"]
