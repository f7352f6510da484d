"""omk: an evaluation engine for LLM prompts, skills and agents."""

__version__ = "0.1.0"
