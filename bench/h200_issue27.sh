#!/usr/bin/env bash
# Issue 27's whole PEERS comparison in one device call (~4-6 min on the H200): every row of
# bench/peers_all.py (the PEERS cases, GpuArray, vectors, library calls, the compute-bound set,
# tiny launches, capture/replay) in one table (bench/compute_bound.py alone: the set's own table).
#   bash bench/h200_issue27.sh [peers_all.py options: --quick --only a,b --skip a,b]
# Logs and results go to $OUT (or ./h200-logs).
set -u
out=${OUT:-h200-logs}
mkdir -p "$out"
icd=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
if [ -z "${VK_DRIVER_FILES:-}" ] && [ -f "$icd" ]; then export VK_DRIVER_FILES=$icd; fi
# the carried loader and wheels (../shared/device/README.md), unless an earlier call installed them
if [ ! -d /tmp/site/wgpu ] && [ -f .gl/enter.sh ]; then bash .gl/enter.sh > "$out/enter.txt" 2>&1; fi
export PYTHONPATH=/tmp/site:$PWD${PYTHONPATH:+:$PYTHONPATH}
nvidia-smi --query-gpu=name,memory.used,memory.total --format=csv > "$out/gpu.txt" 2>&1
timeout 480 python3 bench/peers_all.py --json "$out/peers_all.json" --out "$out/peers_all.txt" \
    "$@" 2> "$out/peers_all.log"
echo "peers_all rc=$?" >> "$out/peers_all.txt"
cat "$out/peers_all.txt"
