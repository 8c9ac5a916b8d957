"""Kubernetes objects as JSON dicts: names, time, manifests, field errors, defaulting and validation.

Everything in this package is pure: no I/O beyond parsing text handed to it, no clocks, no threads.
"""
