"""CLI text in English, translated with `--lang zh`."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from omk.report.phrases import Said, compiled, rewrite

if TYPE_CHECKING:
    from omk.records.shard import ShardInfo

ZH = {
    "Ablation": "消融实验",
    "part": "部分",
    "kind": "类型",
    "tokens": "词元数",
    "section": "章节",
    "reference": "参考文件",
    "contribution [95% interval]": "贡献 [95% 区间]",
    "recall change": "召回率变化",
    "false-trigger change": "误触发率变化",
    "candidate to cut": "可删除候选",
    "not shown to be without effect": "未证明无影响",
    "What each part of {skill} is worth: the composite lost when it is removed (paired, largest first); "
    "a candidate to cut is a part whose removal's whole interval lies within ±{trivial}": "{skill} 各部分的价值：删除该部分后综合分的损失（配对比较，从大到小）；"
    "删除后整个区间都落在 ±{trivial} 之内的部分为可删除候选",
    "Results": "结果",
    "shaded: the 95% confidence interval of the mean change, {low} to {high}; ": "阴影：平均变化的 95% 置信区间，{low} 到 {high}；",
    "no confidence interval (fewer than 2 samples scored on both sides); ": "没有置信区间（两侧都有得分的用例少于 2 条）；",
    "{n} sample(s) without a score on both sides are not shown.": "{n} 条两侧没有都得分的用例未显示。",
    "Each dot is one sample:": "每个点是一条用例：",
    "unchanged": "未变",
    "worse": "更差",
    "blue line: the mean change {mean}; black line: no change; dashed lines: ±{trivial}, the smallest change worth acting on.": "蓝线：平均变化 {mean}；黑线：无变化；虚线：±{trivial}，值得采取行动的最小变化。",
    "started": "开始",
    "finished": "结束",
    "sample files": "用例文件",
    "unspecified": "未指定",
    "regressed (highlighted)": "退步（已高亮）",
    "No sample regressed": "没有用例退步",
    "Click a column to sort it; Δ sorts the worst first.": "点击列标题排序；按 Δ 排序时最差的在前。",
    "The sections below are the control's run ({control}). Each variant's own report (when written as HTML):": "以下各节是对照组（{control}）的运行。各变体自己的报告（以 HTML 写出时）：",
    "Per-sample composite change, {t} minus {c}: mean {mean}, 95% CI {ci}": "每条用例的综合分变化，{t} 减 {c}：均值 {mean}，95% 置信区间 {ci}",
    "How much each sample changed: {t} − {c} (composite, 1–5 scale)": "每条用例变化多少：{t} − {c}（综合分，1–5 分制）",
    "95% CI of the mean change": "平均变化的 95% 置信区间",
    "mean": "均值",
    "trivial": "可忽略",
    "worse with {t}": "{t} 更差",
    "better with {t}": "{t} 更好",
    "gate|error": "错误",
    "pass/fail": "通过/未通过",
    "both pass {both}, judge only {judge}, people only {people}, both fail {neither}": "都通过 {both}，仅评委通过 {judge}，仅人工通过 {people}，都未通过 {neither}",
    "alpha|interval": "区间尺度",
    "alpha|ordinal": "顺序尺度",
    "pts": "个百分点",
    "{gained} gained, {lost} lost": "新增通过 {gained} 条，失去 {lost} 条",
    "per sample": "（每条用例）",
    "n={n} paired of {shared} shared samples": "共有用例 {shared} 条，其中配对 n={n}",
    "{count} ran on {who} only": "{count} 条只在 {who} 上运行",
    "the change exceeds run-to-run spread": "变化超过运行间波动",
    "the change is within run-to-run spread": "变化在运行间波动之内",
    "gate|pass": "通过",
    "gate|fail": "未通过",
    "paired bootstrap": "配对自助法",
    ", {n} resamples": "，{n} 次重抽样",
    "Δ: treatment − control composite per sample (1–5 scale), averaged over the samples both scored; "
    "95% CI: {method}, seed {seed}; trivial ±{trivial}; **bold**: CI excludes 0. "
    "Each variant's full report is in <code>variants/&lt;name&gt;/</code>.": "Δ：每条用例的实验组 − 对照组综合分（1–5 分制），在两组都有得分的用例上取平均；"
    "95% 置信区间：{method}，随机种子 {seed}；可忽略阈值 ±{trivial}；**粗体**：置信区间不含 0。"
    "每个变体的完整报告在 <code>variants/&lt;name&gt;/</code>。",
    "run": "运行",
    "{changed} changed, {unchanged} unchanged (A {a}, B {b}): {worse} got worse, {better} better (score changes under {trivial} ignored)":
        "{changed}有变化，{unchanged} 条未变（A {a}，B {b}）：{worse} 条变差，{better} 条变好（忽略小于 {trivial} 的分数变化）",
    "diff|pass to fail": "由通过变为未通过",
    "diff|new error": "新出错",
    "diff|score down": "分数下降",
    "diff|fail to pass": "由未通过变为通过",
    "diff|error fixed": "错误已修复",
    "diff|score up": "分数上升",
    "diff|new": "新增",
    "diff|removed": "已移除",
    "diff|absent": "无",
    "diff|pass": "通过",
    "diff|fail": "未通过",
    "diff|passed": "通过",
    "diff|failed": "未通过",
    "diff|skipped": "跳过",
    "valid": "有效",
    "run: {run_id} ({n} results)": "运行：{run_id}（{n} 条结果）",
    "coverage": "覆盖",
    "difficulty": "难度",
    "construct": "考察点",
    "provenance": "来源",
    "layers": "层",
    "assertion types": "断言类型",
    "declared": "已声明",
    "rubric {r} (avg {chars} chars) · dimensions {d} · mocks {m} · environment {e} · tripwires {w}":
        "评分标准 {r}（平均 {chars} 字符）· 评分维度 {d} · 模拟 {m} · 环境 {e} · 绊线 {w}",
    "hint: no sample declares capability, difficulty, construct or provenance": "提示：没有用例声明能力、难度、考察点或来源",
    "left out to fit the width": "因宽度省略的列",
    "(1 sample, no interval)": "（仅 1 条用例，无区间）",
    "pass rate": "通过率",
    "samples differ": "用例难度",
    "run to run": "运行间波动",
    "judge noise": "评委噪声",
    "spread of the composite": "综合分的波动来源",
    "narrows it most": "最能收窄区间",
    "per dollar": "（按花费）",
    "per call": "（按调用次数）",
    "more samples": "增加用例",
    "more repeats": "增加重复次数",
    "more judge calls": "增加评委调用",
    "with no more samples": "若无法增加用例",
    "… and {n} more: see report.html or report.json": "……另有 {n} 条：见 report.html 或 report.json",
    "{shown} of {total} results shown (those that did not pass first); all are in the report": "显示 {total} 条结果中的 {shown} 条（未通过的在前）；全部结果见报告",
    "… and {n} more that did not pass or had failed checks: see the report": "……另有 {n} 条未通过或有检查未通过：见报告",
    "sample": "用例",
    "status": "状态",
    "composite": "综合分",
    "pass": "通过",
    "error": "错误",
    "Failures": "失败详情",
    "Passed, with failed checks": "通过，但有检查未通过",
    "output": "输出",
    "(no output)": "（无输出）",
    "runs": "次运行",
    "in {n} of {total} runs": "{total} 次中有 {n} 次",
    "{n} samples, the same error: {ids}": "{n} 条用例，同一错误：{ids}",
    "samples": "条用例",
    "passed": "通过",
    "failed": "未通过",
    "errored": "出错",
    "skipped": "未发送",
    "turn {n}": "第 {n} 轮",
    "not graded": "未评分",
    "not sent: an earlier turn failed": "未发送：前面的轮次失败了",
    "whole conversation": "整段对话",
    "threshold": "阈值",
    "cost": "成本",
    "judge cost": "评委成本",
    "item": "项目",
    "score": "分数",
    "reason": "理由",
    "rubric": "评分标准",
    "dimension": "维度",
    "report": "报告",
    # omk power
    "paired t-test on the composite, two-sided, α {alpha}, {power}% power": "综合分的配对 t 检验，双侧，α {alpha}，检验力 {power}%",
    "{treatment} vs {control}": "{treatment} 对比 {control}",
    "{treatment} (a comparison against it)": "{treatment}（与之比较）",
    ", run to run {sd}": "，运行之间 {sd}",
    " (one repeat: run-to-run noise not separable)": "（只有一次重复：分不出运行之间的噪声）",
    "{repeats} repeat(s): {samples}": "{repeats} 次重复：{samples}",
    "{name}: {samples} samples × {repeats} repeat(s); spread between samples {sd}{within}": "{name}：{samples} 条用例 × {repeats} 次重复；用例之间的离散 {sd}{within}",
    "this run detects differences of {detect} or more": "本次运行能检出 {detect} 及以上的差异",
    "a difference of {effect} needs (samples per repeat count): {needs}": "检出 {effect} 的差异需要（按重复次数给出用例数）：{needs}",
    "also written": "另已写入",
    "gate passed": "门禁通过",
    "gate failed": "门禁未通过",
    "nothing was graded (no assertion ran and no judge score)": "没有可评分的内容（无断言执行，也无评委分）",
    "judge items": "项评委打分",
    "{items} skipped: no judge configured (use --judge)": "{items}被跳过：未配置评委（使用 --judge）",
    "{cached} of {total} from the cache; --no-cache to call again": "{total} 条中 {cached} 条来自缓存；使用 --no-cache 重新调用",
    "from the cache": "来自缓存",
    "{items} skipped: judge turned off (--no-judge)": "{items}被跳过：评委已关闭（--no-judge）",
    "interrupted: the partial run is kept in {path}": "已中断：已完成的部分保存在 {path}",
    "{n} problem(s) found": "发现 {n} 个问题",
    "target": "目标",
    "judge": "评委",
    "none": "无",
    "duration": "耗时",
    "why": "原因",
    "All results": "全部结果",
    "Summary": "概览",
    "score distribution": "分数分布",
    "By category": "按类别",
    # omk doctor: its lines, its recommendations and its advice (omk/doctor/advice.py)
    "health": "健康度",
    "info": "条提示",
    "errors": "个错误",
    "warnings": "个警告",
    "healthy": "健康",
    "unhealthy": "不健康",
    "(--strict allows none)": "（--strict 不允许任何警告）",
    "✓ no sample-quality issues found": "✓ 未发现用例质量问题",
    "… and {n} more (see --json)": "……另有 {n} 条（见 --json）",
    "over 30% of samples always score 5: add harder samples or stricter assertions": "超过 30% 的用例总是得 5 分：请加入更难的用例或更严格的断言",
    "scores hardly vary across the set: add assertions that separate good answers from bad": "整个用例集的分数几乎没有差别：请加入能区分好坏回答的断言",
    "merge or vary near-duplicate prompts: they weigh one behaviour several times": "合并或改写近乎重复的提示：它们把同一种行为重复计了多次",
    "judges disagree on some rubrics: say what a 5 and a 1 look like": "评委在部分评分标准上意见不一：写明 5 分和 1 分各是什么样子",
    "some samples error: check the target, timeouts and mocks before reading scores": "部分用例出错：先检查目标、超时和模拟，再看分数",
    "short rubrics without criteria grade loosely: name what must be included": "过短且没有标准的评分标准打分宽松：写明必须包含什么",
    "thin capabilities: add samples so each capability has a few": "部分能力用例过少：为每项能力补充几条用例",
    'omk ignores unknown fields: fix the spelling, or prefix your own labels with "x-"': "omk 会忽略未知字段：请修正拼写，或给自定义标签加上 \"x-\" 前缀",
    "give every sample at least one assertion or a rubric": "给每条用例至少一条断言或一条评分标准",
    "a small set sees only large regressions: grow it before trusting a small change in scores": "小用例集只能发现大的退步：在相信分数的小变化之前先扩充用例集",
    "a sample with one check scores 1 or 5: add checks in other layers, or a rubric": "只有一项检查的用例只会得 1 分或 5 分：请在其他层加入检查，或加一条评分标准",
    "a capability with one sample is all or nothing: give each capability two samples or more": "只有一条用例的能力非全即无：为每项能力提供两条或更多用例",
    "add mock_hit assertions so a run proves the agent used its mocks": "加入 mock_hit 断言，让运行证明智能体用到了它的模拟",
    "declared environment does not hold here: agent targets run on this machine will not find it": "声明的环境在本机不成立：在本机运行的智能体目标将找不到它",
    "{samples}: no regression can be told from noise: that takes at least {min_flips} samples flipping "
    "the same way; seeing a {regression} regression takes about {needed} samples": "{samples}：任何退步都无法与噪声区分——这至少需要 {min_flips} 条用例朝同一方向翻转；"
    "要看出 {regression} 的退步约需 {needed} 条用例",
    "{samples}: a regression is told from noise only when {min_flips} of them ({share} of the set) flip "
    "the same way; seeing a {regression} regression takes about {needed} samples": "{samples}：只有其中 {min_flips} 条（占用例集的 {share}）朝同一方向翻转时，"
    "才能把退步与噪声区分开；要看出 {regression} 的退步约需 {needed} 条用例",
    "one assertion and no rubric: the sample scores 1 or 5, nothing between; add a second check or a rubric": "只有一条断言且没有评分标准：该用例只会得 1 分或 5 分，没有中间分；请再加一项检查或一条评分标准",
    "no sample checks the {layer}, {hint}: the composite says nothing about it": "没有用例检查{layer}（{hint}）：综合分对它一无所知",
    "fact layer": "事实层",
    "behavior layer": "行为层",
    "judge layer": "评委层",
    "capability {name} has one sample: its pass rate can only be 0% or 100%": "能力 {name} 只有一条用例：其通过率只能是 0% 或 100%",
    "what the answer says (contains, regex, json_schema …)": "回答说了什么：contains、regex、json_schema …",
    "what the agent does (tool_called, mock_hit, tool_sequence …)": "智能体做了什么：tool_called、mock_hit、tool_sequence …",
    "a rubric or dimensions the judge scores": "由评委打分的评分标准或维度",
    # a recorded sample's agent doing what the recording never did (omk/domain/mock_defs.py), read back by `note`
    "mock drift: the agent now calls {tool} with {input}, an input the recording never had": "模拟漂移：智能体现在以 {input} 调用 {tool}，录制中从未有过这个输入",
    "mock drift: the agent now calls {tool}, which the recording never did": "模拟漂移：智能体现在调用 {tool}，录制中从未有过这个调用",
    "Mock drift: {samples} made calls the recording never had": "模拟漂移：{samples}发出了录制中从未有过的调用",
    "recorded samples": "条录制的用例",
    # a tool call the target does not offer (omk/domain/toolnames.py, omk/report/unsupported.py), read back by `note`
    "the agent called {tool}, which {target} does not offer": "智能体调用了 {tool}，而 {target} 不提供这个工具",
    "mock {key} says run: true, which {target} cannot do (omk answers its tools itself): its return answered": "mock {key} 写了 run: true，但 {target} 做不到（omk 自己回答它的工具调用）：由它的 return 作答",
    "Unsupported tool calls: {samples} called tools the target does not offer": "不支持的工具调用：{samples}调用了目标不提供的工具",
    "Mocks with run: true that the target could not run: {samples}": "写了 run: true 但目标无法真正运行的 mock：{samples}",
    "the agent CLI refused {tool} before its recorded mock could answer ({reason})": "在录制的模拟回答之前，智能体命令行工具就拒绝了 {tool}（{reason}）",
    # the shard label (omk/records/shard.py)
    "shard": "分片",
    "shard {index}/{count}": "分片 {index}/{count}",
    "merged: {merged} of {count} shards": "已合并：{count} 个分片中的 {merged} 个",
    "partial merge: {merged} of {count} shards, missing {missing}": "部分合并：{count} 个分片中的 {merged} 个，缺少 {missing}",
    "{label}: the report covers only the shards merged": "{label}：报告只涵盖已合并的分片",
    # an experiment in the terminal
    "Variants": "变体",
    "Verdict": "判定",
    "cost, mean latency per sample": "每条用例的花费与平均延迟",
    "layers, 95% intervals": "各层均分及 95% 区间",
    "Layer winners": "各层胜出者",
    "Sample size": "样本量",
    "Stability": "稳定性",
    "Resources": "资源",
    "met": "已满足",
    "NOT met": "未满足",
    "errored samples ({counts}): exit 1 whatever the verdict; see each variant's report": "出错的用例（{counts}）：无论结论如何退出码都是 1；请查看各变体的报告",
    # the per-capability table
    "By capability": "按能力",
    "capability": "能力",
    "category": "类别",
    "(none)": "（无）",
    "repeat": "重复",
    "latency": "延迟",
    "all": "全部",
    "filter": "筛选",
    "filter by sample id, capability…": "按用例 ID、能力筛选…",
    "fact": "事实层",
    "behavior": "行为层",
    "judge skipped": "评委已跳过",
    "source": "来源",
    "tripwire": "绊线",
    "yes": "是",
    "(no assertions)": "（没有断言）",
    "weight": "权重",
    "metric": "指标",
    "(no judge)": "（没有评委）",
    "(no tool calls)": "（没有工具调用）",
    "mocks: {hits} hit(s), {misses} miss(es); {per}": "模拟：命中 {hits} 次，未命中 {misses} 次；{per}",
    "tool": "工具",
    "input": "输入",
    "answered by": "由谁回答",
    "unsupported by this agent": "此代理不支持",
    "answered|denied": "已拒绝",
    "answered|the real tool": "真实工具",
    "answered|refused by the agent CLI": "被代理命令行工具拒绝",
    "URLs inlined": "内联的 URL",
    "Prompt": "提示词",
    "Output": "输出",
    "Assertions": "断言",
    "Failed and errored samples first, then passed ones, each group in run order; click a column to sort.": (
        "未通过与出错的用例在前，通过的在后，各组内保持运行顺序；点击列标题可排序。"
    ),
    "Judge": "评委",
    "Trace": "轨迹",
    "turns": "轮次",
    "tokens in": "输入词元数",
    "tokens out": "输出词元数",
    "Pairwise": "两两对比",
    "vs": "对",
    "A better": "A 更好",
    "B better": "B 更好",
    "tie": "平局",
    "ties": "平局",
    "verdict": "判定",
    "Verdicts": "判定",
    "key": "键",
    "pairwise|skipped": "已跳过",  # a verdict not given; plain "skipped" is a turn not sent
    "tie (orders disagree)": "平局（两种顺序结论不一）",
    "B's win rate": "B 的胜率",
    "of": "，共",
    "decisive verdicts": "个分出胜负的判定",
    "no decisive verdict": "没有分出胜负的判定",
    "sign test": "符号检验",
    "both orders asked; position-inconsistent (a tie)": "两种顺序各问一次；顺序不一致（记为平局）",
    "each order preferred the answer shown first": "两次都偏向先出现的回答",
    "each order preferred the answer shown second": "两次都偏向后出现的回答",
    "one order called a tie": "一次判平局",
    "A first": "A 在前",
    "B first": "B 在前",
    # the large paged report.html
    "… {n} more characters: see report.json": "……另有 {n} 个字符：见 report.json",
    "Failures and errors": "未通过与出错",
    "showing the first {n} of {m}, in run order": "按运行顺序显示前 {n} 个，共 {m} 个",
    "no failed or errored samples": "没有未通过或出错的用例",
    "Slowest samples": "最慢的用例",
    "Costliest samples": "成本最高的用例",
    "no result has a cost": "没有结果带有成本",
    "no result has a duration": "没有结果带有耗时",
    "A large run: this page lists the failures and errors, the slowest and the costliest samples, "
    "and shows the full table {n} rows at a time.": "大规模运行：本页列出未通过与出错的用例、最慢和成本最高的用例，完整表格每次显示 {n} 行。",
    "page {n} of {m}": "第 {n} / {m} 页",
    "previous": "上一页",
    "next": "下一页",
    "loading the table…": "正在加载表格…",
    "This browser cannot read the table's embedded data (it needs DecompressionStream); "
    "the sections above still list the failures.": "此浏览器无法读取表格的内嵌数据（需要 DecompressionStream）；上方各节仍列出了失败的用例。",
    # experiment sections (terminal, Markdown, HTML)
    "Experiment": "实验",
    "experiment": "实验",
    "variant": "变体",
    "role": "角色",
    "control": "对照",
    "treatment": "实验组",
    "layer gate": "分层门禁",
    "cost, total": "总成本",
    "latency / sample": "每条延迟",
    "tokens in / out": "输入 / 输出 token",
    "measure": "指标",
    "change": "变化",
    "95% CI": "95% 置信区间",
    "wins / ties / losses": "胜 / 平 / 负",
    "effect size d_z": "效应量 d_z",
    "detects ≥": "可检出 ≥",
    "Pass rate": "通过率",
    "Regressed samples": "退步的用例",
    "All samples": "全部用例",
    "regressed": "退步",
    "Per-sample changes": "逐条变化",
    "run-to-run spread": "重复运行波动",
    "Triggering": "技能触发",
    "budget: ${spent} spent of ${limit}": "预算：已花费 ${spent}，上限 ${limit}",
    "budget reached: {n} run(s) not started (resume with --resume)": "已达预算：{n} 次运行未开始（用 --resume 继续）",
    "not run": "未运行",
    "Wilson interval": "Wilson 区间",
    "skill": "技能",
    "recall": "召回率",
    "false triggers": "误触发",
    "precision": "精确率",
    "missed": "漏触发",
    "fired when it must not": "不该触发却触发",
    "not installed": "未安装",
    "(not installed)": "（未安装）",
    "called a skill that is not installed": "调用了未安装的技能",
    "expected \\ fired": "期望 \\ 实际触发",
    "Routing: which skill fired": "路由：实际触发了哪个技能",
    "Trigger rates, treatment against control": "触发率：实验组对比对照组",
    "rate": "比率",
    "lost / gained": "失去 / 新增",
    "McNemar p": "McNemar p 值",
    "no negative controls: a description that fires on everything scores perfect recall": "没有反例对照：一个对什么都触发的描述也能得到满分召回率",
    "never fired on the samples that expect it": "在期望它触发的用例上从未触发",
    # the judge checked against people's labels (omk gold)
    "Judge against people": "评委对比人工标注",
    "Pass/fail against people": "通过/不通过：评委对比人工",
    "labels": "条标注",
    "raters": "位标注者",
    "95% interval": "95% 区间",
    "bias": "偏差",
    "largest disagreements": "分歧最大的用例",
    "both pass": "都通过",
    "judge pass, people fail": "评委通过、人工不通过",
    "judge fail, people pass": "评委不通过、人工通过",
    "both fail": "都不通过",
    "people among themselves": "标注者之间",
    "labels for samples the run does not have": "本次运行中没有的用例的标注",
    "below the bar against people": "与人工的一致性低于门槛",
    # --repeat: pass@k and pass^k (terminal, Markdown, HTML)
    "Repeats": "重复运行",
    "Repeats ({n} runs per sample)": "重复运行（每条用例 {n} 次）",
    "{n} runs per sample: {always} of {samples} samples passed every run, {flaky} flaky, {never} never passed": "每条用例运行 {n} 次：{samples} 条中 {always} 条每次都通过，{flaky} 条不稳定，{never} 条从未通过",
    "composite mean": "综合分均值",
    "pass@k and pass^k over the run (95% interval)": "整次运行的 pass@k 与 pass^k（95% 区间）",
    "{shown} of {total} samples shown (flaky ones first); all are in the report": "显示 {total} 条用例中的 {shown} 条（不稳定的在前）；全部见报告",
    "stddev": "标准差",
    "min": "最小",
    "max": "最大",
    # what an agent left in its workspace (terminal, Markdown, HTML)
    "workspace": "工作区",
    "workspace: no file created, changed or deleted": "工作区：没有文件被创建、修改或删除",
    "workspace|created": "新建",
    "workspace|changed": "修改",
    "workspace|deleted": "删除",
    "; and {n} more": "；另有 {n} 个",
    "file": "文件",
    "size": "大小",
    "content": "内容",
    "{n} characters": "{n} 个字符",
    "{n} characters (the start)": "{n} 个字符（开头部分）",
    # omk sample --from-session: samples recorded from Claude Code and Codex sessions
    "session files": "个会话文件",
    "{out}: {samples} recorded from {files}; review them before trusting them": "{out}：从 {files} 录制了 {samples}；使用前请逐条审阅",
    "no request in it": "其中没有用户请求",
    "over --limit {n}": "超出 --limit {n}",
    "the samples file would be larger than a samples file may be ({n} bytes)": "用例文件将超过允许的大小（{n} 字节）",
    # omk sample SKILL_DIR: samples drafted by a model (the lines on stderr and the summary)
    "draft|trigger": "触发探测",
    "draft|near-miss": "近似反例",
    "draft|task": "任务",
    "{kind} drafts: the model gave no answer: {reason}": "{kind}草稿：模型没有给出回答：{reason}",
    "{n} {kind} drafts: {errors}, again after the repair request": "{n} 条{kind}草稿：{errors}（修复请求之后依然如此）",
    "{errors} (still broken after one repair request)": "{errors}（一次修复请求之后仍有错误）",
    "{errors} (the repair request failed: {reason})": "{errors}（修复请求失败：{reason}）",
    "a {kind} draft: its prompt nearly duplicates {like}: {prompt}": "一条{kind}草稿：其提示词与 {like} 几乎相同：{prompt}",
    "not shown to the model: {file}": "未提供给模型：{file}",
    "dropped {line}": "已丢弃：{line}",
    "omk sample: no sample drafted from {skill_dir} ({total} asked for); nothing written": "omk sample：未能从 {skill_dir} 起草任何用例（请求 {total} 条）；未写入任何内容",
    "{count} of {total} {samples} drafted by {spec} from {skill}": "{spec} 从 {skill} 起草了 {count} 条用例（请求 {total} 条）",
    ", {n} repaired": "，其中 {n} 条经过修复",
    " (appended)": "（已追加）",
    "{out}: {summary}{appended}; review them before trusting them": "{out}：{summary}{appended}；使用前请逐条审阅",
    # omk sample --from-run: samples recorded from a run
    "left out {line}": "未录制：{line}",
    "omk eval {out} will not read {config}, which gave the run its target and skills; write the samples beside it: {command}":
        "omk eval {out} 不会读取 {config}（本次运行的目标和技能来自它）；请把用例写在它旁边：`{command}`",
    "workspace: {path} was modified {when}, after the run started ({started}); carried as it is now, which may not be what the agent saw":
        "工作区：{path} 在 {when} 被修改，晚于运行开始的时间（{started}）；按现在的内容带入，可能不是智能体当时看到的内容",
    "{out}: {samples} recorded from {run}": "{out}：从 {run} 录制了 {samples}",
    "errored in the run ({error})": "运行中出错（{error}）",
    "unknown error": "未知错误",
    "turn {n} of the conversation has no recorded answer": "对话的第 {n} 轮没有录制的回答",
    "no recorded answer": "没有记录到回答",
    # omk observe
    "request": "请求",
    "similarity to the description": "与技能描述的相似度",
    "to the nearest request that fired it": "与最接近的已触发请求的相似度",
    "fired instead": "实际触发",
    "description": "描述",
    "requests": "条请求",
    "fired in": "触发于",
    "of the requests where it was installed": "（已安装该技能的请求）",
    "(no SKILL.md found)": "（未找到 SKILL.md）",
    "Skill call": "Skill 调用",
    "SKILL.md read": "读取 SKILL.md",
    "$skill in the prompt": "提示中的 $skill",
    "in subagents": "子代理中",
    "seen as": "触发方式",
    "projects": "项目",
    "tool calls": "次工具调用",
    "denied": "被拒绝",
    "tool|failed": "失败",
    "after it fired": "触发之后",
    "requests with a failed or denied call after it fired": "触发后出现失败或被拒绝调用的请求",
    "candidate missed triggers (did not fire; text close to it), most likely first": "候选漏触发（未触发，但文本相近），可能性从高到低",
    "candidate false triggers (fired; text far from it), most likely first": "候选误触发（已触发，但文本无关），可能性从高到低",
    "subagent": "子代理",
    "since": "起始时间",
    "sessions": "个会话",
    "records of unknown types skipped": "跳过的未知类型记录",
    "Listed by the sessions, never fired, no SKILL.md found here (the CLI’s own skills, or removed ones)": "会话中列出、从未触发、本机也找不到 SKILL.md 的技能（CLI 自带的技能或已删除的技能）",
    "Rates are requests that fired the skill, with 95% Wilson intervals; candidates are ranked by text similarity (docs/skills.md).": "比率为触发该技能的请求占比，附 95% Wilson 区间；候选按文本相似度排序（docs/skills.md）。",
    "No skill is installed or fired in these sessions; name skill folders with --skills DIR.": "这些会话中没有已安装或触发的技能；请用 --skills DIR 指定技能文件夹。",
    "near-duplicates left out": "条近似重复已略去",
    "trigger probes written": "已写入触发探针",
    "no session files found; name session files or folders (e.g. ~/.claude/projects ~/.codex/sessions)": "未找到会话文件；请指定会话文件或文件夹（例如 ~/.claude/projects ~/.codex/sessions）",
    # omk eval --dry-run (omk/cli/eval_cmd.py)
    "dry run: nothing was called and no program started; {n} sample run(s) to do": "试运行：未调用任何接口，也未启动任何程序；待运行 {n} 次用例",
    " over {n} variants": "，共 {n} 个变体",
    "{calls} call(s), ~{input} prompt + ~{output} output tokens": "{calls} 次调用，约 {input} 个提示词元 + 约 {output} 个输出词元",
    "no known price": "价格未知",
    "estimated cost: {total}": "预估花费：{total}",
    "unknown (no call of this run has a known price; see below)": "未知（本次运行没有一次调用有已知价格；见下文）",
    "at least ${cost} (the calls below are not counted)": "至少 ${cost}（下列调用未计入）",
    "not counted (no known price; set {settings} in omk.yaml, USD per 1M tokens, e.g. `{example}`)": "未计入（价格未知；请在 omk.yaml 中设置 {settings}，单位为每百万词元美元，例如 `{example}`）",
    "not counted (no price before it runs: the run counts the cost_usd the target reports)": "未计入（运行前没有价格：运行时计入目标报告的 cost_usd）",
    "prompt tokens counted with omk's word tokenizer; output tokens from the cache for {cached} target call(s), {n} per call otherwise": "提示词元按 omk 的分词器计数；{cached} 次目标调用的输出词元取自缓存，其余每次按 {n} 个计",
    "{n} URL(s) in prompts not fetched: their content is not counted": "提示词中的 {n} 个 URL 未抓取：其内容未计入",
    "not checked without running it: {what}": "不运行就无法检查：{what}",
    "warning: {message}; a run stops here (a dry run sends nothing, so it needs no key)": "警告：{message}；真正运行时会在此停止（试运行不发送任何请求，因此不需要密钥）",
    # omk init, omk gold init
    "wrote {files} in {folder}; run: {command}": "已在 {folder} 写入 {files}；运行：`{command}`",
    "{out}: {count} samples to label (score 1-5, dimensions, pass; rater: your name)": "{out}：{count} 条用例待标注（score 1-5、dimensions、pass；rater 填你的名字）",
}


def t(text: str, lang: str = "en", context: str | None = None) -> str:
    """`context` tells apart one English word said of two things (`pairwise|skipped`)."""
    if lang != "zh":
        return text
    return ZH.get(f"{context}|{text}", ZH.get(text, text)) if context else ZH.get(text, text)


def counted(n: int, singular: str, plural: str, lang: str = "en") -> str:
    """`1 sample`, `3 samples` in English; Chinese has one form (`t(plural)`: `3 条用例`)."""
    if lang == "zh":
        return f"{n} {t(plural, lang)}"
    from omk.io.textsafe import plural as english

    return english(n, singular, plural)


DRIFT_WITH = "mock drift: the agent now calls {tool} with {input}, an input the recording never had"
DRIFT_NEW = "mock drift: the agent now calls {tool}, which the recording never did"
_DRIFT_WITH = re.compile(r"mock drift: the agent now calls (?P<tool>.+?) with (?P<input>.*), an input the recording never had", re.S)
_DRIFT_NEW = re.compile(r"mock drift: the agent now calls (?P<tool>.+), which the recording never did", re.S)
UNSUPPORTED = "the agent called {tool}, which {target} does not offer"
REFUSED = "the agent CLI refused {tool} before its recorded mock could answer ({reason})"
_REFUSED = re.compile(r"the agent CLI refused (?P<tool>.+?) before its recorded mock could answer \((?P<reason>.*)\)", re.S)
_UNSUPPORTED = re.compile(r"the agent called (?P<tool>.+?), which (?P<target>\S+) does not offer", re.S)
RUN_NOT_HONOURED = "mock {key} says run: true, which {target} cannot do (omk answers its tools itself): its return answered"
RUN_NOT_HONOURED_PATTERN = _RUN_NOT_HONOURED = re.compile(r"mock (?P<key>\S+) says run: true, which (?P<target>\S+) cannot do \(omk answers its tools itself\): its return answered")


def note(text: str, lang: str = "en") -> str:
    """A trace's note as `lang` says it: report.json keeps omk's English (a mock drift note,
    omk/domain/mock_defs.py, is read back and said again); a note omk does not know stays as written."""
    if lang != "zh":
        return text
    known = ((_DRIFT_WITH, DRIFT_WITH), (_DRIFT_NEW, DRIFT_NEW), (_UNSUPPORTED, UNSUPPORTED), (_REFUSED, REFUSED), (_RUN_NOT_HONOURED, RUN_NOT_HONOURED))
    for pattern, template in known:
        if (found := pattern.fullmatch(text)) is not None:
            return t(template, lang).format(**found.groupdict())
    return text


def shard_label(shard: ShardInfo, lang: str = "en") -> str:
    """`shard 2/4`, `merged: 4 of 4 shards`, `partial merge: 3 of 4 shards, missing 2` (as
    `ShardInfo.label()`), in `lang`."""
    if lang != "zh":
        return shard.label()
    if shard.index is not None:
        return t("shard {index}/{count}", lang).format(index=shard.index, count=shard.count)
    if shard.missing:
        from omk.records.shard import number_ranges

        missing = number_ranges(shard.missing)
        return t("partial merge: {merged} of {count} shards, missing {missing}", lang).format(merged=len(shard.merged), count=shard.count, missing=missing)
    return t("merged: {merged} of {count} shards", lang).format(merged=len(shard.merged), count=shard.count)


_VERDICT_LABEL = re.compile(r"(\s*)(Verdict|Layer winners|Sample size|Stability|Resources): ")


def verdict_line(line: str, lang: str = "en") -> str:
    """A line of an experiment's verdict (omk/stats/verdict.py) with its label in `lang`; what
    follows the label is the verdict's own text, as report.json keeps it."""
    if lang != "zh":
        return line
    if (found := _VERDICT_LABEL.match(line)) is None:
        indent = line[: len(line) - len(line.lstrip())]
        return indent + verdict_text(line.lstrip(), lang)
    return f"{found.group(1)}{t(found.group(2), lang)}：{verdict_text(line[found.end():], lang)}"


# The verdict's own text (omk/stats/verdict.py), kept in English in report.json, said again in
# Chinese phrase by phrase: variant names, numbers and flags stay as they are. Longer phrases first.
_ACTIONS_ZH: dict[str, str] = {
    "SHIP": "可以发布", "INVESTIGATE": "需要调查", "DO NOT SHIP": "不要发布", "NO CALL": "无法判断",
    "INSUFFICIENT DATA": "数据不足", "ADD A CONTROL": "请加对照",
}  # fmt: skip
_VERDICT_ZH: tuple[tuple[str, Said], ...] = (
    (r"every sample scored the same on both arms: no spread to measure; the interval is exact", "两组中每条用例得分都相同：没有可测量的波动；区间是精确的"),
    (r"not measured \(rerun with --repeat 2 or more\)", "未测量（用 --repeat 2 或更多重新运行）"),
    (r"recovers from broken control", "对照未过门槛，实验组恢复"),
    (r"clean win", "明确胜出"),
    (r"practically tiny regression", "实际上微小的退步"),
    (r"practically tiny", "实际上微小"),
    (r"significant regression", "显著退步"),
    (r"fails layer gate, as control does", "与对照一样未过分层门槛"),
    (r"broke layer gate", "未过分层门槛"),
    (r"no sample ran on both (\S+) and (\S+)", r"没有用例同时在 \1 和 \2 上运行"),
    (r"no sample ran on both arms", "没有用例在两组上都运行"),
    (r"CI spans 0, n=(\d+) < (\d+)", r"置信区间跨越 0，n=\1 < \2"),
    (r"CI spans 0, within ±([\d.]+)", r"置信区间跨越 0，在 ±\1 之内"),
    (r"CI spans 0", "置信区间跨越 0"),
    (r"no CI, n=", "无置信区间，n="),
    (r"(\S+) beats (\S+) by ([+-][\d.]+) on the composite, its 95% CI above 0\.", r"\1 的综合分比 \2 高 \3，95% 置信区间在 0 之上。"),
    (r"(\S+) scores ([\d.]+) below (\S+); (\d+) samples regressed\.", r"\1 比 \3 低 \2 分；\4 条用例退步。"),
    (r"no difference between (\S+) and (\S+) was detected", r"未检测到 \1 与 \2 之间的差异"),
    (r"; this set detects differences of ([\d.]+) or more", r"；此用例集能发现 \1 或更大的差异"),
    (r"only (\d+) samples scored on both arms; add samples", r"两组都有得分的用例只有 \1 条；请增加用例"),
    (r"(\d+) samples scored on both arms; about (\d+) would detect a difference of ([\d.]+)", r"两组都有得分的用例 \1 条；约需 \2 条才能发现 \3 的差异"),
    (r"(\d+) samples scored on both arms", r"两组都有得分的用例 \1 条"),
    (r"(\d+) of (\d+) samples errored", r"\2 条用例中有 \1 条出错"),
    (r"; fix them and rerun", "；修复后重新运行"),
    (r"the pass rate fell from (\S+) to (\S+) \((\d+) samples lost, (\d+) gained\)", r"通过率从 \1 降到 \2（失去 \3 条，新增 \4 条）"),
    (r"pass rate (\S+) → (\S+), McNemar", r"通过率 \1 → \2，McNemar"),
    (r"(\S+) costs (\d+)% more per sample than (\S+), more than the ([\d.]+)% allowed", r"\1 每条用例的花费比 \3 高 \2%，超过允许的 \4%"),
    (r"(\S+) scores higher but a layer is below the gate", r"\1 得分更高，但有一层低于门槛"),
    (r"the gain is real but smaller than the trivial threshold ([\d.]+)", r"提升确实存在，但小于可忽略阈值 \1"),
    (r"(\S+) is slightly worse, by less than the trivial threshold ([\d.]+)", r"\1 略差，差距小于可忽略阈值 \2"),
    (r"single variant, three-layer gate PASS @ threshold ([\d.]+)", r"单一变体，三层门槛通过（阈值 \1）"),
    (r"single variant, three-layer gate FAIL — see ci output", "单一变体，三层门槛未通过：见 CI 输出"),
    (r"one variant only: run a control next to it to learn whether it is better\.", "只有一个变体：在旁边运行一个对照，才能知道它是否更好。"),
    (r"n=(\d+) paired", r"n=\1 配对"),
    (r"\(one variant\)", "（单一变体）"),
    (r", detects ≥ ([\d.]+) at (\d+)% power", r"，在 \2% 检验力下可发现 ≥ \1 的差异"),
    (r"\((\d+) left out: (\d+) errored\)", r"（\1 条未计入：\2 条出错）"),
    (r"; run-to-run spread ", "；运行间波动 "),
    (r"\((stable|medium|unstable), runs=", lambda m: f"（{ {'stable': '稳定', 'medium': '中等', 'unstable': '不稳定'}[m.group(1)]}，runs="),
    (r"([+-][\d.]+) composite for ", r"综合分 \1，代价："),
    (r"composite n/a for ", "综合分 n/a，代价："),
    (r"([+-]\d+%) (tokens|cost|latency)\b", lambda m: f"{ {'tokens': '词元数', 'cost': '花费', 'latency': '延迟'}[m.group(2)]} {m.group(1)}"),
    (r"(?:(?<=^)|(?<=· ))(fact|behavior|judge) (\S+) \(", lambda m: f"{ZH[m.group(1)] if m.group(1) in ZH else m.group(1)} {'平局' if m.group(2) == 'tie' else m.group(2)} ("),
    # why a `--require` policy is met or not (omk/stats/verdict.py, evaluate_policy)
    (r"single variant: the layer gate passed", "单一变体：分层门槛已通过"),
    (r"single variant: the layer gate failed", "单一变体：分层门槛未通过"),
    (r"every treatment shows progress", "每个实验组都显示出进步"),
    (r"no regression detected", "未检测到退步"),
    (r"^(progress|no-regress) not met: ", r"未满足 \1："),
    (r"^(SHIP|INVESTIGATE|DO NOT SHIP|NO CALL|INSUFFICIENT DATA|ADD A CONTROL) — ", lambda m: f"{_ACTIONS_ZH[m.group(1)]} — "),
)
_VERDICT_COMPILED = compiled(_VERDICT_ZH)


def verdict_text(text: str, lang: str = "en") -> str:
    """A verdict's headline, recommendation or context line (what follows its label) in `lang`."""
    if lang != "zh":
        return text
    return rewrite(text, _VERDICT_COMPILED)


# A failed check's line (omk/report/reasons.py, the assertions' messages), kept in English in
# report.json, said again in Chinese phrase by phrase; what the output or the sample says (quoted)
# stays as it is. The checks' own messages are in omk/report/i18n_checks.py.
_REASON_ZH: tuple[tuple[str, Said], ...] = (
    (r"^(\s*)below threshold ([\d.]+): ", r"\1低于阈值 \2："),
    (r"nothing was graded \(no assertion ran and no judge score\)", "没有任何评分（没有断言运行，也没有评委分数）"),
    (r" \(inverted by not\)", "（被 not 取反）"),
    (r"passed, so `not` fails it", "通过了，因此 `not` 使其失败"),
    (r"^(\s*)turn (\d+): error: ", r"\1第 \2 轮：错误："),
    (r"^(\s*)turn (\d+): ", r"\1第 \2 轮："),
    (r"^(\s*)error: ", r"\1错误："),
    (r" \[metric ([^\]]*)\]$", r"［指标 \1］"),
    (r"^(\s*)(\S+): metric (\S+)$", r"\1\2：指标 \3"),
    (r"^(\s*(?:第 \d+ 轮：)?)judge (\S+) (\d+(?:\.\d+)?)/5(: )?", lambda m: f"{m.group(1)}评委 {m.group(2)} {m.group(3)}/5{'：' if m.group(4) else ''}"),
    (r"nothing was graded \(no turn had an assertion that ran or a judge score\)", "没有任何评分（没有一轮有断言运行或评委分数）"),
)
_REASON_COMPILED = compiled(_REASON_ZH)


def reason_text(line: str, lang: str = "en") -> str:
    """A failed check's line in `lang` (its frame and the check's message; quoted text stays)."""
    if lang != "zh":
        return line
    return check_text(rewrite(line, _REASON_COMPILED), lang)


def check_text(message: str, lang: str = "en") -> str:
    """A check's message (omk/assertions, the judge-scored types) in `lang`; quoted text, names
    of tools, files and skills stay as they are."""
    if lang != "zh":
        return message
    from omk.report.i18n_checks import check_text_zh

    return check_text_zh(message)


# The doctor's findings other than advice (omk/doctor/diagnostics.py), kept in English in its
# JSON, said again in Chinese phrase by phrase; names from the samples stay as they are.
_DOCTOR_ZH: tuple[tuple[str, Said], ...] = (
    (r"^declared CLI ('.*') is not on PATH$", r"声明的命令行工具 \1 不在 PATH 上"),
    (r"^declared file ('.*') does not exist under (.+)$", r"声明的文件 \1 在 \2 下不存在"),
    (r"^all (\d+) graded samples scored between ([\d.]+) and ([\d.]+): the set does not separate good answers from bad ones$",
     r"全部 \1 条有评分的用例得分都在 \2 到 \3 之间：用例集无法区分好坏回答"),
    (r"^(latency|cost|tokens) ([\d.]+)× the median \((.+) vs median (.+)\)$",
     lambda m: f"{ {'latency': '延迟', 'cost': '花费', 'tokens': '词元数'}[m.group(1)]}是中位数的 {m.group(2)} 倍（{m.group(3)}，中位数 {m.group(4)}）"),
    (r"^sample has no assertion, no rubric and no dimensions: it can never pass$", "用例没有断言、评分标准或评分维度：永远不会通过"),
    (r"^capability ('.*') has only (\d+) samples? \(thin at ≤ (\d+) of (\d+)\)$", r"能力 \1 只有 \2 条用例（\4 条中 ≤ \3 条即为单薄）"),
    (r"^prompt nearly duplicates ('.*') \(ROUGE-1 ([\d.]+)\)$", r"提示词与 \1 几乎重复（ROUGE-1 \2）"),
    (r"^mock (\S+) is never checked by a mock_hit assertion$", r"模拟 \1 从未被 mock_hit 断言检查"),
    (r"^judge scores disagree \(stddev ([\d.]+) ≥ ([\d.]+)\): make the rubric more specific$", r"评委分数不一致（标准差 \1 ≥ \2）：请把评分标准写得更具体"),
    (r"^errored in (\d+) of (\d+) runs?: ", r"\2 次运行中有 \1 次出错："),
    (r'^unknown field ("[^"]*") ignored, at (\S+) \((.*)\)(.*); rename it ("[^"]*") to keep it as a note, or remove it \((`[^`]*`) refuses it\)$',
     r"未知字段 \1 已忽略，位于 \2（\3）\4；改名为 \5 可作为备注保留，或删除它（\6 会拒绝它）"),
    (r"^skill (\S+): (\d+) checks? expects? it to fire and none expects it to stay quiet; a description that fires on everything "
     r"scores perfect recall\. Add near-miss prompts with (.*)$",
     r"技能 \1：\2 条检查期望它触发，没有一条期望它保持安静；一个对什么都触发的描述也能得到满分召回率。请加入近似但不该触发的提示词，写法为 \3"),
)  # fmt: skip
_DOCTOR_COMPILED = compiled(_DOCTOR_ZH)


def doctor_text(message: str, lang: str = "en") -> str:
    """A doctor finding's message in `lang` (the kinds above; any other stays as written)."""
    if lang != "zh":
        return message
    return rewrite(message, _DOCTOR_COMPILED)


# What a dry run left unchecked because it starts no program (omk/io/process.py `may_start`).
_NOT_RUN_ZH: tuple[tuple[str, str], ...] = (
    (r"^the (\S+) CLI's version \((.*)\)$", r"\1 命令行工具的版本（\2）"),
    (r"^(.+) \(a program\)$", r"\1（一个程序）"),
    (r"^the samples' git commit$", "用例所在的 git 提交"),
)
_NOT_RUN_COMPILED = compiled(_NOT_RUN_ZH)


def not_run_text(what: str, lang: str = "en") -> str:
    """One check a dry run did not make (`the claude CLI's version (…/claude --version)`) in `lang`."""
    if lang != "zh":
        return what
    return rewrite(what, _NOT_RUN_COMPILED)


# A missing API key a dry run let pass (omk/io/process.py `key_missing`): the target's or judge's
# own message, said again in `lang`; the spec and the variable's name stay.
_KEY_ZH: tuple[tuple[str, Said], ...] = (
    (r"^(target|judge) ('[^']*'): no API key: set (\S+) ?", lambda m: f"{'目标' if m.group(1) == 'target' else '评委'} {m.group(2)}：没有 API 密钥：请设置 {m.group(3)}"),
    (r"\(a local base URL such as (\S+) needs none\)", r"（\1 这样的本地 base URL 不需要密钥）"),
    (r"\(a local base URL needs none\)", "（本地 base URL 不需要密钥）"),
    (r"\(omk runs the CLI without your login\)", "（omk 运行命令行工具时不使用你的登录）"),
    (r"; or ANTHROPIC_AUTH_TOKEN, or CLAUDE_CODE_USE_BEDROCK=1 / CLAUDE_CODE_USE_VERTEX=1 with their cloud credentials, or `claude: \{user_config: true\}` in omk.yaml to use your own login",
     "；或设置 ANTHROPIC_AUTH_TOKEN，或 CLAUDE_CODE_USE_BEDROCK=1 / CLAUDE_CODE_USE_VERTEX=1 并配好云端凭据，或在 omk.yaml 中写 `claude: {user_config: true}` 使用你自己的登录"),
)  # fmt: skip
_KEY_COMPILED = compiled(_KEY_ZH)


def key_text(message: str, lang: str = "en") -> str:
    """A missing key's message (`target 'openai:gpt-4o': no API key: set OPENAI_API_KEY …`) in `lang`."""
    if lang != "zh":
        return message
    return rewrite(message, _KEY_COMPILED)
