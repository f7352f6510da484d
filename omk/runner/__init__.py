"""The run engine: concurrency, retries, the response cache, the run folder and resume (docs/run.md)."""
