#!/usr/bin/env bash
# Issue 27 / issue 26 round 3, the second H200 round: the new code's first GPU tests, then the
# scan, sort and launch-path forms A/B in one call. Logs under $OUT.
set -u
out=${OUT:-h200-logs}; mkdir -p "$out"
timeout 240 python3 -m pytest -q -p no:cacheprovider tests/device/test_accumulate_lookback.py \
    tests/device/test_sort_fast.py tests/device/test_sort_onesweep.py tests/device/test_sort.py \
    tests/device/test_accumulate.py tests/device/test_accumulate_fast.py \
    tests/device/test_ready_launch.py tests/device/test_capture.py tests/device/test_range_proofs.py \
    tests/device/test_matmul.py tests/device/test_launch.py tests/device/test_jobs.py \
    tests/device/test_batching.py tests/device/test_gpuarray.py tests/device/test_reduce.py tests/device/test_reduce_device.py \
    tests/device/test_axis_reduce.py tests/device/test_split_reduce.py \
    -rfE > "$out/tests.txt" 2>&1; echo "tests rc=$?" >> "$out/tests.txt"
run() { local name=$1; shift; timeout 80 "$@" > "$out/$name.txt" 2>&1; echo "rc=$?" >> "$out/$name.txt"; }
run accumulate python3 bench/accumulate.py
CTHREADS_SCAN=new run accumulate-new python3 bench/accumulate.py
run sort python3 bench/sort.py
CTHREADS_SORT=8bit run sort-8bit python3 bench/sort.py
CTHREADS_SORT=onesweep run sort-onesweep python3 bench/sort.py
run sort_phases python3 bench/sort_phases.py --rounds 3
CTHREADS_SORT=onesweep run sort_phases-onesweep python3 bench/sort_phases.py --rounds 3
run sum python3 bench/sum.py
run latency python3 bench/probe_latency.py --n 2000 --rounds 2
run compute_bound python3 bench/compute_bound.py --only stencil9,conv1d,conv2d
for f in "$out"/*.txt; do echo "== $f"; grep -v XDG "$f" | tail -n 22; done
