"""Blocklist: the verdicts of `phishbloom check --json` for 2,000 odd URLs through `check` and
`check_many` (every input form it takes, from 8 threads at once), builds with `build`'s options,
keyword scans, and bad input refused with the right exception."""

from __future__ import annotations

import json
import random
import threading
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import phishbloom
from phishbloom import Blocklist

FAMILY = 120
IDN = [("bücher", "xn--bcher-kva"), ("пример", "xn--e1afmkfd"), ("例え", "xn--r8jz45g")]


def write_ut1(root: Path) -> list[Path]:
    """A UT1-style tree: phishing and gambling (entries in both), and liste_blanche exceptions."""
    folders = {
        "phishing": (
            [f"evil{i}.example" for i in range(FAMILY)]
            + [f"both{i}.example" for i in range(40)]
            + [f"192.168.7.{i}" for i in range(1, 21)]
            + [f"{puny}.example" for _, puny in IDN],
            [f"host{i}.example/login" for i in range(FAMILY)],
        ),
        "gambling": (
            [f"bet{i}.example" for i in range(FAMILY)] + [f"both{i}.example" for i in range(40)],
            [f"casino{i}.example/poker" for i in range(FAMILY)],
        ),
        "liste_blanche": (
            [f"docs.evil{i}.example" for i in range(0, FAMILY, 5)],
            [f"host{i}.example/login/help" for i in range(FAMILY)],
        ),
    }
    paths = []
    for name, (domains, urls) in folders.items():
        folder = root / name
        folder.mkdir(parents=True)
        (folder / "domains").write_text("\n".join(domains) + "\n")
        (folder / "urls").write_text("\n".join(urls) + "\n")
        paths.append(folder)
    return paths


def odd_items(count: int = 2000) -> list[bytes]:
    """Listed entries in odd spellings, exceptions, clean URLs, IDN hosts, IPv4 in dotted,
    decimal, hex and octal form, 100 KB URLs, bytes that are not UTF-8, and non-URLs."""
    rng = random.Random(0x5EED)
    makers = [
        lambda i: f"HTTP://WWW.Evil{i}.EXAMPLE:80/a/../b?x=1#frag",
        lambda i: f"https://sub.both{i % 40}.example./path",
        lambda i: f"host{i}.example/login/more?q={i}",
        lambda i: f"http://host{i}.example/login/help",
        lambda i: f"http://docs.evil{i}.example/x",
        lambda i: f"casino{i}.example/poker/%41%42",
        lambda i: f"http://clean{i}.example.org/",
        lambda i: f"http://192.168.7.{i % 25}/x",
        lambda i: f"http://{3232237312 + i % 25}/",
        lambda i: f"http://0xC0.0xA8.7.{i % 25}/",
        lambda i: f"http://0300.0250.07.{i % 25}/",
        lambda i: f"http://{IDN[i % 3][0]}.example/",
        lambda i: f"http://evil{i}.example/" + "a" * 100_000,
        lambda i: "not a url " + str(i),
        lambda i: "http://[::1",
        lambda i: "",
    ]
    items = [makers[rng.randrange(len(makers))](rng.randrange(FAMILY)).encode() for _ in range(count)]
    for at in rng.sample(range(count), 40):
        items[at] = b"http://evil1.example/\xff\xfe" + bytes([rng.randrange(128, 256)])
    return items


@pytest.fixture(scope="module")
def ut1_list(tmp_path_factory, cli):
    root = tmp_path_factory.mktemp("ut1")
    folders = write_ut1(root / "tree")
    path = root / "list.bloom"
    built = Blocklist.build(ut1=folders, verify=True, output=path, name="odd")
    assert path.is_file() and built.entries > 0
    return path


@pytest.fixture(scope="module")
def reference(ut1_list, cli):
    """`check --json`'s answers for the odd items, one dict each."""
    items = odd_items()
    out = cli("check", "--json", ut1_list, input=b"\n".join(items) + b"\n").stdout
    answers = [json.loads(line) for line in out.decode().splitlines()]
    assert len(answers) == len(items)
    assert {a["verdict"] for a in answers} >= {"listed", "clean", "allowed"}
    return items, answers


FIELDS = ["verdict", "listed", "entry", "entry_kind", "categories", "categories_exact", "exception"]


def as_reference(row: dict) -> dict:
    """A verdict as `check --json` writes it: absent fields left out, and the categories only
    with an entry (a Verdict object has an empty list and False without one)."""
    listed_by = FIELDS if row.get("entry") is not None else FIELDS[:4] + FIELDS[6:]
    return {k: row[k] for k in listed_by if row.get(k) is not None}


def expected(answer: dict) -> dict:
    return {k: answer[k] for k in FIELDS if k in answer}


def test_check_matches_the_cli_on_odd_urls(ut1_list, reference):
    blocklist = Blocklist.open(ut1_list)
    items, answers = reference
    for item, answer in zip(items, answers):
        verdict = blocklist.check(item)
        row = {k: getattr(verdict, k) for k in FIELDS}
        assert as_reference(row) == expected(answer), item[:80]


def test_check_many_matches_the_cli_on_odd_urls(ut1_list, reference):
    blocklist = Blocklist.open(ut1_list)
    items, answers = reference
    batch = blocklist.check_many(pa.array(items, pa.binary()))
    assert batch.num_rows == len(items)
    for row, answer in zip(batch.to_pylist(), answers):
        assert as_reference(row) == expected(answer)


def test_check_many_takes_every_column_form_alike(ut1_list):
    blocklist = Blocklist.open(ut1_list)
    urls = [f"http://evil{i % FAMILY}.example/" if i % 3 else f"http://ok{i}.example/" for i in range(5000)]
    want = blocklist.check_many(urls).to_pylist()
    forms = [
        iter(urls),
        tuple(urls),
        np.array(urls),
        np.array(urls, dtype=object),
        pd.Series(urls),
        pd.Series(urls, dtype="string[pyarrow]"),
        pa.array(urls, pa.large_string()),
        pa.array(urls, pa.string_view()),
        pa.chunked_array([urls[:1234], urls[1234:]]),
    ]
    for form in forms:
        assert blocklist.check_many(form).to_pylist() == want, type(form)
    frame = blocklist.check_many(pd.Series(urls), threads=1).to_pandas()
    assert list(frame.columns[:4]) == ["verdict", "listed", "entry", "entry_kind"]
    assert frame["listed"].sum() == sum(1 for i in range(5000) if i % 3)


def test_check_many_answers_null_for_null_and_keeps_order(ut1_list):
    blocklist = Blocklist.open(ut1_list)
    rows = blocklist.check_many(["http://evil1.example/", None, "http://ok.example/", None]).to_pylist()
    assert [r["verdict"] for r in rows] == ["listed", None, "clean", None]
    assert blocklist.check_many([]).num_rows == 0


def test_check_many_from_eight_threads_at_once(ut1_list):
    blocklist = Blocklist.open(ut1_list)
    urls = pa.array([f"http://evil{i % FAMILY}.example/{i}" for i in range(20_000)])
    want = blocklist.check_many(urls, threads=1).column("listed").to_pylist()
    results, errors = [None] * 8, []

    def work(at: int) -> None:
        try:
            results[at] = blocklist.check_many(urls).column("listed").to_pylist()
        except Exception as error:  # noqa: BLE001 - reported below
            errors.append(error)

    threads = [threading.Thread(target=work, args=(at,)) for at in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors and all(result == want for result in results)
    assert all(want)


def test_build_takes_build_options(tmp_path, cli):
    (tmp_path / "phishing.txt").write_text("evil.example\nbad.example/login\n")
    (tmp_path / "keys.txt").write_text("Spammer@Evil.COM\ntoken-1\n")
    (tmp_path / "ok.txt").write_text("good.evil.example\n")
    urls = Blocklist.build(tmp_path / "phishing.txt", allow=[tmp_path / "ok.txt"], kind="cuckoo")
    assert (urls.kind, urls.scheme, urls.categories) == ("cuckoo", "url-expressions", ["phishing"])
    assert urls.check("http://a.evil.example/").listed
    assert urls.check("http://good.evil.example/").verdict == "allowed"
    keys = Blocklist.build([tmp_path / "keys.txt"], exact=True, fold_case=True, output=tmp_path / "k.bloom")
    assert keys.check("spammer@evil.com").listed and not keys.check("token-2").listed
    assert cli("check", tmp_path / "k.bloom", "SPAMMER@evil.com").returncode == 0
    compact = Blocklist.build([tmp_path / "phishing.txt"], kind="compact")
    assert compact.check("bad.example/login/x").entry == "bad.example/login"


def test_url_key_is_the_whole_key_rule_and_sha256_builds_like_the_cli(tmp_path, cli):
    assert phishbloom.url_key("  HTTPS://Evil.EXAMPLE/Login/ ") == b"evil.example/Login"
    assert phishbloom.url_key(b"http://a.example") == b"a.example"
    assert phishbloom.url_key("   ") is None
    (tmp_path / "keys.txt").write_text("token-1\ntoken-2\n")
    ours = Blocklist.build([tmp_path / "keys.txt"], exact=True, hash="sha256", kind="classic")
    cli("build", "--exact", "--hash", "sha256", "--kind", "classic", tmp_path / "keys.txt",
        "-o", tmp_path / "cli.bloom")
    theirs = Blocklist.open(tmp_path / "cli.bloom")
    probes = ["token-1", "token-2"] + [f"other-{i}" for i in range(2000)]
    assert [ours.check(p).listed for p in probes] == [theirs.check(p).listed for p in probes]
    with pytest.raises(phishbloom.ParameterError, match="hash"):
        Blocklist.build([tmp_path / "keys.txt"], exact=True, hash="md5")
    with pytest.raises(phishbloom.ParameterError, match="hash"):
        Blocklist.build([tmp_path / "keys.txt"], exact=True, hash="sha256", kind="cuckoo")


def test_scan_finds_keywords(tmp_path, cli):
    (tmp_path / "spam.txt").write_text("free money\nviagra\n")
    cli("build", "--keywords", tmp_path / "spam.txt", "-o", tmp_path / "spam.bloom")
    keywords = Blocklist.open(tmp_path / "spam.bloom")
    answer = keywords.scan("Get FREE   money now! no viagra here")
    assert answer["spam"] and answer["hits"] == 2
    assert [m["keyword"] for m in answer["matches"]] == ["free money", "viagra"]
    assert not keywords.scan("nothing to see", min_hits=1)["spam"]
    with pytest.raises(phishbloom.ListError, match="keyword list"):
        keywords.check("http://free.example/")


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"kind": "round"}, phishbloom.ParameterError, "kind must be one of"),
        ({"fpp": 2.0}, phishbloom.Error, ""),
        ({"format": "yaml"}, phishbloom.ParameterError, "format must be one of"),
        ({"fold_case": True}, phishbloom.ParameterError, "fold_case"),
        ({"kind": "cabf", "exact": True}, phishbloom.ParameterError, "kind"),
        ({"expressions": 0}, phishbloom.ParameterError, "expressions"),
        ({"strict": True}, phishbloom.ListError, "public suffix"),
    ],
)
def test_build_refuses_bad_options(tmp_path, kwargs, error, message):
    (tmp_path / "list.txt").write_text("evil.example\nco.uk\n")
    with pytest.raises(error, match=message or None):
        Blocklist.build([tmp_path / "list.txt"], **kwargs)


def test_bad_files_and_inputs_raise_the_right_exception(tmp_path, ut1_list):
    image = Path(ut1_list).read_bytes()
    cases = {
        "truncated.bloom": image[: len(image) // 3],
        "empty.bloom": b"",
        "text.bloom": b"evil.example\n",
        "flipped.bloom": image[:100] + bytes([image[100] ^ 0x40]) + image[101:],
    }
    for name, data in cases.items():
        (tmp_path / name).write_bytes(data)
        with pytest.raises(phishbloom.ListError):
            Blocklist.open(tmp_path / name)
    with pytest.raises(phishbloom.FileError):
        Blocklist.open(tmp_path / "missing.bloom")
    with pytest.raises(phishbloom.FileError):
        Blocklist.open(tmp_path)
    (tmp_path / "bad.csv").write_text("url,isMalicious\n\"unterminated,1\n")
    with pytest.raises(phishbloom.Error):
        Blocklist.build([tmp_path / "bad.csv"])
    blocklist = Blocklist.open(ut1_list)
    with pytest.raises(TypeError):
        blocklist.check(42)
    with pytest.raises(TypeError):
        blocklist.check_many("http://one.example/")
    with pytest.raises(TypeError):
        blocklist.check_many(pa.array([1, 2, 3]))
    with pytest.raises(phishbloom.ListError, match="not keywords"):
        blocklist.scan("text")
