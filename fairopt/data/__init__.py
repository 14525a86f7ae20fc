"""Data layer: benchmark loaders, product domains and built-in small data sets."""
from fairopt.data.domain import Attribute, Domain

__all__ = ["Attribute", "Domain"]
