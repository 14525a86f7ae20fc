"""Solver back ends. Each module ``<name>_backend`` exposes ``compile(program, spec)`` returning a
:class:`~fairopt.modeling.backends.base.CompiledModel`. Adding a back end means adding a module
here and a :class:`~fairopt.modeling.registry.BackendInfo` entry in the registry."""
