#!/usr/bin/env bash
# Measures the two `build` speed figures in one command: wall time and peak RSS of
# `phishbloom build --exact LIST -o FILE` on generated lists of 10^7 and 10^8 lines (≈ 20 bytes
# a line, 1 in 16 a duplicate), each beside the floor peer measured in the same run — read the
# file, xxh3-64 each line, set one bit per line in an array the size of the filter, one thread
# (`examples/build_bench.rs`) — and reported as ratios to it.
#
#   crates/blocklist/benches/build.sh                 # both rows, 3 runs each, medians
#   SIZES=10000000 RUNS=5 crates/blocklist/benches/build.sh
#   PHISHBLOOM=/path/to/other/phishbloom crates/blocklist/benches/build.sh   # another binary
#
# Lists are generated in a temporary directory (BENCH_DIR, else TMPDIR, else /tmp; never in the
# repository) and removed at the end; the build's own temporary files go to TMPDIR. The list
# is read once before the runs so that every run, floor and build alike, reads it from the page
# cache: the figures are CPU and memory, not the disk. Runs alternate floor and build so that
# the noise of this shared machine falls on both.
set -euo pipefail

root=$(cd "$(dirname "$0")/../../.." && pwd)
sizes=${SIZES:-"10000000 100000000"}
runs=${RUNS:-3}
cd "$root"
cargo build --release --quiet -p phishbloom-cli --bin phishbloom
cargo build --release --quiet -p phishbloom-blocklist --example build_bench
phishbloom=${PHISHBLOOM:-$root/target/release/phishbloom}
helper=$root/target/release/examples/build_bench

dir=$(mktemp -d "${BENCH_DIR:-${TMPDIR:-/tmp}}/phishbloom-build-bench.XXXXXX")
trap 'rm -rf "$dir"' EXIT

# Disk needed for the largest list: its text (~21 B a line), the build's temporary hashes
# (16 B a line, twice at most) and the output (~1.2 B a line), with room to spare.
largest=$(printf '%s\n' $sizes | sort -n | tail -1)
need=$((largest * 60))
avail=$(df --output=avail -B1 "$dir" | tail -1)
if [ "$avail" -lt "$need" ]; then
    echo "build.sh: $dir has $((avail >> 20)) MiB free, $((need >> 20)) MiB needed" >&2
    exit 2
fi

# Prints "wall-seconds peak-KiB user-seconds system-seconds" of a command (output discarded).
measure() {
    /usr/bin/time -f '%e %M %U %S' -o "$dir/time" "$@" >/dev/null
    cat "$dir/time"
}

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

echo "phishbloom: $phishbloom"
echo "runs: $runs per figure (median); $(nproc) cores"
for lines in $sizes; do
    list=$dir/list-$lines.txt
    "$helper" gen "$lines" "$list" 2>"$dir/gen"
    bytes=$(stat -c %s "$list")
    cat "$list" >/dev/null
    : >"$dir/floor" && : >"$dir/build"
    for _ in $(seq "$runs"); do
        measure "$helper" floor "$list" "$lines" >>"$dir/floor"
        measure "$phishbloom" build --exact "$list" -o "$dir/out.bloom" >>"$dir/build"
        rm -f "$dir/out.bloom"
    done
    # Column $2 of "wall KiB user sys", or CPU seconds (user + system) for "cpu".
    col() { if [ "$2" = cpu ]; then awk '{ print $3 + $4 }' "$1"; else cut -d' ' -f"$2" "$1"; fi | median; }
    floor_s=$(col "$dir/floor" 1) floor_kb=$(col "$dir/floor" 2) floor_cpu=$(col "$dir/floor" cpu)
    build_s=$(col "$dir/build" 1) build_kb=$(col "$dir/build" 2) build_cpu=$(col "$dir/build" cpu)
    echo
    echo "build --exact, $lines lines ($((bytes / 1000000)) MB; $(cat "$dir/gen"))"
    echo "  floor (read + xxh3-64 + one bit per line, 1 thread): ${floor_s} s wall, ${floor_cpu} s CPU, $((floor_kb / 1024)) MiB peak RSS"
    echo "  phishbloom build --exact:                         ${build_s} s wall, ${build_cpu} s CPU, $((build_kb / 1024)) MiB peak RSS"
    awk -v b="$build_s" -v f="$floor_s" -v bc="$build_cpu" -v fc="$floor_cpu" \
        'BEGIN { printf "  ratio to the floor: %.2f× wall, %.2f× CPU\n", b / f, bc / fc }'
    echo "  all runs (wall KiB user sys): floor $(tr '\n' ';' <"$dir/floor") build $(tr '\n' ';' <"$dir/build")"
    rm -f "$list"
done
