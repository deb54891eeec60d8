"""mnemogate gateway: the turn, curated memory, session history and the CLI."""

__version__ = "0.1.0"
