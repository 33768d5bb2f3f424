#!/usr/bin/env bash
# Issues 24 and 25's H200 checks and figures in one device call:
#   export VK_DRIVER_FILES=...; bash .gl/enter.sh; PYTHONPATH=/tmp/site:$PWD bash bench/h200_issue24.sh [parts]
# parts (default all): tests vectors complex random write layout timing print. Logs go to $OUT (or ./h200-logs).
set -u
out=${OUT:-h200-logs}
mkdir -p "$out"
parts=${1:-tests,vectors,complex,random,write,layout,timing,print}
has() { [[ ",$parts," == *",$1,"* ]]; }
nvidia-smi --query-gpu=name,memory.used,memory.total --format=csv > "$out/gpu.txt" 2>&1
if has tests; then
  files=""
  for f in test_vectors test_vector_once test_vector_combos test_vector_lanes test_vector_rows \
           test_matrices test_structs test_struct_combos test_tuple_results test_complex \
           test_random test_device_time test_print test_examples test_float_semantics \
           test_literal_folding test_docs_run; do
    [ -f "tests/device/$f.py" ] && files="$files tests/device/$f.py"
  done
  timeout 240 python3 -m pytest -q -p no:cacheprovider $files -rfE \
      > "$out/tests.txt" 2>&1
  echo "tests rc=$?" >> "$out/tests.txt"
fi
if has vectors; then
  timeout 240 python3 bench/vectors.py --n 67108864 --nbody-n 32768 --rounds 5 \
      > "$out/vectors.txt" 2>&1; echo "vectors rc=$?" >> "$out/vectors.txt"
fi
if has complex; then
  timeout 120 python3 bench/complex_mandelbrot.py 4096 4096 256 5 > "$out/complex.txt" 2>&1
  echo "complex rc=$?" >> "$out/complex.txt"
fi
if has random; then
  timeout 150 python3 bench/random_fill.py > "$out/random.txt" 2>&1; echo "random rc=$?" >> "$out/random.txt"
  CTHREADS_RNG_MULHI=halves timeout 150 python3 bench/random_fill.py > "$out/random-halves.txt" 2>&1
  echo "random-halves rc=$?" >> "$out/random-halves.txt"
fi
if has write; then
  timeout 100 python3 bench/probe_write.py > "$out/write.txt" 2>&1; echo "write rc=$?" >> "$out/write.txt"
fi
if has layout; then
  timeout 150 python3 bench/probe_vec_layout.py > "$out/layout.txt" 2>&1; echo "layout rc=$?" >> "$out/layout.txt"
  timeout 100 python3 bench/probe_nbody_cuda.py > "$out/layout-cuda.txt" 2>&1
  echo "layout-cuda rc=$?" >> "$out/layout-cuda.txt"
fi
if has timing; then
  timeout 150 python3 bench/device_time.py > "$out/device_time.txt" 2>&1
  echo "device_time rc=$?" >> "$out/device_time.txt"
fi
if has print && [ -f bench/print_cost.py ]; then
  timeout 100 python3 bench/print_cost.py > "$out/print.txt" 2>&1; echo "print rc=$?" >> "$out/print.txt"
fi
for f in "$out"/*.txt; do echo "== $f"; tail -n 12 "$f"; done
