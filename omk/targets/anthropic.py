"""`anthropic:MODEL`: the Anthropic Messages API, with the agent loop.

Base URL from `ANTHROPIC_BASE_URL` (or omk.yaml `anthropic.base_url`; without `/v1`, as in the
official SDKs), key from `ANTHROPIC_API_KEY` (or `anthropic.api_key_env`), extra body fields from
`anthropic.params` (`max_tokens` defaults to 4096: the API requires one).
"""

from __future__ import annotations

from omk.llm.anthropic_messages import AnthropicMessages
from omk.targets.model_api import ApiTarget


class AnthropicTarget(ApiTarget):
    kind = "anthropic"
    client_class = AnthropicMessages
