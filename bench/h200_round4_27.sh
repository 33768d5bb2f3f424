#!/usr/bin/env bash
# Issue 27, fourth H200 round: the device tests of this round's changes file by file (one
# summary file), the probes (the CUDA/Vulkan switch, queued heavy launches, conv forms, the
# cost of a library call), then the whole PEERS table (bench/peers_all.py). Two calls, each
# under the device's 10-minute limit: `bash bench/h200_round4_27.sh tests`, then `... peers`.
set -u
out=${OUT:-h200-logs}; mkdir -p "$out"
part=${1:-all}
if [ "$part" != peers ]; then
for t in batching reduce_device reduce_path reduce split_reduce pending_scratch capture \
         axis_reduce accumulate sort range_proofs ready_launch launch nd boundscheck; do
  [ -f tests/device/test_$t.py ] || continue
  timeout 60 python3 -m pytest -q -p no:cacheprovider tests/device/test_$t.py -rfE -x \
      > /tmp/t_$t.txt 2>&1
  echo "== $t rc=$?: $(tail -n 1 /tmp/t_$t.txt)" >> "$out/tests.txt"
  grep -E "^(FAILED|ERROR)|Error|assert" /tmp/t_$t.txt | head -n 8 >> "$out/tests.txt"
done
cat "$out/tests.txt"
{
  timeout 120 python3 bench/probe_switch.py
  timeout 150 python3 bench/probe_call_cost.py
} > "$out/probes.txt" 2>&1
timeout 240 python3 bench/probe_conv_forms.py --out "$out/conv_forms.txt" > "$out/conv_forms.log" 2>&1
fi
[ "$part" = tests ] && exit 0
timeout 150 python3 bench/probe_conv_const.py > "$out/conv_const.txt" 2>&1
CTHREADS_INDEX_FORM=old timeout 150 python3 bench/compute_bound.py --only matmul_2d,conv2d,stencil9 \
    > "$out/compute_index_old.txt" 2>&1
timeout 150 python3 bench/probe_call_cost.py > "$out/call_cost.txt" 2>&1
timeout 420 python3 bench/peers_all.py --out "$out/peers_all.txt" > "$out/peers_all.log" 2>&1
echo "peers_all rc=$?" >> "$out/peers_all.txt"
tail -n 120 "$out/peers_all.txt"
