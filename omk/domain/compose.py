"""The user message a target receives, composed as omk 0.54 does it: environment section, the
prompt, the fenced context. The run composes it; a report takes it apart again (`said_by_user`)."""

from __future__ import annotations

from omk.samples.model import Sample

ENV_HEADER = "## 题设环境声明（仅作上下文）"
ENV_CLI = "- 题设声明可用的 CLI（仅作上下文，不修改 PATH）："
ENV_FILES = "- 题设引用的文件路径（仅作上下文，不会在 cwd 物化）："
ENV_NOTES = "- 备注："
# 0.54's exact closing sentence is not in our reference material; this one says the same thing.
ENV_CLOSING = "以上声明仅是题设上下文：请据此作答，不要假设环境已被实际修改。"
SEPARATOR = "\n\n---\n\n"  # between the environment section and the prompt
CONTEXT_OPEN = "\n\n```\n"  # between the prompt and its fenced context


def environment_section(environment: dict | None) -> str:
    """The declared environment as a Markdown block, or '' when it declares nothing."""
    if not environment:
        return ""
    lines: list[str] = []
    clis = [c for c in environment.get("cli_available") or [] if str(c).strip()]
    if clis:
        lines.append(ENV_CLI)
        lines.extend(f"  - `{c}`" for c in clis)
    files = [f for f in environment.get("files_available") or [] if str(f).strip()]
    if files:
        lines.append(ENV_FILES)
        lines.extend(f"  - `{f}`" for f in files)
    notes = str(environment.get("notes") or "").strip()
    if notes:
        lines.append(ENV_NOTES + notes)
    if not lines:
        return ""
    return "\n".join([ENV_HEADER, "", *lines, "", ENV_CLOSING])


def _compose(prompt: str, context: str | None, environment: dict | None) -> str:
    env = environment_section(environment)
    text = f"{prompt}{CONTEXT_OPEN}{context}\n```" if context else prompt
    return f"{env}{SEPARATOR}{text}" if env else text


def compose_prompt(sample: Sample) -> str:
    """The user message a target receives for this sample."""
    return _compose(sample.prompt, sample.context, sample.environment)


def compose_turn_prompt(sample: Sample, index: int) -> str:
    """The user message of turn `index` of a conversation: its prompt and its own context; the
    declared environment opens the conversation (first turn only)."""
    turn = sample.turns[index]
    return _compose(turn.prompt, turn.context, sample.environment if index == 0 else None)


def said_by_user(composed: str) -> str:
    """What the user said in a composed prompt: without the environment section before it or the
    fenced context after it."""
    said = composed.split(SEPARATOR, 1)[1] if composed.startswith(ENV_HEADER) and SEPARATOR in composed else composed
    return said.split(CONTEXT_OPEN, 1)[0]
