#!/usr/bin/env python3
"""Writes the URL lines of the `check` benchmark (crates/blocklist/bench/check-vs-awk).

usage: gen_urls.py DATA_DIR LINES OUT

A shuffled mix, reproducible (seeded): a third URLs below UT1 `phishing` and `malware` entries
(with a `www.` prefix, a sub-path and a query — listed with URL semantics), a third the
dataset's URLs as they are (`url` column, every label; some with upper case, `%` escapes,
`#` fragments, ports), and a third random URLs of random hosts (clean). The lines are
written as they are generated, so memory stays small whatever LINES is.
"""

import csv
import random
import string
import sys


def main():
    data, lines, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    rng = random.Random(15)
    entries = []
    for category in ("phishing", "malware"):
        with open(f"{data}/ut1/{category}/urls", encoding="utf-8", errors="replace") as f:
            entries.extend(line.strip() for line in f if line.strip())
    with open(f"{data}/dataset.csv", encoding="utf-8", errors="replace", newline="") as f:
        rows = csv.reader(f)
        column = next(rows).index("url")
        dataset = [row[column] for row in rows if len(row) > column and row[column]]
    # Cleanup of the csv reader's quoting: a URL line must not hold a newline.
    dataset = [u.replace("\n", "").replace("\r", "") for u in dataset]
    words = ["login", "index.html", "a", "b", "verify", "account", "img", "static", "x.php"]
    tlds = ["com", "net", "org", "info", "de", "fr", "co.uk", "io"]
    letters = string.ascii_lowercase + string.digits
    with open(out, "w", encoding="utf-8", newline="\n") as f:
        batch = []
        for i in range(lines):
            kind = rng.randrange(3)
            if kind == 0:
                entry = rng.choice(entries)
                path = "/".join(rng.choice(words) for _ in range(rng.randrange(3)))
                line = f"http://www.{entry}/{path}?id={i}"
            elif kind == 1:
                line = rng.choice(dataset)
            else:
                host = "".join(rng.choice(letters) for _ in range(rng.randrange(5, 16)))
                path = "/".join(rng.choice(words) for _ in range(rng.randrange(4)))
                scheme = rng.choice(("http://", "https://", ""))
                line = f"{scheme}{host}.{rng.choice(tlds)}/{path}"
            batch.append(line)
            if len(batch) == 100_000:
                f.write("\n".join(batch) + "\n")
                batch.clear()
        if batch:
            f.write("\n".join(batch) + "\n")


if __name__ == "__main__":
    main()
