# bench/run multi-gpu SIZE_MBP [READS=4000000]: the human-like benchmark (bench/modes/speed.sh)
# then bcuda aln --gpus N on the same reads, twice for each N of GPUS (default: 1 to every
# GPU here): a row each in multi-gpu-TAG.tsv (steady and middle rates, their scaling
# against the first N, the .sai against bwa's). Log: multi-gpu-TAG.log.
. bench/modes/speed.sh

mode_main() {
    [ $# -ge 1 ] || die "usage: bench/run multi-gpu SIZE_MBP [READS]"
    require_gpu
    GPUS=${GPUS:-$(seq -s ' ' 1 "$(gpu_count)")}
    start_log multi-gpu
    human_like_benchmark "$1" "${2:-4000000}"
}
