"""What `omk evolve` and `omk view` say, in `--lang zh`.

Two kinds of text: the lines omk builds as it prints (a template looked up in `ZH` by its English
wording, then filled in), and the words report.json keeps in English (why a candidate was kept or
refused, why the loop stopped, its notes) said again phrase by phrase (`evolve_text`). Skill
names, sample ids, figures and quoted text stay as they are.
"""

from __future__ import annotations

from omk.report.phrases import Said, compiled, rewrite

ZH = {
    # omk evolve: the terminal lines, report.md and report.html (omk/evolve/report.py, html.py)
    "omk evolve {skill} · focus {focus} · split train {train} / selection {selection} / test {test} · α {alpha} over {tests} candidates":
        "omk evolve {skill} · 重点 `{focus}` · 划分 训练 {train} / 选择 {selection} / 测试 {test} · α {alpha}，共 {tests} 个候选",
    "  round {round} candidate {index}: {status}{figures} · {reason}": "  第 {round} 轮 候选 {index}：{status}{figures} · {reason}",
    "  note: {note}": "  备注：{note}",
    "stopped: {stop}": "停止原因：{stop}",
    "gain over the original: train {train} · selection {selection} · test {test}": "相对原版的提升：训练 {train} · 选择 {selection} · 测试 {test}",
    "cost ${cost}": "花费 ${cost}",
    "report: {path}": "报告：{path}",
    " · wrote {path}": " · 已写入 {path}",
    "accepted": "已接受",
    "rejected": "已拒绝",
    "refused": "已拒收",
    "omk evolve: {skill}": "omk evolve：{skill}",
    "Focus `{focus}`; split train {train} / selection {selection} / test {test} (seed {seed}); each candidate tested at α {alpha} / {tests}; stopped: {stop}.":
        "重点 `{focus}`；划分 训练 {train} / 选择 {selection} / 测试 {test}（随机种子 {seed}）；每个候选的检验水平为 α {alpha} / {tests}；停止原因：{stop}。",
    "Focus {focus}; split train {train} / selection {selection} / test {test}; each candidate tested at α {alpha} / {tests}; stopped: {stop}.":
        "重点「{focus}」；划分 训练 {train} / 选择 {selection} / 测试 {test}；每个候选的检验水平为 α {alpha} / {tests}；停止原因：{stop}。",
    "round": "轮次",
    "candidate": "候选",
    "status": "状态",
    "change": "变化",
    "interval": "区间",
    "lines changed": "改动行数",
    "why": "原因",
    "Gain over the original (composite): train {train}, selection {selection}, test {test}.": "相对原版的提升（综合分）：训练 {train}，选择 {selection}，测试 {test}。",
    "Cost: ${cost}": "花费：${cost}",
    "; round {round} ${cost}": "；第 {round} 轮 ${cost}",
    "The selected skill against the original": "选出的技能与原版的差异",
    "Selection score of the best skill, per round": "每轮最佳技能在选择集上的得分",
    "Candidates": "候选",
    "(no change)": "（无改动）",
    "selection score per round": "每轮选择集得分",
    "round {round}: {score} [{low}, {high}]": "第 {round} 轮：{score} [{low}, {high}]",
    # omk evolve --dry-run (omk/evolve/plan.py)
    "dry run: nothing was called; split train {train} / selection {selection} / test {test}; at most {runs} sample run(s) over {rounds} round(s) of {candidates} candidate(s)":
        "试运行：未调用任何接口；划分 训练 {train} / 选择 {selection} / 测试 {test}；最多运行 {runs} 次用例，共 {rounds} 轮，每轮 {candidates} 个候选",
    "  {role} {name}: {calls} call(s), ~{input} prompt + ~{output} output tokens, {cost}": "  {role} {name}：{calls} 次调用，约 {input} 个提示词元 + 约 {output} 个输出词元，{cost}",
    "target": "目标",
    "judge": "评委",
    "improver": "改进模型",
    "no known price": "价格未知",
    "estimated cost at most: ${total}": "预估花费最多：${total}",
    "estimated cost: unknown (no known price for {names})": "预估花费：未知（{names} 价格未知）",
    "estimated cost at most: ${total} for the priced calls; not counted: no known price for {names}": "有价格的调用预估花费最多：${total}；未计入：{names} 价格未知",
    # omk view (omk/view/pages.py, omk/cli/view_cmd.py)
    "omk view: not read: {problem}": "omk view：未读取：{problem}",
    "omk view: {runs} run(s), {evolve} evolve run(s), {pages} page(s) written to {out}": "omk view：{runs} 次运行，{evolve} 次 evolve 运行，已写入 {pages} 个页面到 {out}",
    "omk view: not written: {line}": "omk view：未写入：{line}",
    "omk view: {runs} run(s), {evolve} evolve run(s) on {url} (Ctrl-C stops)": "omk view：{runs} 次运行，{evolve} 次 evolve 运行，地址 {url}（按 Ctrl-C 停止）",
    "Runs": "运行列表",
    "run": "运行",
    "started": "开始时间",
    "commit": "提交",
    "samples": "用例",
    "composite": "综合分",
    "pass rate": "通过率",
    "verdict": "结论",
    "No runs found.": "没有找到运行。",
    "Not read": "未读取",
    "Evolve runs": "evolve 运行",
    "evolve run": "evolve 运行",
    "skill": "技能",
    "focus": "重点",
    "candidates": "候选数",
    "level": "级别",
    "cost": "花费",
    "vs previous": "对比上一次",
    "Trends": "趋势",
    "{title}: composite (blue, 1–5) and pass rate (green, 0–100%), {n} runs": "{title}：综合分（蓝线，1–5）与通过率（绿线，0–100%），{n} 次运行",
    "run (oldest first)": "运行（最早的在前）",
    "sample": "用例",
    "what changed": "变化内容",
    "checks that changed": "变化的检查",
    "A = {a} ({a_target}) · B = {b} ({b_target}) · {changed} changed, {unchanged} unchanged, {worse} got worse":
        "A = {a}（{a_target}）· B = {b}（{b_target}）· {changed} 条有变化，{unchanged} 条未变，{worse} 条变差",
    "pass": "通过",
    "fail": "未通过",
    "none": "无",
    "repeat": "重复",
    "state": "状态",
    "error": "错误",
    "passed": "通过",
    "failed": "未通过",
    "In no run.": "不在任何运行中。",
    "Sample {sample}": "用例 {sample}",
    "pass to fail": "由通过变为未通过",
    "new error": "新出错",
    "score down": "分数下降",
    "fail to pass": "由未通过变为通过",
    "error fixed": "错误已修复",
    "score up": "分数上升",
    "new": "新增",
    "removed": "已移除",
    "No such page.": "没有这个页面。",
}  # fmt: skip


def t(text: str, lang: str = "en") -> str:
    """`text` (an English template) in `lang`."""
    return ZH.get(text, text) if lang == "zh" else text


# What report.json keeps in English: why a candidate was kept or refused (omk/evolve/acceptance.py,
# candidates.py, loop.py), why the loop stopped, its notes and its headline. Longer phrases first.
_EVOLVE_ZH: tuple[tuple[str, Said], ...] = (
    (r"significant, but another candidate of the round had a higher lower bound \((.*)\)$", r"显著，但本轮另一个候选的区间下界更高（\1）"),
    (r"no pairs to compare on the selection split", "选择集上没有可比较的配对"),
    (r"not significant: p = (\S+), needs below (\S+) \(α over (\d+) candidates\)", r"不显著：p = \1，需要低于 \2（α 按 \3 个候选校正）"),
    (r"the interval's lower bound (\S+) is not above the trivial difference (\S+)", r"区间下界 \1 不高于可忽略差异 \2"),
    (r"better: (\S+) \[(\S+), (\S+)\] at (\S+), p = (\S+)", r"更好：\1 [\2, \3]，置信水平 \4，p = \5"),
    (r"the file does not start with a `---` front matter line", "文件不是以 `---` 前置元数据行开头"),
    (r"the front matter has no closing `---` line", "前置元数据没有结束的 `---` 行"),
    (r"the front matter is not valid YAML(?: \(line (\d+)\))?", lambda m: "前置元数据不是有效的 YAML" + (f"（第 {m.group(1)} 行）" if m.group(1) else "")),
    (r"the front matter is not a mapping of `key: value` lines", "前置元数据不是 `key: value` 行组成的映射"),
    (r"SKILL\.md is (\S+) bytes, over the limit of (\S+)", r"SKILL.md 有 \1 字节，超过上限 \2"),
    (r"the name changed from (.*) to (.*)$", r"名称由 \1 改成了 \2"),
    (r"the front matter has no description", "前置元数据没有 description"),
    (r"the description is (\S+) characters, over the limit of (\S+)", r"description 有 \1 个字符，超过上限 \2"),
    (r"a duplicate of the current skill", "与当前技能相同"),
    (r"a duplicate of a candidate already tried", "与已试过的候选相同"),
    (r"(\d+) of (\d+) lines changed, over the edit budget of (\S+) \((\d+) lines\)", r"改动了 \2 行中的 \1 行，超过改动上限 \3（\4 行）"),
    (r"the body changed, and --focus description changes only the description", "正文被改动，而 --focus description 只改 description"),
    (r"a front matter field other than the description changed, and --focus description changes only the description", "description 以外的前置元数据字段被改动，而 --focus description 只改 description"),
    (r"the front matter changed, and --focus body changes only the body", "前置元数据被改动，而 --focus body 只改正文"),
    (r"^round (\d+): the improver gave (\d+) of (\d+) candidates", r"第 \1 轮：改进模型给出了 \3 个候选中的 \2 个"),
    (r"^round (\d+): the improver failed: ", r"第 \1 轮：改进模型出错："),
    (r"every train sample passes", "训练集的用例全部通过"),
    (r"two rounds in a row with nothing accepted", "连续两轮没有接受任何候选"),
    (r"the last round \((\d+)\)", r"已到最后一轮（\1）"),
    (r"the budget: \$(\S+) of \$(\S+) spent; run the same command again to resume", r"预算：已花费 $\1（上限 $\2）；再次运行同一命令即可继续"),
    (r"no candidate beat the original on the selection split; the test split was not run", "在选择集上没有候选胜过原版；测试集未运行"),
    (r"the gain on the test split is far below the gain on the selection split: overfitting is the likely reason", "测试集上的提升远低于选择集上的提升：很可能是过拟合"),
    (r"^NO CHANGE$", "无改动"),
    (r"^STOPPED$", "已停止"),
    (r"^CAUTIOUS$", "需谨慎"),
)
_EVOLVE_COMPILED = compiled(_EVOLVE_ZH)


def evolve_text(text: str, lang: str = "en") -> str:
    """A reason, stop, note or level report.json keeps in English, said in `lang`; a part omk
    does not know (an improver's own error, a verdict's text) is left as it is, or said by the
    verdict's table."""
    if lang != "zh":
        return text
    from omk.report.i18n import verdict_text

    return verdict_text(rewrite(text, _EVOLVE_COMPILED), lang)
