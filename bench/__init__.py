"""Benchmarks, run as `python -m bench.NAME`; never part of the test run."""
