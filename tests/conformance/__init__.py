"""Conformance suite: the same programs under TensorFlow and minitape (see harness.py)."""
