#!/usr/bin/env bash
# Issue 27 (and issue 26 round 3), first H200 round: the merged slices' tests and benchmarks.
set -u
out=${OUT:-h200-logs}; mkdir -p "$out"
timeout 170 python3 -m pytest -q -p no:cacheprovider -x tests/device/test_capture.py \
    tests/device/test_range_proofs.py tests/device/test_axis_reduce.py tests/device/test_boundscheck.py \
    -rfE > "$out/tests.txt" 2>&1; echo "tests rc=$?" >> "$out/tests.txt"; tail -5 "$out/tests.txt"
timeout 120 python3 bench/compute_bound.py > "$out/compute_bound.txt" 2>&1; echo "rc=$?" >> "$out/compute_bound.txt"
timeout 60 python3 bench/capture.py > "$out/capture.txt" 2>&1; echo "rc=$?" >> "$out/capture.txt"
timeout 90 python3 bench/axis_reduce.py --forms > "$out/axis_reduce.txt" 2>&1; echo "rc=$?" >> "$out/axis_reduce.txt"
timeout 60 python3 bench/probe_axis_floor.py > "$out/probe_axis_floor.txt" 2>&1; echo "rc=$?" >> "$out/probe_axis_floor.txt"
timeout 90 python3 bench/probe_matmul_tiles.py --dtype float64 --reps 3 > "$out/tiles64.txt" 2>&1; echo "rc=$?" >> "$out/tiles64.txt"
for f in "$out"/*.txt; do echo "== $f"; grep -v XDG "$f" | tail -n 30; done
