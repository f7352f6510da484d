"""The checks' messages (omk/assertions, the judge-scored types), kept in English in report.json,
said again in Chinese phrase by phrase for `--lang zh`: report.html's panels, the failed-check
lines of the terminal and the Markdown. What the output or the sample says (quoted) and the names
of tools, files and skills stay as they are. Part of the one catalogue: omk/report/i18n.py says
these through `check_text` and `reason_text`.

A phrase is said again where a message starts: at the start of the text, or after the `: ` that
follows a check's label in a failed-check line. The longer phrase of two that start alike goes first.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from omk.report.phrases import Compiled, Said, compiled, rewrite

_Q = r'("(?:[^"\\]|\\.)*")'  # a quoted text as the checks quote it (omk/assertions/text.py)
_AT = r"(^|: |; )"  # where a check's message starts: said again as "：" and "；"
_LEAD = {"": "", ": ": "：", "; ": "；"}

_WHAT = {"length": "长度", "word count": "词数", "turns": "轮数", "tool calls": "工具调用次数", "cost": "花费", "latency": "延迟",
         "edit distance": "编辑距离", "input": "输入", "output": "输出"}  # fmt: skip
_BOUND = {"min": "最小值", "max": "最大值"}


def _quoted(text: str) -> str:
    """A text the check quoted ("…"), in Chinese quotes (“…”) when it holds quotes of its own (a
    pattern, a JSON snippet), so that where it ends stays plain."""
    inner = text[1:-1]
    return f"“{inner}”" if '"' in inner else text


def _bound(m: re.Match[str]) -> str:
    return f"{_WHAT[m.group(1)]} {m.group(2)} {m.group(3)} {_BOUND[m.group(4)]} "


def _tool_text(m: re.Match[str]) -> str:
    verb = "包含" if m.group(4) == "contains" else "不包含"
    return f"{m.group(2)} 的{_WHAT[m.group(1)]}（{m.group(3)} 次调用）{verb} "


_CHECKS_ZH: tuple[tuple[str, Said], ...] = (
    # the output's text (omk/assertions/text.py, structured.py, m365.py)
    (r"output (equals|contains|does not equal|does not contain) the expected text \((case-sensitive|ignoring case)\)",
     lambda m: f"输出{ {'equals': '等于', 'contains': '包含', 'does not equal': '不等于', 'does not contain': '不包含'}[m.group(1)]}期望的文本"
               f"（{'区分大小写' if m.group(2) == 'case-sensitive' else '忽略大小写'}）"),
    (r"output contains all (\d+) values", r"输出包含全部 \1 个值"),
    (r"output contains none of (\d+) values", r"输出不包含 \1 个值中的任何一个"),
    (r"output contains ", "输出包含 "),
    (r"output does not contain ", "输出不包含 "),
    (r"output equals ", "输出等于 "),
    (r"output does not equal ", "输出不等于 "),
    (r"output " + _Q + " does not equal ", r"输出 \1 不等于 "),
    (r"output starts with " + _Q + ", not ", r"输出开头是 \1，而不是 "),
    (r"output starts with ", "输出开头是 "),
    (r"output ends with " + _Q + ", not ", r"输出结尾是 \1，而不是 "),
    (r"output ends with ", "输出结尾是 "),
    (r"output matches (\".*?\") at (\".*?\")(?=$|; )", lambda m: f"输出匹配 {_quoted(m.group(1))}，匹配到的文本：{_quoted(m.group(2))}"),
    (r"output does not match ", "输出不匹配 "),
    (r"regex " + _Q + r" ran out of time \(([\d.]+)s\); the pattern probably backtracks catastrophically",
     r"正则表达式 \1 超时（\2 秒）；该模式可能发生了灾难性回溯"),
    (r"output is valid JSON", "输出是有效的 JSON"),
    (r"output is not valid JSON: ", "输出不是有效的 JSON："),
    (r"output matches the schema", "输出符合该 schema"),
    (r"schema violation at (\S+): ", r"违反 schema，位置 \1："),
    (r"(length|word count|turns|tool calls|edit distance) (\d+) (>=|<|<=|>) (min|max) ", _bound),
    (r"(cost|latency) (\S+) (<=|>) (max) ", _bound),
    # similarity (omk/assertions/similarity.py)
    (r"ROUGE-(\d+) recall ", r"ROUGE-\1 召回率 "),
    (r"BLEU-4 \(smoothed\) ", "BLEU-4（平滑）"),
    # the agent's path (omk/assertions/agent.py, trajectory.py, skills.py)
    (r"trace has no ", "轨迹中没有 "),
    (r"not called: ", "未调用："),
    (r"called outside the allowed tools \((.*?)\): ", r"调用了允许范围（\1）之外的工具："),
    (r"only allowed tools called \((.*)\)", r"只调用了允许的工具（\1）"),
    (r"called: ", "已调用："),
    (r"value (.*) is not \"Tool:needle\"", r"值 \1 不是 \"Tool:needle\" 的形式"),
    (r"(input|output) of (\S+) \((\d+) calls?\) (contains|does not contain) ", _tool_text),
    (r"(input|output) of a (\S+) call contains ", lambda m: f"某次 {m.group(2)} 调用的{_WHAT[m.group(1)]}包含 "),
    (r"(\S+) was not called$", r"\1 未被调用"),
    (r"mock (\S+) hit (\d+) time\(s\) ", r"模拟 \1 命中 \2 次 "),
    (r"(\d+) tool call\(s\) follow the (\d+) step\(s\) \((\S+)\)", r"\1 次工具调用符合 \2 个步骤（\3）"),
    (r"tool calls differ from the steps \((\S+)\) at step (\d+)", r"工具调用与步骤不符（\1），从第 \2 步起"),
    (r"tool calls differ from the steps \((\S+)\)", r"工具调用与步骤不符（\1）"),
    (r"skill (\S+) is not installed in this run \(installed: (.*)\)", r"技能 \1 未安装在本次运行中（已安装：\2）"),
    (r"skill (\S+) invoked (\d+) time\(s\) ", r"技能 \1 被调用 \2 次 "),
    # the workspace (omk/assertions/workspace.py)
    (r"no workspace: the target worked in no folder of its own \(claude:, or cmd: with `workspace:`\), or the result came from the cache",
     "没有工作区：目标没有自己的文件夹（claude:，或带 `workspace:` 的 cmd:），或者结果来自缓存"),
    (r"(\S+) exists \((\d+) bytes\)", r"\1 存在（\2 字节）"),
    (r"(\S+) matches the schema", r"\1 符合该 schema"),
    (r"(\S+) contains \"", r"\1 包含 \""),
    (r"(\S+) does not contain \"", r"\1 不包含 \""),
    (r"(\S+) matches /", r"\1 匹配 /"),
    (r"(\S+) does not match /", r"\1 不匹配 /"),
    (r"the pattern ran out of time \(([\d.]+)s\) on (\S+)", r"该模式在 \2 上超时（\1 秒）"),
    (r"(\d+) file\(s\) changed, all as allowed", r"\1 个文件有改动，全部在允许范围内"),
    (r"cannot start (\S+): ", r"无法启动 \1："),
    (r"(`.*`) timed out after ([\d.]+)s and was killed", r"\1 在 \2 秒后超时，已被终止"),
    (r"(`.*`) printed more than (\d+) bytes; raise max_output_bytes in omk\.yaml if that is expected",
     r"\1 输出超过 \2 字节；如果这是预期的，请在 omk.yaml 中调大 max_output_bytes"),
    # custom checks and how a check ended (omk/assertions/python.py, hooks.py, evaluate.py)
    (r"custom assertion timed out \(([\d.]+)s\)", r"自定义断言超时（\1 秒）"),
    (r"custom assertion error: ", "自定义断言错误："),
    (r"(\S+) returned (\S+); expected a bool, \(bool, message\), a mapping with pass, or an Outcome",
     r"\1 返回了 \2；应返回 bool、`(bool, message)`、带 `pass` 的映射或 Outcome"),
    (r"(\S+) raised ", r"\1 抛出 "),
    (r"unsupported assertion type: ", "不支持的断言类型："),
    (r"skipped: ", "已跳过："),
    (r"(\d+)/(\d+) children passed \(mode (\S+)\)", r"\2 个子断言中 \1 个通过（模式 \3）"),
    # Microsoft 365 and Big Sky checks (omk/assertions/m365.py, bigsky.py)
    (r"token F1 ([\d.]+) \(precision ([\d.]+), recall ([\d.]+)\) (>=|<) threshold ", r"词元 F1 \1（精确率 \2，召回率 \3）\4 阈值 "),
    (r"(\d+) distinct citation\(s\)", r"\1 个不同的引用"),
    (r"not applicable: (\S+) reads Microsoft 365 Copilot telemetry \(retrieval or tool-call diagnostics\) that no omk target reports; runevals runs it",
     r"不适用：\1 读取 Microsoft 365 Copilot 的遥测数据（检索或工具调用诊断），没有 omk 目标会报告这些数据；请用 runevals 运行"),
    (r"first call matches: ", "第一次调用匹配："),
    (r"first call is (\S+), expected (\S+)", r"第一次调用是 \1，期望 \2"),
    (r"first call (\S+): arguments (.*) differ from expected ", r"第一次调用 \1：参数 \2 与期望不同 "),
    (r"first tool call (\S+): arguments are not JSON: ", r"第一次工具调用 \1：参数不是 JSON："),
    (r"expected a call of (.*), got no tool call", r"期望调用 \1，但没有工具调用"),
    (r"(\d+) of (\d+) call\(s\) match (.*): (not )?", lambda m: f"{m.group(2)} 次调用中有 {m.group(1)} 次匹配 {m.group(3)}：{'不满足 ' if m.group(4) else ''}"),
    (r"context (\S+) is missing or empty", r"上下文 \1 缺失或为空"),
    (r"output (contains|does not contain) context (\S+) = ", lambda m: f"输出{'包含' if m.group(1) == 'contains' else '不包含'}上下文 {m.group(2)} = "),
    (r"(similar|different): (.*) \(no judge call made\)", lambda m: f"{'相似' if m.group(1) == 'similar' else '不同'}：{m.group(2)}（未调用评委）"),
    # the judge-scored types (omk/judge)
    (r"no context to judge groundedness against \(give the item or the assertion a `context`\); not scored",
     "没有可用来判断依据的上下文（请给该项或断言加上 `context`）；未评分"),
    (r"(\S+): needs sample\.context or the assertion's `reference` \(no judge call made\)", r"\1：需要 sample.context 或断言的 `reference`（未调用评委）"),
    (r"semantic_similarity: needs a non-empty `reference` \(no judge call made\)", "semantic_similarity：需要非空的 `reference`（未调用评委）"),
    (r"similarity: needs the expected answer \(`reference`\); no judge call made", "similarity：需要期望的回答（`reference`）；未调用评委"),
    (r"(\S+): not a judge-scored type", r"\1：不是由评委评分的类型"),
    (r"([\d.]+)/5 \(threshold ([\d.]+)\)", r"\1/5（阈值 \2）"),
    (r"similar$", "相似"),
    (r"different$", "不同"),
)  # fmt: skip

# Phrases that may stand anywhere in a message (after a check's own words).
_ANYWHERE_ZH: tuple[tuple[str, Said], ...] = (
    (r"; fired instead: ", "；改为触发了："),
    (r" within ([\d.]+)\.\.([\d.]+)", r" 在 \1..\2 之内"),
    (r"; under not, it fails on ", "；在 not 之下，它因以下子断言失败："),
    (r"; and (\d+) more", r"；以及另外 \1 条"),
    (r"no judge configured", "未配置评委"),
    (r" \(format (\S+?)\)", r"（格式 \1）"),
    (r" \(format (\S+?); detected (.*)\)", r"（格式 \1；检测到 \2）"),
    (r"judge turned off \(--no-judge\)", "评委已关闭（--no-judge）"),
    (r"^(\s*)expected( *)  actual$", lambda m: f"{m.group(1)}期望{m.group(2)}      实际"),  # a tool_sequence's two columns
)


def _at_start(pattern: str, said: Said) -> tuple[re.Pattern[str], Callable[[re.Match[str]], str]]:
    """`pattern` where a message starts, its lead said in Chinese and the rest as `said` says."""
    inner = re.compile(pattern)

    def replace(found: re.Match[str]) -> str:
        lead = found.group(1)
        again = inner.match(found.string, found.start() + len(lead))
        assert again is not None  # the same pattern at the same place
        return _LEAD[lead] + (again.expand(said) if isinstance(said, str) else said(again))

    return re.compile(_AT + pattern, re.M), replace


_COMPILED: Compiled = [_at_start(p, s) for p, s in _CHECKS_ZH] + compiled(_ANYWHERE_ZH, re.M)


def check_text_zh(message: str) -> str:
    """A check's message (or a failed-check line holding one) in Chinese, phrase by phrase."""
    return rewrite(message, _COMPILED)
