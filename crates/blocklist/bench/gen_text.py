#!/usr/bin/env python3
"""Writes the inputs of the `scan` benchmarks (crates/blocklist/bench/callgrind, scan-memory).

usage: gen_text.py KEYWORDS_OUT COUNT DOC_OUT MEGABYTES [CHINESE_FRACTION]

KEYWORDS_OUT gets COUNT keyword lines (one to three words: Latin words from a made-up vocabulary,
Chinese words of two to four Han characters); DOC_OUT gets one text document of MEGABYTES MB,
sentences of the same vocabulary (so some keywords are found), a CHINESE_FRACTION of its words
Chinese (default 0.2). Reproducible (seeded); written as generated, so memory stays small.
"""

import random
import sys


def main():
    keywords_out, count, doc_out, megabytes = sys.argv[1], int(sys.argv[2]), sys.argv[3], float(sys.argv[4])
    chinese = float(sys.argv[5]) if len(sys.argv) > 5 else 0.2
    rng = random.Random(23)
    letters = "abcdefghijklmnopqrstuvwxyz"
    latin = ["".join(rng.choice(letters) for _ in range(rng.randrange(3, 10))) for _ in range(50_000)]
    han = ["".join(chr(rng.randrange(0x4E00, 0x9FA5)) for _ in range(rng.randrange(2, 5))) for _ in range(50_000)]

    def word():
        return rng.choice(han) if rng.random() < chinese else rng.choice(latin)

    with open(keywords_out, "w", encoding="utf-8") as f:
        lines = []
        for _ in range(count):
            lines.append(" ".join(word() for _ in range(rng.randrange(1, 4))))
            if len(lines) == 100_000:
                f.write("\n".join(lines) + "\n")
                lines.clear()
        if lines:
            f.write("\n".join(lines) + "\n")
    target = int(megabytes * 1_000_000)
    written = 0
    with open(doc_out, "w", encoding="utf-8") as f:
        while written < target:
            sentences = []
            for _ in range(1000):
                words = [word() for _ in range(rng.randrange(5, 20))]
                words[0] = words[0].capitalize()
                sentences.append(" ".join(words) + rng.choice([". ", "! ", "? ", ".\n"]))
            block = "".join(sentences).encode("utf-8")[: target - written]
            text = block.decode("utf-8", errors="ignore")
            f.write(text)
            written += len(text.encode("utf-8"))


if __name__ == "__main__":
    main()
