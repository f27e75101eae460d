"""Benchmarks for scatterops: ``python -m benchmarks`` (see ``benchmarks/run.py``)."""
