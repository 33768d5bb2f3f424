#!/usr/bin/env bash
# Issue 26's H200 figures in one device call (matmul, axis reductions, scans, sorts) and its tests:
#   export VK_DRIVER_FILES=...; bash .gl/enter.sh; PYTHONPATH=/tmp/site:$PWD bash bench/h200_issue26.sh
set -u
out=${OUT:-h200-logs}
mkdir -p "$out"
timeout 150 python3 -m pytest -q -p no:cacheprovider tests/device/test_matmul.py \
    tests/device/test_axis_reduce.py tests/device/test_accumulate.py \
    tests/device/test_accumulate_fast.py tests/device/test_accumulate_lookback.py \
    tests/device/test_sort.py tests/device/test_sort_fast.py tests/device/test_sort_onesweep.py \
    -rfE > "$out/tests26.txt" 2>&1; echo "tests rc=$?" >> "$out/tests26.txt"
for b in matmul axis_reduce accumulate sort; do
  timeout 150 python3 bench/$b.py > "$out/$b.txt" 2>&1; echo "$b rc=$?" >> "$out/$b.txt"
done
# the forms before the second round (each bench prints the form it ran)
CTHREADS_MATMUL_TILES=old timeout 150 python3 bench/matmul.py > "$out/matmul-old.txt" 2>&1
CTHREADS_AXIS_REDUCE=old timeout 150 python3 bench/axis_reduce.py > "$out/axis_reduce-old.txt" 2>&1
# axis reductions (third round): the second round's kernels, the three forms in one process, the
# hand-written WGSL floor of each axis
CTHREADS_AXIS_REDUCE=r2 timeout 150 python3 bench/axis_reduce.py > "$out/axis_reduce-r2.txt" 2>&1
timeout 150 python3 bench/axis_reduce.py --forms > "$out/axis_reduce-forms.txt" 2>&1
timeout 200 python3 bench/probe_axis_floor.py > "$out/probe_axis_floor.txt" 2>&1
CTHREADS_SCAN=old timeout 150 python3 bench/accumulate.py > "$out/accumulate-old.txt" 2>&1
CTHREADS_SORT=old timeout 150 python3 bench/sort.py > "$out/sort-old.txt" 2>&1
# the second-round forms (issue 26 round 3 made look-back scans and mapped-back sorts the default)
CTHREADS_SCAN=new timeout 150 python3 bench/accumulate.py > "$out/accumulate-new.txt" 2>&1
CTHREADS_SORT=8bit timeout 150 python3 bench/sort.py > "$out/sort-8bit.txt" 2>&1
timeout 150 python3 bench/sort_phases.py > "$out/sort_phases.txt" 2>&1
CTHREADS_SORT=8bit timeout 150 python3 bench/sort_phases.py > "$out/sort_phases-8bit.txt" 2>&1
CTHREADS_SORT=onesweep timeout 150 python3 bench/sort.py > "$out/sort-onesweep.txt" 2>&1
CTHREADS_SORT=onesweep timeout 150 python3 bench/sort_phases.py > "$out/sort_phases-onesweep.txt" 2>&1
for f in "$out"/*.txt; do echo "== $f"; tail -n 14 "$f"; done
