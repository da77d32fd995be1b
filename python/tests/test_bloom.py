"""BloomFilter: no false negatives, the same answers in another process and in the CLI, pickling,
union and intersection as `phishbloom merge` has them, and bad input refused with the right
exception."""

from __future__ import annotations

import pickle
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import phishbloom
from phishbloom import BloomFilter

keys = st.one_of(st.text(max_size=40), st.binary(max_size=40), st.integers(-(10**30), 10**30))


@settings(max_examples=200, deadline=None)
@given(st.lists(keys, max_size=300), st.sampled_from(["blocked", "classic", "split"]))
def test_every_key_added_is_found(added, layout):
    bf = BloomFilter(max(len(added), 1), 0.01, layout=layout)
    bf.update(added)
    assert all(key in bf for key in added)
    assert len(bf) <= len(added)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.text(max_size=30), min_size=1, max_size=200))
def test_pickle_and_bytes_round_trip_answer_the_same(added):
    bf = BloomFilter(len(added), 0.001)
    bf.update(added)
    for copy in (pickle.loads(pickle.dumps(bf)), BloomFilter.from_bytes(bf.to_bytes()), bf.copy()):
        assert copy == bf
        assert all(key in copy for key in added)
        assert len(copy) == len(bf)
        assert (copy.size_in_bits, copy.hash_functions, copy.layout) == (
            bf.size_in_bits,
            bf.hash_functions,
            bf.layout,
        )


def test_the_false_positive_rate_is_kept_within_the_binomial_bound():
    n, p, trials = 20_000, 0.01, 100_000
    bf = BloomFilter(n, p)
    bf.update(f"in-{i}" for i in range(n))
    false = sum(f"out-{i}" in bf for i in range(trials))
    # Four standard deviations of Binomial(trials, p) above the mean.
    assert false <= trials * p + 4 * (trials * p * (1 - p)) ** 0.5, false


def test_a_filter_saved_here_answers_the_same_in_another_process_and_in_the_cli(tmp_path, cli):
    bf = BloomFilter(1000, 0.001)
    present = [f"token-{i}" for i in range(500)] + ["ünïcode", "42"]
    bf.update(present)
    bf.add(7)
    path = tmp_path / "keys.bloom"
    bf.save(path)
    absent = [f"other-{i}" for i in range(500)]
    probe = present + absent + ["7"]
    script = (
        "import sys, phishbloom\n"
        "bf = phishbloom.BloomFilter.load(sys.argv[1])\n"
        "print(''.join('1' if line in bf else '0' for line in sys.argv[2:]))\n"
    )
    other = subprocess.run(
        [sys.executable, "-c", script, str(path), *probe], capture_output=True, text=True, check=True
    )
    here = "".join("1" if key in bf else "0" for key in probe)
    assert other.stdout.strip() == here
    answers = cli("check", path, input="\n".join(probe).encode() + b"\n").stdout.decode()
    cli_listed = "".join("1" if "\tlisted" in line else "0" for line in answers.splitlines())
    assert cli_listed == here
    assert here.startswith("1" * len(present)) and here.endswith("1")


def test_union_and_intersection_match_the_cli_merge(tmp_path, cli):
    a, b = BloomFilter(2000, 0.01), BloomFilter(2000, 0.01)
    a.update(f"a{i}" for i in range(800))
    b.update(f"b{i}" for i in range(800))
    a.update(["both", "also"])
    b.update(["both", "also"])
    a.save(tmp_path / "a.bloom")
    b.save(tmp_path / "b.bloom")
    cli("merge", "-o", tmp_path / "merged.bloom", tmp_path / "a.bloom", tmp_path / "b.bloom")
    merged = BloomFilter.load(tmp_path / "merged.bloom")
    union = a | b
    assert union == merged == a.union(b)
    assert a.issubset(union) and union.issuperset(b)
    common = a & b
    assert "both" in common and "also" in common
    assert common.issubset(a) and common.issubset(b)
    assert common == a.intersection(b)
    in_place = a.copy()
    in_place |= b
    assert in_place == union
    in_place &= b
    assert in_place == union & b


def test_int_keys_are_their_decimal_digits_and_bools_are_refused():
    bf = BloomFilter(10, 0.01)
    bf.add(12345678901234567890)
    assert "12345678901234567890" in bf and b"12345678901234567890" in bf
    with pytest.raises(TypeError, match="str, bytes or int"):
        bf.add(True)
    with pytest.raises(TypeError, match="float"):
        bf.add(1.5)
    with pytest.raises(TypeError):
        None in bf  # noqa: B015


def test_clear_and_len():
    bf = BloomFilter(100, 0.01)
    assert not bf and len(bf) == 0
    assert bf.add("x") is True and bf.add("x") is False
    assert bf and len(bf) == 1 and abs(bf.approx_items - 1) < 0.5
    bf.clear()
    assert not bf and "x" not in bf


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        ((0, 0.01), {}, "expected_items must be"),
        ((-5, 0.01), {}, "expected_items must be"),
        ((10**30, 0.01), {}, "expected_items must be"),
        ((100, 0.0), {}, "fp_rate must be between 0 and 1"),
        ((100, 1.0), {}, "fp_rate must be between 0 and 1"),
        ((100, float("nan")), {}, "fp_rate must be between 0 and 1"),
        ((100, 0.01), {"layout": "round"}, "unknown layout `round`"),
        ((10**15, 1e-12), {}, "split the list into shards"),
    ],
)
def test_absurd_parameters_raise_parameter_error(args, kwargs, message):
    with pytest.raises(phishbloom.ParameterError, match=message) as raised:
        BloomFilter(*args, **kwargs)
    assert isinstance(raised.value, ValueError) and isinstance(raised.value, phishbloom.Error)


def test_wrong_types_raise_type_error():
    with pytest.raises(TypeError):
        BloomFilter("100", 0.01)
    with pytest.raises(TypeError):
        BloomFilter(100, 0.01) | "not a filter"
    with pytest.raises(TypeError):
        BloomFilter.from_bytes("text")


def test_corrupt_truncated_and_foreign_files_raise_list_error(tmp_path, cli):
    bf = BloomFilter(1000, 0.01)
    bf.update(["a", "b"])
    image = bf.to_bytes()
    for bad in (image[: len(image) // 2], image[:10], b"", image[:-1] + bytes([image[-1] ^ 1])):
        with pytest.raises(phishbloom.ListError):
            BloomFilter.from_bytes(bad)
    corrupt = bytearray(image)
    corrupt[len(corrupt) // 2] ^= 0xFF
    with pytest.raises(phishbloom.ListError):
        BloomFilter.from_bytes(bytes(corrupt))
    (tmp_path / "urls.txt").write_text("evil.example\n")
    cli("build", tmp_path / "urls.txt", "-o", tmp_path / "urls.bloom")
    with pytest.raises(phishbloom.ListError, match="not a list of whole keys"):
        BloomFilter.load(tmp_path / "urls.bloom")
    with pytest.raises(phishbloom.FileError) as missing:
        BloomFilter.load(tmp_path / "missing.bloom")
    assert isinstance(missing.value, OSError)
    with pytest.raises(phishbloom.ListError):
        BloomFilter(10, 0.01) | BloomFilter(20, 0.01)


def test_plan_gives_the_calculator_rows():
    rows = phishbloom.plan(10_327, 0.01)
    assert [row["layout"] for row in rows] == ["classic", "blocked"]
    assert (rows[0]["num_bits"], rows[0]["num_hashes"]) == (98_985, 7)
    with pytest.raises(phishbloom.ParameterError):
        phishbloom.plan(0, 0.01)
