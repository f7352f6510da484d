"""Loopback fake servers for tests: OpenAI- and Anthropic-compatible, scripted, with a request log.

    from servers.openai_fake import OpenAIFake, text_reply, tool_call_reply
    with OpenAIFake([tool_call_reply([("lookup", {"id": 1})]), text_reply("done")]) as fake:
        ... fake.url ...          # http://127.0.0.1:PORT/v1
        fake.requests[0].json     # what the server received

A script is a list of steps served in order (the last one repeats when it runs out), or a
function `request -> step` for concurrent runs where order is not fixed. A step is a reply body
(dict, sent as JSON 200) or one of `Status`, `Slow`, `Garbage`, `Drop` from `servers.base`.
"""
