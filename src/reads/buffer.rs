//! A batch of reads whose names, base codes and qualities lie back to back in three buffers,
//! filled by the parser and read by every command: a batch read into again keeps its buffers,
//! so reading costs no allocation per read (a `String` and two `Vec`s per read before, made on
//! the parser threads and freed on another).

use std::ops::Range;

use rayon::prelude::*;

use super::chunk::name_of;
use super::{base_code, ReadOptions};

/// One read of a [`ReadBatch`], borrowed.
#[derive(Clone, Copy, Debug)]
pub struct ReadRef<'a> {
    /// Empty when read for aln alone ([`ReadOptions::sequence_only`]).
    pub name: &'a str,
    /// Base codes in read orientation, the whole read (before trimming).
    pub codes: &'a [u8],
    /// Phred+33 qualities as in the file (empty for FASTA, and for aln alone), after `-I`
    /// conversion.
    pub qual: &'a [u8],
    /// Length aligned after `-q` trimming (`<= codes.len()`).
    pub len: usize,
}

impl<'a> ReadRef<'a> {
    /// The aligned part of the read.
    pub fn aligned(&self) -> &'a [u8] {
        &self.codes[..self.len]
    }
}

/// Reads whose names, base codes and qualities lie back to back, each read's end in the three
/// buffers kept beside them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReadBatch {
    names: String,
    codes: Vec<u8>,
    quals: Vec<u8>,
    /// Per read: where its name, codes and qualities end, and its aligned length.
    ends: Vec<Ends>,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Ends {
    name: usize,
    codes: usize,
    qual: usize,
    len: usize,
}

impl ReadBatch {
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Read `i` (panics past the end, as indexing does).
    pub fn get(&self, i: usize) -> ReadRef<'_> {
        let (start, end) = (self.start_of(i), self.ends[i]);
        ReadRef {
            name: &self.names[start.name..end.name],
            codes: &self.codes[start.codes..end.codes],
            qual: &self.quals[start.qual..end.qual],
            len: end.len,
        }
    }

    /// The aligned part of read `i` (what [`ReadRef::aligned`] gives, without the name and
    /// qualities: the GPU packer takes only this).
    pub fn aligned(&self, i: usize) -> &[u8] {
        let start = self.start_of(i).codes;
        &self.codes[start..start + self.ends[i].len]
    }

    /// Every read's aligned length, in order.
    pub fn aligned_lens(&self) -> impl ExactSizeIterator<Item = usize> + '_ {
        self.ends.iter().map(|e| e.len)
    }

    pub fn iter(&self) -> impl ExactSizeIterator<Item = ReadRef<'_>> + '_ {
        (0..self.len()).map(|i| self.get(i))
    }

    pub fn par_iter(&self) -> impl IndexedParallelIterator<Item = ReadRef<'_>> + '_ {
        (0..self.len()).into_par_iter().map(|i| self.get(i))
    }

    /// Bytes the batch holds on the heap (its buffers' capacities).
    pub fn heap_bytes(&self) -> usize {
        let ends = self.ends.capacity() * std::mem::size_of::<Ends>();
        self.names.capacity() + self.codes.capacity() + self.quals.capacity() + ends
    }

    /// Where read `n` starts in each buffer (the end of the buffers for `n == len`).
    fn start_of(&self, n: usize) -> Ends {
        if n == 0 {
            Ends::default()
        } else {
            self.ends[n - 1]
        }
    }

    /// Adds a read: `id` its header line (bwa names the read after it), `seq` as in the file,
    /// `qual` after `-I` (empty for FASTA), `len` the length aligned after `-q` trimming. With
    /// [`ReadOptions::sequence_only`] the name and qualities are left out.
    pub fn push(&mut self, id: &[u8], seq: &[u8], qual: &[u8], len: usize, opts: ReadOptions) {
        // No name for aln: finding it costs a scan of the header (a few percent of the parse).
        if !opts.sequence_only {
            // Names are text in the SAM output: invalid UTF-8 shows as U+FFFD.
            self.names.push_str(&String::from_utf8_lossy(name_of(id)));
            self.quals.extend_from_slice(qual);
        }
        self.codes.extend(seq.iter().map(|&b| base_code(b)));
        self.ends.push(Ends { name: self.names.len(), codes: self.codes.len(), qual: self.quals.len(), len });
    }

    /// Adds copies of the reads `reads` of `from`.
    pub fn extend_from(&mut self, from: &ReadBatch, reads: Range<usize>) {
        let (base, first, last) = (self.start_of(self.len()), from.start_of(reads.start), from.start_of(reads.end));
        self.names.push_str(&from.names[first.name..last.name]);
        self.codes.extend_from_slice(&from.codes[first.codes..last.codes]);
        self.quals.extend_from_slice(&from.quals[first.qual..last.qual]);
        self.ends.extend(from.ends[reads].iter().map(|e| Ends {
            name: base.name + e.name - first.name,
            codes: base.codes + e.codes - first.codes,
            qual: base.qual + e.qual - first.qual,
            len: e.len,
        }));
    }

    /// Moves the first `n` reads (at most all) to the end of `into`.
    pub(super) fn move_front(&mut self, n: usize, into: &mut ReadBatch) {
        let n = n.min(self.len());
        into.extend_from(self, 0..n);
        if n == self.len() {
            self.clear();
            return;
        }
        let cut = self.start_of(n);
        self.names.drain(..cut.name);
        self.codes.drain(..cut.codes);
        self.quals.drain(..cut.qual);
        self.ends.drain(..n);
        for e in &mut self.ends {
            e.name -= cut.name;
            e.codes -= cut.codes;
            e.qual -= cut.qual;
        }
    }

    /// No reads, the room kept.
    pub fn clear(&mut self) {
        self.names.clear();
        self.codes.clear();
        self.quals.clear();
        self.ends.clear();
    }

    /// Room for the reads of about `bytes` of FASTQ.
    pub(super) fn reserve_for_bytes(&mut self, bytes: usize, opts: ReadOptions) {
        // A FASTQ record of a 100 bp read is about 270 bytes, its name 20 to 60.
        self.ends.reserve(bytes / 128);
        self.codes.reserve(bytes / 2);
        if !opts.sequence_only {
            self.quals.reserve(bytes / 2);
            self.names.reserve(bytes / 4);
        }
    }

    /// Room for a batch of `n` reads like those of `like` (the batch's first chunk): as much
    /// per read as `like` holds, and an eighth more. A batch grown by doubling would hold up
    /// to twice what it needs, and copy its reads again at each step.
    pub(super) fn reserve_reads(&mut self, n: usize, like: &ReadBatch) {
        let per_read = |bytes: usize| (bytes * n / like.len().max(1)) * 9 / 8;
        self.ends.reserve(n);
        self.names.reserve(per_read(like.names.len()));
        self.codes.reserve(per_read(like.codes.len()));
        self.quals.reserve(per_read(like.quals.len()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn batch(reads: &[(&str, &str, &str, usize)], opts: ReadOptions) -> ReadBatch {
        let mut b = ReadBatch::default();
        for (name, seq, qual, len) in reads {
            b.push(name.as_bytes(), seq.as_bytes(), qual.as_bytes(), *len, opts);
        }
        b
    }

    const READS: [(&str, &str, &str, usize); 4] =
        [("a/1 x", "ACGTN", "IIII#", 4), ("bb", "gg", "", 2), ("", "T", "!", 1), ("d\u{e9}\tx", "ACG", "123", 3)];

    #[test]
    fn reads_come_back_as_pushed_and_move_in_order() {
        let all = batch(&READS, ReadOptions::default());
        let got: Vec<_> = all.iter().map(|r| (r.name, r.codes.to_vec(), r.qual, r.len, r.aligned().len())).collect();
        assert_eq!(got[0], ("a", vec![0, 1, 2, 3, 4], &b"IIII#"[..], 4, 4));
        assert_eq!(got[1], ("bb", vec![2, 2], &b""[..], 2, 2));
        assert_eq!(got[3].0, "d\u{e9}");
        for cuts in [[0, 1, 3], [2, 2, 4], [4, 0, 0], [1, 1, 1]] {
            let (mut left, mut into) = (all.clone(), ReadBatch::default());
            let mut pieces = Vec::new();
            for n in cuts {
                let mut piece = ReadBatch::default();
                left.move_front(n, &mut piece);
                pieces.push(piece);
            }
            for mut piece in pieces {
                let n = piece.len();
                piece.move_front(n, &mut into);
                assert!(piece.is_empty());
            }
            let n = left.len();
            left.move_front(n, &mut into);
            assert_eq!(into, all, "cuts {cuts:?}");
        }
        // A batch read into again: its reads replaced.
        let (mut reused, mut from) = (all.clone(), all.clone());
        reused.clear();
        from.move_front(2, &mut reused);
        assert_eq!(reused, batch(&READS[..2], ReadOptions::default()));
        let names: Vec<&str> = all.par_iter().map(|r| r.name).collect();
        assert_eq!(names, ["a", "bb", "", "d\u{e9}"]);
    }

    #[test]
    fn copies_of_a_range_are_the_reads_of_that_range() {
        let all = batch(&READS, ReadOptions::default());
        let mut some = batch(&READS[..1], ReadOptions::default());
        some.extend_from(&all, 2..4);
        let expected = batch(&[READS[0], READS[2], READS[3]], ReadOptions::default());
        assert_eq!(some, expected);
        some.extend_from(&all, 1..1);
        assert_eq!(some, expected);
    }

    /// aln's reads: the codes and aligned lengths alone, as in a whole read.
    #[test]
    fn sequence_only_keeps_the_codes_and_lengths() {
        let whole = batch(&READS, ReadOptions::default());
        let codes_only = batch(&READS, ReadOptions { sequence_only: true, ..Default::default() });
        assert!(codes_only.iter().all(|r| r.name.is_empty() && r.qual.is_empty()));
        let codes = |b: &ReadBatch| b.iter().map(|r| (r.codes.to_vec(), r.len)).collect::<Vec<_>>();
        assert_eq!(codes(&codes_only), codes(&whole));
        for i in 0..READS.len() {
            assert_eq!(codes_only.aligned(i), whole.get(i).aligned());
        }
        assert_eq!(codes_only.aligned_lens().collect::<Vec<_>>(), [4, 2, 1, 3]);
    }
}
