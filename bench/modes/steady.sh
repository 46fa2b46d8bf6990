# bench/run steady SIZE_MBP [READS=8000000]: the steady state, the human-like benchmark
# (bench/modes/speed.sh, all its settings) on many reads with bwa timed on the first
# BWA_READS (default 1M) alone: a row in steady-TAG.tsv (bwa's time per 1M reads against
# bcuda's rate over them all). Log: steady-TAG.log.
. bench/modes/speed.sh

mode_main() {
    [ $# -ge 1 ] || die "usage: bench/run steady SIZE_MBP [READS]"
    start_log steady
    human_like_benchmark "$1" "${2:-8000000}"
}
