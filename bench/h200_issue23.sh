#!/usr/bin/env bash
# Issue 23's H200 figures and checks in one device call (docs/performance.md, "Device arrays"):
#   export VK_DRIVER_FILES=...; bash .gl/enter.sh; PYTHONPATH=/tmp/site:$PWD bash bench/h200_issue23.sh
# Logs go to $OUT (or ./h200-logs).
set -u
out=${OUT:-h200-logs}
mkdir -p "$out"
nvidia-smi --query-gpu=name,memory.used,memory.total --format=csv > "$out/gpu.txt" 2>&1
timeout 200 python3 -m pytest -q -p no:cacheprovider tests/device/test_split_arrays.py \
    tests/device/test_split_reduce.py tests/device/test_split_views.py \
    tests/device/test_gpuarray.py tests/device/test_gpuarray_views.py \
    tests/device/test_gpuarray_relaunch.py tests/device/test_float_semantics.py \
    tests/device/test_reduce.py tests/device/test_examples.py -rfE > "$out/tests.txt" 2>&1
echo "tests rc=$?" >> "$out/tests.txt"
timeout 220 python3 bench/gpuarray.py --json "$out/bench-gpuarray.json" > "$out/gpuarray-run.txt" 2>&1
echo "gpuarray rc=$?" >> "$out/gpuarray-run.txt"
timeout 90 python3 bench/relaunch_gpuarray.py --big 67108864 --big-kinds gpuarray,arena,torch \
    > "$out/relaunch.txt" 2>&1
echo "relaunch rc=$?" >> "$out/relaunch.txt"
for f in "$out"/*.txt; do tail -n 4 "$f"; done
