"""The values an evaluation works with, between the records and the layers that run:
prompts composed from samples, mocks, tool names, traces, a target's result and identity,
chat messages, skills, an agent's work folder. Used by the targets, the checks, the cache and the run."""
