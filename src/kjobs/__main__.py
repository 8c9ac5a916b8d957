"""`python -m kjobs` runs the CLI."""

from kjobs.cli import main

main()
