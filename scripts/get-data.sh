#!/usr/bin/env bash
# Fetch the real test data from Debian packages into data/ (ignored by git).
#   data/lambda.fa     lambda phage genome (bowtie2-examples), 48.5 kbp
#   data/ecoli536.fa   E. coli 536 genome (bowtie-examples, NC_008253), 4.9 Mbp
#   data/*_art.fq      ART HS25 100 bp reads simulated from each (seeded)
# Needs: apt-get download (no install) for the genome packages; art_illumina for reads.
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
ls -l data/*.fa data/*.fq 2>/dev/null
