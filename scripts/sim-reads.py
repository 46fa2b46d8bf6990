#!/usr/bin/env python3
"""Seeded read simulator for tests and benchmarks beyond what ART covers:
   sim-reads.py REF.fa LENGTH COUNT SEED > reads.fq
Reads from both strands with 0-3 mismatches, 1-3 bp indels, N bases, and 10% random reads."""
import random, sys

ref, length, count, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
genome = "".join(l.strip() for l in open(ref) if not l.startswith(">")).upper()
rng = random.Random(seed)
comp = str.maketrans("ACGTN", "TGCAN")
# Phred 2..40 from random bytes (bytes.translate runs in C: 1M reads in seconds).
QUAL = bytes(33 + 2 + b % 39 for b in range(256))
out = sys.stdout
for i in range(count):
    p = rng.randrange(0, len(genome) - length - 10)
    s = list(genome[p:p + length + 10])
    kind = rng.random()
    if kind < 0.4:
        pass
    elif kind < 0.6:
        for _ in range(rng.randint(1, 3)):
            s[rng.randrange(length)] = rng.choice("ACGT")
    elif kind < 0.7:
        j = rng.randrange(10, length - 10); del s[j:j + rng.randint(1, 3)]
    elif kind < 0.8:
        j = rng.randrange(10, length - 10); s[j:j] = [rng.choice("ACGT") for _ in range(rng.randint(1, 3))]
    elif kind < 0.9:
        s[rng.randrange(length)] = "N"
    else:
        s = [rng.choice("ACGT") for _ in range(length)]
    r = "".join(s[:length])
    if rng.random() < 0.5:
        r = r.translate(comp)[::-1]
    q = rng.randbytes(len(r)).translate(QUAL).decode()
    out.write(f"@sim{length}_{i}\n{r}\n+\n{q}\n")
