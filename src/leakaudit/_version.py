"""The package's version, in the ground layer so that every layer can read it (pyproject.toml reads it too)."""

__version__ = "0.1.0"
