#!/usr/bin/env bash
# Fetch the real test data from Debian packages into data/ (ignored by git).
#   data/lambda.fa     lambda phage genome (bowtie2-examples), 48.5 kbp
#   data/ecoli536.fa   E. coli 536 genome (bowtie-examples, NC_008253), 4.9 Mbp
#   data/*_art.fq      ART HS25 100 bp reads simulated from each (seeded)
#   data/*_pe*_{1,2}.fq paired reads (seeded): dwgsim at several insert sizes and lengths, with
#                      random (unmappable) pairs, and ART HS25 paired-end
# Needs: apt-get download (no install) for the genome packages; art_illumina and dwgsim for reads.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p data/deb
if [ ! -s data/ecoli536.fa ] || [ ! -s data/lambda.fa ]; then
    (cd data/deb && apt-get download bowtie-examples bowtie2-examples >/dev/null)
    for d in data/deb/*.deb; do dpkg -x "$d" data/deb/root; done
    gzip -dc data/deb/root/usr/share/doc/bowtie/examples/genomes/NC_008253.fna.gz > data/ecoli536.fa
    gzip -dc data/deb/root/usr/share/doc/bowtie2/examples/reference/lambda_virus.fa.gz > data/lambda.fa
fi
if command -v art_illumina >/dev/null; then
    for g in lambda ecoli536; do
        if [ ! -s "data/${g}_art.fq" ]; then
            cov=2; [ "$g" = lambda ] && cov=20
            art_illumina -q -ss HS25 -i "data/$g.fa" -l 100 -f "$cov" -o "data/${g}_art" -rs 7 -na >/dev/null
        fi
    done
fi
# Paired reads: name, genome, then dwgsim options (seeded). -y: fraction of random pairs.
dwgsim_pairs() {
    local name=$1 genome=$2; shift 2
    [ -s "data/${name}_1.fq" ] && return
    dwgsim -z 7 "$@" -o 1 "data/$genome.fa" "data/$name" >/dev/null 2>&1
    for e in 1 2; do
        gzip -dc "data/$name.bwa.read$e.fastq.gz" > "data/${name}_$e.fq"
        rm "data/$name.bwa.read$e.fastq.gz"
    done
    rm -f "data/$name.mutations.txt" "data/$name.mutations.vcf"
}
if command -v dwgsim >/dev/null; then
    dwgsim_pairs lambda_pe300 lambda -N 5000 -1 100 -2 100 -d 300 -s 30 -y 0.05
    dwgsim_pairs lambda_pe70 lambda -N 5000 -1 70 -2 70 -d 500 -s 50 -y 0.1 -r 0.01 -R 0.3
    dwgsim_pairs lambda_pe36 lambda -N 3000 -1 36 -2 36 -d 200 -s 20 -y 0.1 -r 0.01
    dwgsim_pairs lambda_pe250 lambda -N 1500 -1 260 -2 250 -d 700 -s 60 -y 0.1 -r 0.01
    dwgsim_pairs ecoli536_pe500 ecoli536 -N 20000 -1 100 -2 80 -d 500 -s 50 -y 0.1 -r 0.005
fi
if command -v art_illumina >/dev/null && [ ! -s data/ecoli536_artpe_1.fq ]; then
    art_illumina -q -ss HS25 -p -l 100 -m 300 -s 30 -i data/ecoli536.fa -f 1 -o data/ecoli536_artpe -rs 5 -na >/dev/null
    for e in 1 2; do mv "data/ecoli536_artpe$e.fq" "data/ecoli536_artpe_$e.fq"; done
fi
ls -l data/*.fa data/*.fq 2>/dev/null
