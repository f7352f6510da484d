"""What omk keeps between runs: the response cache (cache), keyed by the target's identity."""
