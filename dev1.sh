#!/usr/bin/env bash
cd "$REPO"
nvidia-smi -L
export KEEP_W=1 W=/tmp/w3100 BWA_READS=100000 BWA_RUNS=1 SORT_GB=8 SIM_JOBS=16 NCU=lines
bench/run --out /tmp/r/res speed 3100 100000
REGIME=adna REUSE_INDEX=1 bench/run --out /tmp/r/res speed 3100 100000
