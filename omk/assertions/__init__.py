"""Assertion types by family, a registry, and the engine that runs them."""
