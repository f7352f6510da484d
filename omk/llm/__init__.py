"""Calling models: the one layer the API targets and the judge share.

`http` holds the provider settings (omk.yaml and the environment), the pool of HTTP clients,
the classification of failures into retryable or final, and the masking of API keys in every
message; `pricing` the price table and the cost of a call; `retry` the retry policy with
backoff and the loop that makes a call under it; `client` a model behind a provider's API,
with `openai_chat` and `anthropic_messages` the wire format of one request and its reply.
Importing this package loads nothing: httpx is imported on the first call.
"""
