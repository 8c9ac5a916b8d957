"""`python -m kjobs` runs the CLI, under the name `kjobs` (usage lines, and the `_KJOBS_COMPLETE` variable), with
`tune_gc`'s thresholds set before the CLI's own imports (click's among them: see `kjobs.cli.entry`)."""

from kjobs.gctuning import tune_gc

tune_gc()

from kjobs.cli import entry  # noqa: E402 - imported under the thresholds just set

entry()
