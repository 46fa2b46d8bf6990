# bench/run repeat GENOME.fa [READS=20000] [THREADS=2]: how repetitive a genome looks to
# bwa aln. dwgsim reads (error ramp, indels, 2 % random) and ART HS25 reads, aligned by bwa aln
# and samse; per read source the share of reads aligned, with mapping quality 0, with more
# than one best hit (X0 > 1), and with another hit at most one difference worse (X0 + X1 > 1).
# (Human: roughly 5-15 % of 100 bp reads multi-map.) Indexes GENOME.fa with bcuda when it has
# no index yet. A table in the log: repeat-check.log.
ANY_HOST=1

mode_main() {
    [ $# -ge 1 ] || die "usage: bench/run repeat GENOME.fa [READS] [THREADS]"
    local ref=$1 n=${2:-20000} threads=${3:-2} mbp src
    TAG=
    start_log repeat-check
    [ -e "$ref.bwt" ] || $B index -q "$ref"
    "$DWGSIM" -o 1 -e 0.005-0.015 -E 0.005-0.015 -r 0.001 -R 0.1 -y 0.02 -1 100 -2 100 -N "$n" -z 7 "$ref" "$W/dw" > /dev/null 2>&1
    zcat -f "$W"/dw.bwa.read1.fastq* > "$W/dwgsim.fq"
    mbp=$(awk '/^>/ {next} {n += length($0)} END {printf "%.6f", n / 1e6}' "$ref")
    "$ART" -ss HS25 -i "$ref" -l 100 -f "$(awk -v n="$n" -v m="$mbp" 'BEGIN {print n * 100 / (m * 1e6)}')" \
        -o "$W/art" -rs 7 -na -q > /dev/null 2>&1
    log "$(printf 'reads\tn\taligned\tmapq0\tX0>1\tX0+X1>1')"
    for src in dwgsim art; do
        "$BWA" aln -t "$threads" "$ref" "$W/$src.fq" > "$W/$src.sai" 2> /dev/null
        "$BWA" samse "$ref" "$W/$src.sai" "$W/$src.fq" 2> /dev/null | multi_mapping "$src" | log_stdin
    done
}

# One row from bwa samse's SAM: aligned, MAPQ 0, X0 > 1, X0 + X1 > 1 as shares of all reads.
multi_mapping() { # SOURCE
    awk -v src="$1" '
        /^@/ {next}
        {n++; if (int($2 / 4) % 2) next; aligned++; if ($5 == 0) q0++
         x0 = 0; x1 = 0
         for (i = 12; i <= NF; i++) {if ($i ~ /^X0:i:/) x0 = substr($i, 6) + 0; if ($i ~ /^X1:i:/) x1 = substr($i, 6) + 0}
         if (x0 > 1) multi++; if (x0 + x1 > 1) near++}
        END {printf "%s\t%d\t%.2f%%\t%.2f%%\t%.2f%%\t%.2f%%\n", src, n, 100 * aligned / n, 100 * q0 / n, 100 * multi / n, 100 * near / n}'
}
