#!/usr/bin/env python3
"""Seeded synthetic genome with realistic repeats, for index and aln benchmarks at scale:
   synth-genome.py SIZE_MBP SEED > genome.fa
Chromosomes of ~50 Mbp (or fewer) of random sequence with: copies of 300 bp (Alu-like) and
6 kbp (L1-like) repeat families at 5-20% divergence, tandem repeats, and runs of N."""
import random, sys

size = int(float(sys.argv[1]) * 1_000_000)
rng = random.Random(int(sys.argv[2]))
ACGT = "ACGT"

# Random bytes mapped to bases in C (bytes.translate): fast enough for Gbp genomes.
TO_BASE = bytes(ACGT[b % 4].encode()[0] for b in range(256))


def rand_seq(n):
    return rng.randbytes(n).translate(TO_BASE).decode()

def diverge(s, rate):
    out = list(s)
    for i in range(len(out)):
        if rng.random() < rate:
            out[i] = rng.choice(ACGT)
    return "".join(out)

families = [rand_seq(300) for _ in range(200)] + [rand_seq(6000) for _ in range(20)]
out = sys.stdout
chrom_len = min(size, 50_000_000)
n_chrom = max(1, round(size / chrom_len))
for c in range(n_chrom):
    parts, total = [], 0
    while total < chrom_len:
        r = rng.random()
        if r < 0.10:
            piece = diverge(rng.choice(families), rng.uniform(0.05, 0.20))
        elif r < 0.12:
            unit = rand_seq(rng.randint(2, 60))
            piece = unit * rng.randint(5, 200 // len(unit) + 5)
        elif r < 0.121:
            piece = "N" * rng.randint(100, 50_000)
        else:
            piece = rand_seq(rng.randint(2_000, 20_000))
        parts.append(piece)
        total += len(piece)
    seq = "".join(parts)[:chrom_len]
    out.write(f">chr{c + 1} synthetic seed={sys.argv[2]}\n")
    for i in range(0, len(seq), 80):
        out.write(seq[i:i + 80] + "\n")
