#!/usr/bin/env python3
"""Writes N distinct, realistic domain names, one per line: the blocklists of the scale
benchmarks (crates/blocklist/bench/compact-scale) — a DNS blocklist of 10^7 names.

usage: gen_domains.py N OUT [SEED]

Reproducible (seeded). Names look like those of real blocklists (Pi-hole's, UT1's, URLhaus'):
a registrable part of one to three syllable-words, sometimes with digits or a hyphen, under a
TLD drawn with the weights of the .com-heavy zone distribution; a third of them with one or two
subdomain labels (www, mail, cdn, login, a random token) in front. Distinctness is kept by a
set of 64-bit hashes, so memory stays about 100 bytes a name; the lines are written as they are
made.
"""

import hashlib
import random
import sys

SYLLABLES = (
    "ba be bi bo bu ca ce ci co cu da de di do du fa fe fi fo ga ge go ha he hi ho ka ke ki ko "
    "la le li lo lu ma me mi mo mu na ne ni no nu pa pe pi po pu ra re ri ro ru sa se si so su "
    "ta te ti to tu va ve vi vo za ze zo bank pay shop mail secure login verify account update "
    "online web net cloud app store free win bet cash coin wallet trade click track ads stat "
    "cdn media news info host serve data link"
).split()
TLDS = [
    ("com", 46), ("net", 6), ("org", 5), ("ru", 4), ("de", 4), ("info", 3), ("xyz", 3),
    ("top", 3), ("uk", 2), ("co.uk", 2), ("cn", 2), ("br", 2), ("fr", 2), ("it", 1),
    ("nl", 1), ("pl", 1), ("io", 1), ("online", 1), ("site", 1), ("club", 1), ("tk", 1),
    ("ml", 1), ("ga", 1), ("cf", 1), ("gq", 1), ("in", 1), ("jp", 1), ("es", 1), ("biz", 1),
]
SUBDOMAINS = ["www", "mail", "cdn", "login", "secure", "m", "api", "static", "img", "app"]
# A registrable part of one syllable gets an `x`, and one of three letters or fewer `x`s up to
# four: registries and the Public Suffix List's private section sell names under short words
# (`co.uk`, `za.com`, `mail.pl`, `info.in`), and such a name would be a public suffix itself,
# which no blocklist lists and `phishbloom build` warns about. No draw is taken for it, so the
# rest of the stream stays as it was. A few names still are public suffixes by chance (8 in 10^6:
# `cloudapp.net`, `rome.it`, …), as in a real list.
SHORTEST_LABEL = 4


def word(rng):
    parts = [rng.choice(SYLLABLES) for _ in range(rng.choice((1, 2, 2, 3)))]
    name = "".join(parts)
    if len(parts) == 1:
        name += "x"
    name = name.ljust(SHORTEST_LABEL, "x")
    roll = rng.random()
    if roll < 0.15:
        name += str(rng.randrange(1, 1000))
    elif roll < 0.25:
        name += "-" + rng.choice(SYLLABLES)
    return name


def main():
    count, out = int(sys.argv[1]), sys.argv[2]
    rng = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 37)
    tlds = [t for t, _ in TLDS]
    weights = [w for _, w in TLDS]
    seen = set()
    written = 0
    with open(out, "w", encoding="ascii") as f:
        while written < count:
            name = word(rng) + "." + rng.choices(tlds, weights)[0]
            roll = rng.random()
            if roll < 0.2:
                name = rng.choice(SUBDOMAINS) + "." + name
            elif roll < 0.33:
                token = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(8))
                name = token + "." + name
            key = hashlib.blake2b(name.encode(), digest_size=8).digest()
            if key in seen:
                continue
            seen.add(key)
            f.write(name + "\n")
            written += 1


if __name__ == "__main__":
    main()
