#!/usr/bin/env bash
# Run the test suite (and optionally the benchmark) on the lent GPU machine.
# Usage there: bash ci/device-run.sh [tests|bench|all]   (logs go to $OUT, default ./out)
# Expects .gl/ and .whl/ carried from ../shared/device/prepare.sh (see that folder's README).
set -uo pipefail
OUT="${OUT:-$PWD/out}"
mkdir -p "$OUT"
what="${1:-all}"
nv_icd=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
if [ -z "${VK_DRIVER_FILES:-}" ] && [ -e "$nv_icd" ]; then export VK_DRIVER_FILES="$nv_icd"; fi
bash .gl/enter.sh > "$OUT/enter.log" 2>&1 || { cat "$OUT/enter.log"; exit 1; }
export PYTHONPATH=/tmp/site:$PWD
python3 -m cthreads.gpu info > "$OUT/info.txt" 2>&1; cat "$OUT/info.txt"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > "$OUT/nvidia-smi.txt" 2>&1 || true
if [ "$what" = tests ] || [ "$what" = all ]; then
  timeout 400 python3 -m pytest tests -q -p no:cacheprovider -x --timeout 120 > "$OUT/pytest.log" 2>&1
  echo "pytest rc=$?"; tail -25 "$OUT/pytest.log"
fi
if [ "$what" = bench ] || [ "$what" = all ]; then
  timeout 500 python3 bench/run.py --json "$OUT/bench-h200.json" ${BENCH_ARGS:-} > "$OUT/bench.log" 2>&1
  echo "bench rc=$?"; tail -60 "$OUT/bench.log"
fi
