#!/usr/bin/env bash
# Runs on the CUDA host: a benchmark longer than one command may run (10 minutes), kept
# alive across calls. The machine stays only 30 s idle, so the calls must follow each other.
#   bash scripts/gpu-long.sh start SCRIPT ARGS...   copy the repo to /tmp/long, start SCRIPT
#                                         ARGS there detached (setsid; SORT_GB=8); its
#                                         16-core part waits until /tmp/long/go exists
#   bash scripts/gpu-long.sh start SIZE   the same for scripts/gpu-large.sh SIZE
#   bash scripts/gpu-long.sh wait SECS    release the 16-core part (create /tmp/long/go), wait
#                                         until the script's log ends with "done" or SECS
#                                         pass, then copy what it wrote to $OUT
# A script run this way writes its log to $OUT/NAME.log (NAME: LOG, or the script's name
# without .sh) and ends it with a line "done", e.g. bench/human-like.sh 3100, or
# LOG=index-gpu ... start bench/index.sh --gpu 3100.
set -uo pipefail
L=${LONG_DIR:-/tmp/long}
case "$1" in
start)
    shift
    script=$1
    [[ $script =~ ^[0-9.]+$ ]] && script=scripts/gpu-large.sh || shift
    # A script run before in this folder leaves its log (ending "done"), its exit status and
    # the go-ahead: the wait below must see this run's alone.
    rm -rf $L/out $L/exit $L/go && mkdir -p $L/out && cp -r . $L/repo
    echo "${LOG:-$(basename "$script" .sh)}" > $L/name
    (cd $L/repo && OUT=$L/out WAIT_FOR=$L/go SORT_GB=${SORT_GB:-8} setsid bash -c 'bash "$@"; echo $? > '$L'/exit' bash "$script" "$@" > $L/out/stdout.txt 2>&1 < /dev/null &)
    echo "started $script $* in $L" ;;
wait)
    touch $L/go
    mkdir -p "${OUT:=gpu-out}"
    log=$L/out/$(cat $L/name).log
    end=$((SECONDS + $2))
    # Until "done", the script's end (a failure ends without it) or SECS.
    while [ $SECONDS -lt $end ] && ! grep -q '^done' "$log" 2>/dev/null && [ ! -e $L/exit ]; do sleep 5; done
    [ -e $L/exit ] && echo "the script exited with status $(cat $L/exit)"
    cp $L/out/* "$OUT"/ 2>/dev/null
    echo "--- after ${SECONDS} s:"; cat "$log"; tail -5 $L/out/stdout.txt; free -g | head -2; df -h /tmp | tail -1 ;;
esac
