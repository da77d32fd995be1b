"""Benchmarks phishbloom's Python package against its peers, in one run on this machine.

Each timing is the best of 3 runs (the machine is shared and noisy):

1. ``phishbloom.BloomFilter`` vs ``rbloom.Bloom`` at equal bits per key: N adds (``add`` per key
   in a Python loop), N lookups (``key in bf``, half present) and the batch ``bf.update(keys)``.
2. The same adds and lookups vs ``pybloom_live.BloomFilter`` on min(N, 10**6) keys, and vs seed
   000's own class (bitarray + SHA-256) on min(N, 10**5) keys.
3. ``Blocklist.check_many`` (Arrow in, a RecordBatch out) vs ``phishbloom check --threads T``
   reading the same URL lines on standard input (its start-up timed too), T = 2 and 1.

It ends with a markdown table (row, phishbloom, peer, ratio, goal, met?). From the repo's root:

    python python/bench.py                            # N = 10**7 keys, 10**6 URLs
    python python/bench.py --keys 10000 --urls 10000  # a quick check that it runs
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import math
import os
import random
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
if sys.path and Path(sys.path[0]).resolve() == HERE:
    del sys.path[0]  # python/phishbloom is the source, without its compiled module: not it
import phishbloom  # noqa: E402 — the installed package

REPO = HERE.parent
UT1 = Path(os.environ.get("PHISHBLOOM_DATA", REPO.parent / "shared" / "data")) / "ut1"
FP_RATE = 0.01
REPEATS = 3


@dataclass
class Row:
    name: str
    ours: str
    peer: str
    ratio: float
    goal: str  # "<= x" or ">= x"

    def met(self) -> bool:
        op, value = self.goal.split()
        return self.ratio <= float(value) if op == "<=" else self.ratio >= float(value)


def peer(module: str):
    """The peer module, or None after saying loudly that its rows are skipped."""
    try:
        return importlib.import_module(module)
    except ImportError as error:
        print(f"\n!!! PEER MISSING: {module} ({error}) — its rows are SKIPPED !!!\n")
        return None


def best_of(run, setup=lambda: None) -> float:
    """The fastest of REPEATS runs of ``run(setup())``, in seconds; setup is not timed."""
    best = math.inf
    for _ in range(REPEATS):
        state = setup()
        start = time.perf_counter()
        run(state)
        best = min(best, time.perf_counter() - start)
    return best


def add_each(bf, keys) -> None:
    add = bf.add
    for key in keys:
        add(key)


def look_up_each(bf, probes) -> None:
    for key in probes:
        key in bf  # noqa: B015 — the lookup is what is timed


def workload(n: int) -> tuple[list[str], list[str]]:
    """n distinct keys, and n probes: every other one a key, the rest absent."""
    keys = [f"https://site{i}.example/path" for i in range(n)]
    probes = [keys[i] if i % 2 == 0 else f"https://absent{i}.example/path" for i in range(n)]
    return keys, probes


def adds_and_lookups(make, keys, probes) -> tuple[float, float]:
    """Best seconds of the adds into a fresh filter, and of the lookups into a full one."""
    adds = best_of(lambda bf: add_each(bf, keys), make)
    full = make()
    add_each(full, keys)
    return adds, best_of(lambda _: look_up_each(full, probes))


def ns(seconds: float, ops: int) -> str:
    return f"{seconds / ops * 1e9:,.0f} ns/op"


def rbloom_rate_for(rbloom, n: int, bits: int) -> float:
    """The rate at which rbloom (which takes no size) sizes a filter for n keys nearest `bits`."""
    lo, hi = 1e-15, 0.5  # a lower rate, more bits
    for _ in range(64):
        mid = math.sqrt(lo * hi)
        lo, hi = (mid, hi) if rbloom.Bloom(n, mid).size_in_bits > bits else (lo, mid)
    return min((lo, hi), key=lambda p: abs(rbloom.Bloom(n, p).size_in_bits - bits))


def vs_rbloom(n: int) -> list[Row]:
    rbloom = peer("rbloom")
    if rbloom is None:
        return []
    keys, probes = workload(n)
    bits = phishbloom.BloomFilter(n, FP_RATE).size_in_bits
    rate = rbloom_rate_for(rbloom, n, bits)
    makers = {
        "phishbloom": lambda: phishbloom.BloomFilter(n, FP_RATE),
        "rbloom": lambda: rbloom.Bloom(n, rate),  # its default hash_func: Python's hash()
    }
    adds, lookups, updates = {}, {}, {}
    for name, make in makers.items():
        print(f"[1] {name}: {make().size_in_bits / n:.3f} bits/key, {make()!r}")
        adds[name], lookups[name] = adds_and_lookups(make, keys, probes)
        updates[name] = best_of(lambda bf: bf.update(keys), make)
    return [
        Row(f"{label} vs rbloom, {n:,} keys (time ratio)",
            ns(times["phishbloom"], n), ns(times["rbloom"], n),
            times["phishbloom"] / times["rbloom"], "<= 1.0")
        for label, times in [("add, loop", adds), ("`in`, loop", lookups),
                             ("update(keys)", updates)]
    ]


def vs_slow_peer(label: str, make_peer, n: int, goal: str) -> Row:
    """Adds then lookups of n keys, phishbloom's against a pure-Python peer's: the speed-up."""
    keys, probes = workload(n)
    ours = sum(adds_and_lookups(lambda: phishbloom.BloomFilter(n, FP_RATE), keys, probes))
    theirs = sum(adds_and_lookups(make_peer, keys, probes))
    return Row(f"add + `in`, loop vs {label}, {n:,} keys (speed-up)",
               ns(ours, 2 * n), ns(theirs, 2 * n), theirs / ours, goal)


class SeedBloomFilter:
    """Seed 000's BloomFilter, as it is written in /work/shared/seeds/000_097c0440c7af5d6e.txt
    (section 3.2): m and k from n and p, a bitarray, and position i of a URL is
    int(sha256(url + str(i)).hexdigest(), 16) % m."""

    def __init__(self, n, p):
        from bitarray import bitarray

        self.n = n
        self.p = p
        self.m = math.ceil(-(n * math.log(p)) / (math.log(2) ** 2))
        self.k = math.ceil((self.m / n) * math.log(2))
        self.bit_array = bitarray(self.m)
        self.bit_array.setall(0)

    def _hashes(self, url):
        hashes = []
        for i in range(self.k):
            hash_val = int(hashlib.sha256((url + str(i)).encode()).hexdigest(), 16)
            hashes.append(hash_val % self.m)
        return hashes

    def add(self, url):
        for idx in self._hashes(url):
            self.bit_array[idx] = 1

    def query(self, url):
        return all(self.bit_array[idx] for idx in self._hashes(url))

    __contains__ = query  # not in the seed: lets the same `key in bf` loop time it


def url_lines(count: int, rng: random.Random) -> list[str]:
    """count URLs: about 10% on hosts or paths UT1's phishing and malware lists hold, the rest
    random hosts and paths."""
    listed = [line.strip() for folder in ("phishing", "malware") for name in ("domains", "urls")
              if (UT1 / folder / name).exists()
              for line in (UT1 / folder / name).read_text(errors="replace").splitlines()
              if line.strip() and not line.startswith("#")]
    letters = "abcdefghijklmnopqrstuvwxyz0123456789"
    word = lambda: "".join(rng.choices(letters, k=rng.randint(4, 12)))  # noqa: E731
    return [f"http://{rng.choice(listed)}" if rng.random() < 0.1
            else f"https://{word()}.{rng.choice(('com', 'net', 'org', 'fr'))}/{word()}/{word()}"
            for _ in range(count)]


def binary(given: str | None) -> str | None:
    default = REPO / "target" / "release" / "phishbloom"
    path = given or (str(default) if default.exists() else shutil.which("phishbloom"))
    if path is None:
        print("\n!!! PEER MISSING: no phishbloom binary (give --phishbloom PATH) — check_many"
              " rows are SKIPPED !!!\n")
    return path


def vs_cli(exe: str, count: int, rng: random.Random) -> list[Row]:
    if (pa := peer("pyarrow")) is None:
        return []
    import pyarrow.compute as pc

    with tempfile.TemporaryDirectory(prefix="phishbloom-bench-") as work:
        work = Path(work)
        urls = url_lines(count, rng)
        text = work / "urls.txt"
        text.write_text("\n".join(urls) + "\n")
        listfile = work / "bench.bloom"
        subprocess.run([exe, "build", "--ut1", str(UT1 / "phishing"), "--ut1",
                        str(UT1 / "malware"), "-o", str(listfile)], check=True,
                       stdout=subprocess.DEVNULL)
        blocklist = phishbloom.Blocklist.open(listfile)
        column = pa.array(urls)  # Arrow in: made once, outside the timing
        listed = pc.sum(blocklist.check_many(column).column("listed")).as_py()
        print(f"[3] {count:,} URLs, {listed:,} listed by {blocklist!r}")
        rows = []
        for threads in (2, 1):
            # The same cores for both: `check` reads and writes on threads of its own beside
            # its checkers, which would otherwise get a core check_many does not have.
            cores = sorted(os.sched_getaffinity(0))[:threads]
            ours = best_of(lambda _: pinned(cores, lambda: blocklist.check_many(column, threads=threads)))
            theirs = best_of(lambda _: check_cli(exe, listfile, text, threads, cores))
            rows.append(Row(f"check_many vs `phishbloom check`, {threads} thread(s) "
                            f"(lines/s ratio)", f"{count / ours / 1e6:.2f} M lines/s",
                            f"{count / theirs / 1e6:.2f} M lines/s", theirs / ours, ">= 0.8"))
        return rows


def pinned(cores: list[int], run):
    """Runs ``run()`` with this process on ``cores`` only."""
    every = os.sched_getaffinity(0)
    os.sched_setaffinity(0, cores)
    try:
        return run()
    finally:
        os.sched_setaffinity(0, every)


def check_cli(exe: str, listfile: Path, text: Path, threads: int, cores: list[int]) -> None:
    taskset = ["taskset", "-c", ",".join(map(str, cores))] if shutil.which("taskset") else []
    with text.open("rb") as lines:
        done = subprocess.run([*taskset, exe, "check", "--threads", str(threads), str(listfile)],
                              stdin=lines, stdout=subprocess.DEVNULL)
    if done.returncode not in (0, 1):  # 0: some listed, 1: none
        raise RuntimeError(f"phishbloom check exited with {done.returncode}")


def table(rows: list[Row]) -> str:
    lines = ["| row | phishbloom | peer | ratio | goal | met? |", "|---|---|---|---|---|---|"]
    lines += [f"| {r.name} | {r.ours} | {r.peer} | {r.ratio:.2f} | {r.goal} | "
              f"{'yes' if r.met() else 'NO'} |" for r in rows]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--keys", type=int, default=10**7, help="keys N (default 10**7)")
    parser.add_argument("--urls", type=int, default=10**6, help="URL lines (default 10**6)")
    parser.add_argument("--phishbloom", help="the CLI binary (default target/release/phishbloom, "
                                             "else phishbloom on PATH)")
    args = parser.parse_args()
    print("$", shlex.join([sys.executable, *sys.argv]))
    rng = random.Random(20240501)

    rows = vs_rbloom(args.keys)
    if (pybloom_live := peer("pybloom_live")) is not None:
        n = min(args.keys, 10**6)
        rows.append(vs_slow_peer("pybloom_live", lambda: pybloom_live.BloomFilter(n, FP_RATE),
                                 n, ">= 1.0"))
    if peer("bitarray") is not None:
        n = min(args.keys, 10**5)
        rows.append(vs_slow_peer("seed 000's class", lambda: SeedBloomFilter(n, FP_RATE),
                                 n, ">= 30"))
    if (exe := binary(args.phishbloom)) is not None:
        rows += vs_cli(exe, args.urls, rng)
    print()
    print(table(rows))


if __name__ == "__main__":
    main()
