"""fairopt: fairness interventions as declarative, solver-backed optimization models."""
from fairopt import errors

__version__ = "0.1.0"
__all__ = ["__version__", "errors"]
