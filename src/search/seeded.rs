//! Seeded genomes and reads with edits, for the tests of the search's models (the no-hit
//! proof's here, in bcuda-dev and in its tests), so that each draws its data the same way.

use std::path::Path;

use bcuda_index::Bwt;

/// A xorshift64 stream of pseudo-random numbers from `state` (not 0).
pub fn xorshift(mut state: u64) -> impl FnMut() -> u64 {
    move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    }
}

/// The genome's forward strand then its reverse complement (codes 0..=3): the text that reads
/// are drawn from, as bwa's index holds both strands.
pub fn both_strands(genome: &[u8]) -> Vec<u8> {
    genome.iter().copied().chain(genome.iter().rev().map(|&c| 3 - c)).collect()
}

/// `len` random bases (codes 0..=3), with read[unit] copied over each position of `copies`,
/// so that intervals hold several rows.
pub fn genome_with_repeats(
    len: usize,
    unit: std::ops::Range<usize>,
    copies: &[usize],
    next: &mut impl FnMut() -> u64,
) -> Vec<u8> {
    let mut genome: Vec<u8> = (0..len).map(|_| (next() % 4) as u8).collect();
    let repeat = genome[unit].to_vec();
    for &at in copies {
        genome[at..at + repeat.len()].copy_from_slice(&repeat);
    }
    genome
}

/// `genome` (codes) written to `dir/g.fa` and indexed as bwa does: the FASTA's path and the
/// BWT.
pub fn indexed(dir: &Path, genome: &[u8]) -> (std::path::PathBuf, Bwt) {
    let fa = dir.join("g.fa");
    let text: Vec<u8> = genome.iter().map(|&c| b"ACGT"[c as usize]).collect();
    std::fs::write(&fa, [b">g\n".as_slice(), &text, b"\n"].concat()).expect("writing the test genome");
    bcuda_index::build_index(&fa, &fa, bcuda_index::BuildOptions::default()).expect("indexing the test genome");
    let bwt = Bwt::load(&bcuda_index::with_ext(&fa, ".bwt")).expect("loading the test genome's BWT");
    (fa, bwt)
}

/// A read of `len` bases: random ones when `random`, else a substring of `source`; then fewer
/// than `edit_draws` edits, each a substitution, an insertion, a deletion or an N.
pub fn read_with_edits(
    source: &[u8],
    len: usize,
    random: bool,
    edit_draws: u64,
    next: &mut impl FnMut() -> u64,
) -> Vec<u8> {
    let mut read: Vec<u8> = if random {
        (0..len).map(|_| (next() % 4) as u8).collect()
    } else {
        let at = (next() % (source.len() - len) as u64) as usize;
        source[at..at + len].to_vec()
    };
    for _ in 0..next() % edit_draws {
        let at = (next() % read.len() as u64) as usize;
        match next() % 4 {
            0 => read[at] = (next() % 4) as u8,
            1 => read.insert(at, (next() % 4) as u8),
            2 => drop(read.remove(at)),
            _ => read[at] = 4,
        }
    }
    read
}
