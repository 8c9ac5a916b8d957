"""`python -m kjobs` runs the CLI, under the name `kjobs` (usage lines, and the `_KJOBS_COMPLETE` variable)."""

from kjobs.cli import entry

entry()
