"""The feature gates the conformance suite runs with: `KJOBS_FEATURE_GATES` (default: every gate at its
default). `KJOBS_FEATURE_GATES=AllAlpha=true python -m pytest tests/conformance` runs it with every kjobs gate
on; with every gate off or on, a manifest the corpus holds (no gated field) must behave as on Kubernetes."""

from __future__ import annotations

import os

from kjobs.api.features import ENV_VAR, FeatureGates

FEATURES = FeatureGates.parse(os.environ.get(ENV_VAR, ""))
