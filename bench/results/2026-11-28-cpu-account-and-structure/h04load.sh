#!/bin/bash
# usage: h04load.sh tag ; runs 2 concurrent h04 evals x 3 rounds with 1 busy loop
cd /work/main
f=$(ls tests/adversarial/v13/r13_h04*)
timeout 200 python3 -c "while True: pass" &
for r in 1 2 3; do
  for j in 1 2; do
    build/kernelsmith eval tests/adversarial/problems/r9_softmax_cpu.py $f --backend cpu --json > /tmp/h04_$1_$r$j.json 2>/dev/null &
  done
  wait -n; wait -n
done
kill %1 2>/dev/null
for x in /tmp/h04_$1_*.json; do python3 -c "
import json; d=json.load(open('$x')); t=d['stages'].get('timing') or {}
print('$x', d['status'], t.get('cand_threads_demanded'), t.get('cand_threads_used'), t.get('cpu_available'))"; done
