"""CLI text in English, translated with `--lang zh`."""

from __future__ import annotations

ZH = {
    "Results": "结果",
    "sample": "用例",
    "status": "状态",
    "composite": "综合分",
    "pass": "通过",
    "error": "错误",
    "Failures": "失败详情",
    "samples": "条用例",
    "passed": "通过",
    "failed": "未通过",
    "errored": "出错",
    "threshold": "阈值",
    "cost": "成本",
    "report": "报告",
    "gate passed": "门禁通过",
    "gate failed": "门禁未通过",
    "nothing was graded (no assertion ran and no judge score)": "没有可评分的内容（无断言执行，也无评委分）",
    "{n} judge item(s) skipped: no judge configured (use --judge)": "{n} 项评委打分被跳过：未配置评委（使用 --judge）",
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
    "repeat": "重复",
    "latency": "延迟",
    "all": "全部",
    "filter": "筛选",
    "filter by sample id, capability…": "按用例 ID、能力筛选…",
    "fact": "事实层",
    "behavior": "行为层",
    "judge skipped": "评委已跳过",
    "Prompt": "提示词",
    "Output": "输出",
    "Assertions": "断言",
    "Judge": "评委",
    "Trace": "轨迹",
    "turns": "轮次",
    "tokens in": "输入 token",
    "tokens out": "输出 token",
}


def t(text: str, lang: str = "en") -> str:
    return ZH.get(text, text) if lang == "zh" else text
