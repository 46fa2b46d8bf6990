#!/usr/bin/env python3
"""Writes the small embedded example in testdata/ (seeded, reproducible):
  demo_ref.fa  two random chromosomes (30 kbp + 12 kbp) with a 2 kbp repeat copied at 3% divergence,
               an N run and a few IUPAC codes, lowercase stretch
  demo.fq      2000 reads of 100 bp from both strands: ~80% exact, the rest with 1-3 mismatches,
               a 1-3 bp indel, N bases, or random (unmappable)
  demo_1.fq, demo_2.fq  500 pairs of 100 bp reads, inserts of 300 +- 30 bp (forward-reverse):
               some with mismatches, one end too mutated for aln (mate rescue finds it), one
               end random (an unpaired mate)"""
import random

rng = random.Random(20261122)
BASES = "ACGT"

def rand_seq(n):
    return "".join(rng.choice(BASES) for _ in range(n))

def mutate(s, rate):
    return "".join(rng.choice(BASES.replace(c, "")) if rng.random() < rate else c for c in s)

def revcomp(s):
    return s[::-1].translate(str.maketrans("ACGTN", "TGCAN"))

repeat = rand_seq(2000)
chr1 = rand_seq(8000) + repeat + rand_seq(6000) + "N" * 50 + rand_seq(13950)
chr2 = rand_seq(3000) + mutate(repeat, 0.03) + rand_seq(7000)
chr1 = chr1[:20000] + "R" + chr1[20001:25000] + "Y" + chr1[25001:]
chr2_fa = chr2[:1000] + chr2[1000:1600].lower() + chr2[1600:]

with open("testdata/demo_ref.fa", "w") as f:
    for name, comment, seq in (("chr1", "demo chromosome 1", chr1), ("chr2", "", chr2_fa)):
        f.write(f">{name} {comment}\n" if comment else f">{name}\n")
        for i in range(0, len(seq), 60):
            f.write(seq[i:i + 60] + "\n")

with open("testdata/demo.fq", "w") as f:
    for i in range(2000):
        chrom = chr1 if rng.random() < 0.7 else chr2
        pos = rng.randrange(0, len(chrom) - 110)
        read = chrom[pos:pos + 100].upper()
        kind = rng.random()
        if kind < 0.12:
            read = mutate(read, 0.02)
        elif kind < 0.16:
            j = rng.randrange(20, 80)
            read = (read[:j] + read[j + rng.randint(1, 3):] + chrom[pos + 100:pos + 110])[:100] if rng.random() < 0.5 \
                else (read[:j] + rand_seq(rng.randint(1, 3)) + read[j:])[:100]
        elif kind < 0.18:
            j = rng.randrange(0, 100)
            read = read[:j] + "N" + read[j + 1:]
        elif kind < 0.20:
            read = rand_seq(100)
        read = read.replace("R", "A").replace("Y", "C")
        if rng.random() < 0.5:
            read = revcomp(read)
        qual = "".join(chr(33 + rng.choice((30, 35, 37, 40, 20, 12))) for _ in read)
        f.write(f"@demo_{i}\n{read}\n+\n{qual}\n")

# Paired reads, generated after the single-end ones so that those stay as they were.
def qual_string(n):
    return "".join(chr(33 + rng.choice((30, 35, 37, 40, 20, 12))) for _ in range(n))

with open("testdata/demo_1.fq", "w") as f1, open("testdata/demo_2.fq", "w") as f2:
    for i in range(500):
        chrom = chr1 if rng.random() < 0.7 else chr2
        insert = max(150, int(rng.gauss(300, 30)))
        pos = rng.randrange(0, len(chrom) - insert)
        frag = chrom[pos:pos + insert].upper().replace("R", "A").replace("Y", "C")
        ends = [frag[:100], revcomp(frag[-100:])]
        kind = rng.random()
        if kind < 0.15:
            ends = [mutate(e, 0.02) for e in ends]
        elif kind < 0.22:
            j = rng.randrange(2)
            ends[j] = mutate(ends[j], 0.07)
        elif kind < 0.25:
            ends[rng.randrange(2)] = rand_seq(100)
        if rng.random() < 0.5:
            ends.reverse()
        f1.write(f"@pair_{i}/1\n{ends[0]}\n+\n{qual_string(100)}\n")
        f2.write(f"@pair_{i}/2\n{ends[1]}\n+\n{qual_string(100)}\n")
