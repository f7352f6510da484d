"""`openai:MODEL`: any OpenAI-compatible Chat Completions endpoint, with the agent loop.

Base URL from `OPENAI_BASE_URL` (or omk.yaml `openai.base_url`; it includes `/v1`, as in the
official SDKs: `http://localhost:11434/v1` for Ollama), key from `OPENAI_API_KEY` (or the
variable omk.yaml `openai.api_key_env` names), extra body fields from `openai.params`.
"""

from __future__ import annotations

from omk.llm.openai_chat import OpenAIChat
from omk.targets.model_api import ApiTarget


class OpenAITarget(ApiTarget):
    kind = "openai"
    client_class = OpenAIChat
