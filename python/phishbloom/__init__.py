"""phishbloom: is this URL, domain, key or phrase on a blocklist? — in Python.

The same crates as the ``phishbloom`` command, through a compiled extension module:

- :class:`BloomFilter` — a Bloom filter of ``str``, ``bytes`` or ``int`` keys with rbloom's verbs,
  hashed with a stable hash: a filter saved here answers the same in another process, on another
  machine, and in ``phishbloom check``.
- :class:`Blocklist` — a blocklist file opened or built from lists, asked about one URL
  (:meth:`Blocklist.check`) or a column of them on every core (:meth:`Blocklist.check_many`,
  Arrow in, Arrow out), or asked to scan a text for keywords (:meth:`Blocklist.scan`).
- :func:`plan` — the sizing calculator of ``phishbloom plan``; :func:`url_key` — the key a URL
  is hashed as in a list of whole URL keys (seed 000's filter, ``demo``'s whole-key step).
- :class:`Error` and its subclasses — what can go wrong, with messages that say how to fix it.
"""

from __future__ import annotations

import json
import os
from typing import Any, Iterable, Sequence

from ._errors import Error, FileError, ListError, ParameterError
from ._phishbloom import BloomFilter, Verdict
from ._phishbloom import Blocklist as _Blocklist
from ._phishbloom import plan_json as _plan_json
from ._phishbloom import url_key

__all__ = [
    "BloomFilter",
    "Blocklist",
    "Verdict",
    "plan",
    "url_key",
    "Error",
    "FileError",
    "ListError",
    "ParameterError",
]


def plan(expected_items: int, fp_rate: float, *, key_bytes: int = 22) -> list[dict[str, Any]]:
    """The calculator's rows for ``expected_items`` keys at rate ``fp_rate``: one dict per layout
    (classic, blocked) with m, k, bytes, bits per key, the expected rate and a ``HashSet``'s size
    for keys of ``key_bytes`` bytes — what ``phishbloom plan --json`` prints."""
    return json.loads(_plan_json(expected_items, fp_rate, key_bytes))


def _arrow_strings(urls: Any) -> Any:
    """``urls`` as a pyarrow array or chunked array of strings or bytes, without a copy where
    it already is one (pyarrow arrays, pandas Series backed by Arrow)."""
    import pyarrow as pa

    if isinstance(urls, (pa.Array, pa.ChunkedArray)):
        return urls
    module = type(urls).__module__
    if module.startswith("pandas"):
        return pa.Array.from_pandas(urls)
    if module.startswith("numpy"):
        return pa.array(urls)
    if isinstance(urls, (str, bytes)):
        raise TypeError("check_many takes a column of URLs; for one URL call check()")
    return pa.array(urls if isinstance(urls, (list, tuple)) else list(urls))


class Blocklist:
    """A blocklist: URL entries, whole keys or keywords, as the ``phishbloom`` command builds
    and reads them. Open one with :meth:`open`, or build one with :meth:`build`."""

    __slots__ = ("_inner",)

    def __init__(self, inner: _Blocklist) -> None:
        self._inner = inner

    @classmethod
    def open(cls, path: str | os.PathLike[str]) -> "Blocklist":
        """The blocklist file at ``path``, every checksum verified."""
        return cls(_Blocklist.open(os.fspath(path)))

    @classmethod
    def build(
        cls,
        sources: Sequence[str | os.PathLike[str]] | str | os.PathLike[str] = (),
        *,
        output: str | os.PathLike[str] | None = None,
        category: str | None = None,
        ut1: Sequence[str | os.PathLike[str]] = (),
        allow: Sequence[str | os.PathLike[str]] = (),
        never: str | os.PathLike[str] | None = None,
        exact: bool = False,
        fold_case: bool = False,
        kind: str = "blocked",
        fpp: float | None = None,
        expressions: int | None = None,
        verify: bool = False,
        capacity: int | None = None,
        grow: bool = False,
        force: bool = False,
        host_gate: bool = True,
        format: str = "auto",
        column: str = "url",
        label_column: str | None = None,
        label_value: str | None = None,
        all_rows: bool = False,
        category_column: str | None = None,
        name: str | None = None,
        threads: int | None = None,
        hash: str = "xxh3",
        strict: bool = False,
    ) -> "Blocklist":
        """Builds a blocklist from list files as ``phishbloom build`` does, each keyword the
        flag of the same name (``host_gate=False`` is ``--no-host-gate``; ``strict=True``
        refuses entries that are public suffixes, such as ``co.uk``); saved atomically to
        ``output`` when given."""
        if isinstance(sources, (str, os.PathLike)):
            sources = [sources]
        args = {
            "output": None if output is None else os.fspath(output),
            "category": category,
            "ut1": [os.fspath(p) for p in ut1],
            "allow": [os.fspath(p) for p in allow],
            "never": None if never is None else os.fspath(never),
            "exact": exact,
            "fold_case": fold_case,
            "kind": kind,
            "fpp": fpp,
            "expressions": expressions,
            "verify": verify,
            "capacity": capacity,
            "grow": grow,
            "force": force,
            "host_gate": host_gate,
            "format": format,
            "column": column,
            "label_column": label_column,
            "label_value": label_value,
            "all_rows": all_rows,
            "category_column": category_column,
            "name": name,
            "threads": threads,
            "hash": hash,
            "strict": strict,
        }
        return cls(_Blocklist._build([os.fspath(p) for p in sources], args))

    def check(self, url: str | bytes) -> Verdict:
        """The verdict for one URL (or key, for a list of whole keys)."""
        return self._inner.check(url)

    def check_many(self, urls: Any, *, threads: int | None = None) -> Any:
        """The verdicts of many URLs — a list, any iterable, a NumPy array of str, a pandas
        Series or a pyarrow array — on ``threads`` threads (default: every core) with the GIL
        released. Returns a ``pyarrow.RecordBatch`` with a row per URL, in order, and the
        columns of ``check --json``: verdict, listed, entry, entry_kind, categories,
        categories_exact, exception, exception_kind, error (null for a null URL). Arrow input
        is read where it is, without a copy; ``.to_pandas()`` gives a DataFrame."""
        import pyarrow as pa

        column = _arrow_strings(urls)
        chunks = column.chunks if isinstance(column, pa.ChunkedArray) else [column]
        batches = [
            pa.record_batch(part)
            for chunk in chunks
            for part in self._inner._check_arrow(chunk, threads)
        ]
        if not batches:
            return pa.record_batch(self._inner._check_arrow(pa.array([], pa.string()), 1)[0])
        return batches[0] if len(batches) == 1 else pa.concat_batches(batches)

    def scan(self, text: str, *, min_hits: int = 1) -> dict[str, Any]:
        """Scans a text with a keyword list: ``spam`` (at least ``min_hits`` hits), ``hits``,
        the ``matches`` (keyword, text, start, end), ``tokens`` — ``scan --json``'s answer."""
        return json.loads(self._inner._scan_json(text, min_hits))

    def save(self, path: str | os.PathLike[str]) -> None:
        """Writes the list to ``path`` atomically."""
        self._inner.save(os.fspath(path))

    @property
    def name(self) -> str:
        """The list's name."""
        return self._inner.name

    @property
    def kind(self) -> str:
        """The structure: blocked, classic, split, cuckoo, counting, cabf or compact."""
        return self._inner.kind

    @property
    def scheme(self) -> str:
        """What it holds: url-expressions, exact, exact-folded or keywords."""
        return self._inner.scheme

    @property
    def entries(self) -> int:
        """Entries held."""
        return self._inner.entries

    @property
    def version(self) -> int:
        """The list's version."""
        return self._inner.version

    @property
    def categories(self) -> list[str]:
        """The categories' names."""
        return self._inner.categories

    def __repr__(self) -> str:
        return repr(self._inner)
