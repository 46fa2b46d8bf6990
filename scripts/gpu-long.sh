#!/usr/bin/env bash
# Runs on the device machine: a benchmark longer than one device command (10 minutes), kept
# alive across calls. The machine stays only 30 s idle, so the calls must follow each other.
#   bash scripts/gpu-long.sh start SIZE   copy the repo to /tmp/long, start scripts/gpu-large.sh
#                                         SIZE there in its own session (SORT_GB=8); its
#                                         16-core part waits until /tmp/long/go exists
#   bash scripts/gpu-long.sh wait SECS    wait until its log ends with "done" or SECS pass,
#                                         then copy its log to $OUT
set -uo pipefail
L=/tmp/long
case "$1" in
start)
    mkdir -p $L/out && cp -r . $L/repo
    (cd $L/repo && OUT=$L/out WAIT_FOR=$L/go SORT_GB=${SORT_GB:-8} setsid bash scripts/gpu-large.sh "$2" > $L/out/stdout.txt 2>&1 < /dev/null &)
    echo "started gpu-large.sh $2 in $L" ;;
wait)
    end=$((SECONDS + $2))
    while [ $SECONDS -lt $end ] && ! grep -q '^done' $L/out/gpu-large.log 2>/dev/null; do sleep 5; done
    cp $L/out/gpu-large.log $L/out/stdout.txt "$OUT"/ 2>/dev/null
    echo "--- after ${SECONDS} s:"; cat $L/out/gpu-large.log; tail -5 $L/out/stdout.txt; free -g | head -2; df -h /tmp | tail -1 ;;
esac
