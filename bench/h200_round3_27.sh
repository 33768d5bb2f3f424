#!/usr/bin/env bash
# Issue 27, third H200 round: the new code's device tests file by file (each under its own
# limit, one summary file), then the whole PEERS table (bench/peers_all.py).
set -u
out=${OUT:-h200-logs}; mkdir -p "$out"
for t in accumulate_lookback sort_fast sort_onesweep ready_launch reduce_device capture \
         accumulate accumulate_fast sort reduce split_reduce matmul launch jobs batching; do
  timeout 50 python3 -m pytest -q -p no:cacheprovider tests/device/test_$t.py -rfE -x \
      > /tmp/t_$t.txt 2>&1
  echo "== $t rc=$?: $(tail -n 1 /tmp/t_$t.txt)" >> "$out/tests.txt"
  grep -E "^(FAILED|ERROR)|Error|assert" /tmp/t_$t.txt | head -n 8 >> "$out/tests.txt"
done
cat "$out/tests.txt"
timeout 420 python3 bench/peers_all.py --out "$out/peers_all.txt" > "$out/peers_all.log" 2>&1
echo "peers_all rc=$?" >> "$out/peers_all.txt"
tail -n 120 "$out/peers_all.txt"
