"""``python -m gateway.cli``: the same entry point as the ``mnemogate`` console script."""

from gateway.cli import main

main()
