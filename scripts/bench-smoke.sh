#!/usr/bin/env bash
# The benchmark harness (bench/run) end to end on a machine without a GPU, small: the
# human-like benchmark in its CPU form (2 Mbp genome, 20k reads; the .sai against bwa's), the
# same run detached and waited for, and the identity check's CPU form (bcuda aln --cpu against
# bwa aln on every read and option set). Results in a temporary folder. About a minute on
# two cores after a release build. Needs bwa and dwgsim (apt-get install bwa dwgsim).
set -euo pipefail
cd "$(dirname "$0")/.."
for f in bench/run bench/*.sh bench/modes/*.sh scripts/*.sh; do bash -n "$f"; done
cargo build --release --quiet -p bcuda -p bcuda-dev --bins --example sim_adna
export BCUDA_BIN=${CARGO_TARGET_DIR:-$PWD/target}/release THREADS=2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export RESULTS=$tmp/results LONG_DIR=$tmp/long
res=$RESULTS/cpu-$(nproc)c
# rows TABLE: its rows (no header, no comments), each of which must say the .sai were identical.
rows() { grep -v '^#' "$res/$1" | tail -n +2; }
identical() { rows "$1" | awk -F'\t' -v c="$2" '{n++} $c != "yes" {bad++} END {exit !(n > 0 && !bad)}' \
    || { echo "bench-smoke: a row of $1 without identical .sai:" >&2; cat "$res/$1" >&2; exit 1; }; }

bench/run --cpu speed 2 20000 > "$tmp/speed.out"
identical steady-cpu.tsv 9
identical human-like-cpu.tsv 9
REGIME=adna bench/run --cpu speed 2 20000 > "$tmp/adna.out"
[ "$(rows steady-cpu.tsv | cut -f2 | sort -u | tr '\n' ' ')" = "100bp adna " ] || { echo "bench-smoke: no adna row" >&2; exit 1; }
identical steady-cpu.tsv 9

bench/run --cpu --detach speed 1 5000 > "$tmp/detach.out"
bench/run --out "$tmp/merged" wait 120 > "$tmp/wait.out"
grep -q "exited with status 0" "$tmp/wait.out" || { cat "$tmp/wait.out" >&2; exit 1; }
[ "$(grep -v '^#' "$tmp/merged/cpu-$(nproc)c/steady-cpu.tsv" | wc -l)" = 2 ] || { echo "bench-smoke: the detached run's row was not merged" >&2; exit 1; }

bench/run --cpu identity > "$tmp/identity.out" || { cat "$tmp/identity.out" >&2; exit 1; }
grep '^identity:' "$tmp/identity.out"
echo "bench-smoke: the harness ran (speed, adna, detached, identity): $(rows steady-cpu.tsv | wc -l) steady rows, .sai identical"
