#!/usr/bin/env bash
# Issue 26's H200 figures in one device call (matmul, axis reductions, scans, sorts) and its tests:
#   export VK_DRIVER_FILES=...; bash .gl/enter.sh; PYTHONPATH=/tmp/site:$PWD bash bench/h200_issue26.sh
set -u
out=${OUT:-h200-logs}
mkdir -p "$out"
timeout 150 python3 -m pytest -q -p no:cacheprovider tests/device/test_matmul.py \
    tests/device/test_axis_reduce.py tests/device/test_accumulate.py tests/device/test_sort.py \
    -rfE > "$out/tests26.txt" 2>&1; echo "tests rc=$?" >> "$out/tests26.txt"
for b in matmul axis_reduce accumulate sort; do
  timeout 150 python3 bench/$b.py > "$out/$b.txt" 2>&1; echo "$b rc=$?" >> "$out/$b.txt"
done
for f in "$out"/*.txt; do echo "== $f"; tail -n 14 "$f"; done
