//! Reading reads (FASTQ or FASTA, plain or compressed, from one file or several) in batches,
//! prepared as bwa's bwaseqio.c prepares them: bases as codes 0..=3 (A C G T, either case) and 4
//! (N, IUPAC, anything else), qualities trimmed with `-q`, names cut at the first whitespace and
//! stripped of a trailing `/1` or `/2`, and records with an empty sequence skipped (bwa_read_seq
//! skips them, so they have no `.sai` record and no SAM line).

mod batch_reader;
mod buffer;
mod chunk;

use std::path::PathBuf;

pub use batch_reader::ReadBatchReader;
pub use buffer::{ReadBatch, ReadRef};

/// Longest read we align. BWA keeps positions in 16-bit fields of its search stack; GPU
/// scratch is sized by this, so longer reads are an error, never silently truncated.
pub const MAX_READ_LEN: usize = 4096;

/// bwa's BWA_MIN_RDLEN: `-q` trimming never shortens a read below this.
const MIN_TRIMMED_LEN: usize = 35;

/// How reads are prepared; the fields of bwa's gap_opt_t that bwa_read_seq uses.
#[derive(Clone, Copy, Debug, Default)]
pub struct ReadOptions {
    /// `-q`: quality threshold for trimming from the 3' end (0 = off).
    pub trim_qual: i32,
    /// `-I`: qualities are Illumina 1.3+ (Phred+64).
    pub illumina13: bool,
    /// Keep only what aln needs (codes and trimmed length): names and qualities are left out,
    /// which saves finding the name and copying the qualities on the parser threads.
    pub sequence_only: bool,
}

/// bwa's nst_nt4_table for reads: A C G T (either case) to 0..=3, anything else to 4.
const BASE_CODES: [u8; 256] = {
    let mut table = [4u8; 256];
    let mut i = 0;
    while i < 4 {
        table[b"ACGT"[i] as usize] = i as u8;
        table[b"acgt"[i] as usize] = i as u8;
        i += 1;
    }
    table
};

#[inline]
pub fn base_code(b: u8) -> u8 {
    BASE_CODES[b as usize]
}

/// bwa_trim_read: the length that maximises the sum of (threshold - quality) from the end.
pub fn trimmed_len(qual: &[u8], trim_qual: i32) -> usize {
    if trim_qual < 1 || qual.is_empty() {
        return qual.len();
    }
    let (mut sum, mut best, mut best_len) = (0i32, 0i32, qual.len());
    let mut l = qual.len();
    while l > MIN_TRIMMED_LEN {
        l -= 1;
        sum += trim_qual - (qual[l] as i32 - 33);
        if sum < 0 {
            break;
        }
        if sum > best {
            best = sum;
            best_len = l;
        }
    }
    best_len
}

/// Errors reading reads: always with the file and the record.
#[derive(Debug, thiserror::Error)]
pub enum ReadsError {
    /// The io::Error is part of the message, not a `source`: anyhow's `{:#}` would print it twice.
    #[error("{path}: {error}")]
    Open { path: PathBuf, error: std::io::Error },
    #[error("{path}: record {record}: {msg}")]
    Parse { path: PathBuf, record: u64, msg: String },
    #[error("{path}: record {record} ('{name}'): read of {len} bases is longer than the {max} bcuda supports")]
    TooLong { path: PathBuf, record: u64, name: String, len: usize, max: usize },
    #[error("{path}: no reads: the file is empty")]
    Empty { path: PathBuf },
}

/// Records with an empty sequence that a reader skipped: how many, and the first one.
#[derive(Clone, Debug, Default)]
pub struct EmptyReads {
    pub count: u64,
    /// Record number (from 1) and name of the first.
    pub first: Option<(u64, String)>,
}

impl EmptyReads {
    fn skip(&mut self, record: u64, name: &[u8]) {
        self.note(1, record, String::from_utf8_lossy(name).into_owned());
    }

    /// `count` more, the first of them record `record` named `name`.
    fn note(&mut self, count: u64, record: u64, name: String) {
        self.count += count;
        if self.first.is_none() {
            self.first = Some((record, name));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trimming_follows_bwa() {
        // Qualities 'I' (40) then a tail of '#' (2): with -q 15 the tail goes.
        let mut q = vec![b'I'; 50];
        q.extend(vec![b'#'; 10]);
        assert_eq!(trimmed_len(&q, 15), 50);
        assert_eq!(trimmed_len(&q, 0), 60);
        // Never below 35 bases.
        assert_eq!(trimmed_len(&[b'#'; 60], 15), 35);
    }

    #[test]
    fn codes_cover_case_and_iupac() {
        let codes: Vec<u8> = b"ACGTacgtNnRY-.".iter().map(|&b| base_code(b)).collect();
        assert_eq!(codes, [0, 1, 2, 3, 0, 1, 2, 3, 4, 4, 4, 4, 4, 4]);
    }
}
