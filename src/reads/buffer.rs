//! What the reader fills with reads: a `Vec` of [`ReadSeq`] (aln's packer takes those), or a
//! [`ReadBatch`], whose reads' names, bases and qualities lie back to back in three buffers
//! (samse and sampe, which need all three: three allocations per read otherwise, made on the
//! parser threads and freed on another).

use rayon::prelude::*;

use super::chunk::name_of;
use super::{base_code, ReadOptions, ReadSeq};

/// A container of reads in input order, filled by the parser and cut into batches.
pub trait ReadBuffer: Default + Send + 'static {
    fn len(&self) -> usize;

    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Room for the reads of about `bytes` of FASTQ.
    fn reserve_for_bytes(&mut self, bytes: usize);

    /// Room for a batch of `n` reads like those of `like` (the batch's first chunk).
    fn reserve_reads(&mut self, n: usize, like: &Self);

    /// Adds a read: `id` its header line (bwa names the read after it), `seq` as in the file,
    /// `qual` after `-I` (empty for FASTA), `len` the length aligned after `-q` trimming.
    fn push(&mut self, id: &[u8], seq: &[u8], qual: &[u8], len: usize, opts: ReadOptions);

    /// Moves the first `n` reads (at most all) to the end of `into`.
    fn move_front(&mut self, n: usize, into: &mut Self);

    /// No reads, the room kept.
    fn clear(&mut self);
}

impl ReadBuffer for Vec<ReadSeq> {
    fn len(&self) -> usize {
        Vec::len(self)
    }

    fn reserve_for_bytes(&mut self, bytes: usize) {
        self.reserve(bytes / 128);
    }

    fn reserve_reads(&mut self, n: usize, _like: &Self) {
        self.reserve(n);
    }

    fn push(&mut self, id: &[u8], seq: &[u8], qual: &[u8], len: usize, opts: ReadOptions) {
        let codes = seq.iter().map(|&b| base_code(b)).collect();
        Vec::push(
            self,
            if opts.sequence_only {
                // No name: finding it costs a scan of the header (a few percent of the parse).
                ReadSeq { codes, len, ..Default::default() }
            } else {
                ReadSeq { name: String::from_utf8_lossy(name_of(id)).into_owned(), codes, qual: qual.to_vec(), len }
            },
        );
    }

    fn move_front(&mut self, n: usize, into: &mut Self) {
        if n >= Vec::len(self) {
            into.append(self);
        } else {
            into.extend(self.drain(..n));
        }
    }

    fn clear(&mut self) {
        Vec::clear(self);
    }
}

/// One read of a [`ReadBatch`]: the fields of a [`ReadSeq`], borrowed.
#[derive(Clone, Copy, Debug)]
pub struct ReadRef<'a> {
    pub name: &'a str,
    /// Base codes in read orientation, the whole read (before trimming).
    pub codes: &'a [u8],
    /// Phred+33 qualities as in the file (empty for FASTA), after `-I` conversion.
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

    pub fn iter(&self) -> impl ExactSizeIterator<Item = ReadRef<'_>> + '_ {
        (0..self.len()).map(|i| self.get(i))
    }

    pub fn par_iter(&self) -> impl IndexedParallelIterator<Item = ReadRef<'_>> + '_ {
        (0..self.len()).into_par_iter().map(|i| self.get(i))
    }

    /// Where read `n` starts in each buffer (the end of the buffers for `n == len`).
    fn start_of(&self, n: usize) -> Ends {
        if n == 0 {
            Ends::default()
        } else {
            self.ends[n - 1]
        }
    }
}

impl ReadBuffer for ReadBatch {
    fn len(&self) -> usize {
        self.ends.len()
    }

    fn reserve_for_bytes(&mut self, bytes: usize) {
        // A FASTQ record of a 100 bp read is about 270 bytes, its name 20 to 60.
        self.ends.reserve(bytes / 128);
        self.codes.reserve(bytes / 2);
        self.quals.reserve(bytes / 2);
        self.names.reserve(bytes / 4);
    }

    /// As much per read as `like` holds, and an eighth more: a batch grown by doubling would
    /// hold up to twice what it needs, and copy its reads again at each step.
    fn reserve_reads(&mut self, n: usize, like: &Self) {
        let per_read = |bytes: usize| (bytes * n / like.len().max(1)) * 9 / 8;
        self.ends.reserve(n);
        self.names.reserve(per_read(like.names.len()));
        self.codes.reserve(per_read(like.codes.len()));
        self.quals.reserve(per_read(like.quals.len()));
    }

    fn push(&mut self, id: &[u8], seq: &[u8], qual: &[u8], len: usize, _opts: ReadOptions) {
        // Names are text in the SAM output: invalid UTF-8 shows as U+FFFD, as it did when each
        // read's name was a String.
        self.names.push_str(&String::from_utf8_lossy(name_of(id)));
        self.codes.extend(seq.iter().map(|&b| base_code(b)));
        self.quals.extend_from_slice(qual);
        self.ends.push(Ends { name: self.names.len(), codes: self.codes.len(), qual: self.quals.len(), len });
    }

    fn move_front(&mut self, n: usize, into: &mut Self) {
        let n = n.min(self.len());
        let (base, cut) = (into.start_of(into.len()), self.start_of(n));
        into.names.push_str(&self.names[..cut.name]);
        into.codes.extend_from_slice(&self.codes[..cut.codes]);
        into.quals.extend_from_slice(&self.quals[..cut.qual]);
        into.ends.extend(self.ends[..n].iter().map(|e| Ends {
            name: base.name + e.name,
            codes: base.codes + e.codes,
            qual: base.qual + e.qual,
            len: e.len,
        }));
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

    fn clear(&mut self) {
        self.names.clear();
        self.codes.clear();
        self.quals.clear();
        self.ends.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn batch(reads: &[(&str, &str, &str, usize)]) -> ReadBatch {
        let mut b = ReadBatch::default();
        for (name, seq, qual, len) in reads {
            b.push(name.as_bytes(), seq.as_bytes(), qual.as_bytes(), *len, ReadOptions::default());
        }
        b
    }

    #[test]
    fn reads_come_back_as_pushed_and_move_in_order() {
        let reads =
            [("a/1 x", "ACGTN", "IIII#", 4), ("bb", "gg", "", 2), ("", "T", "!", 1), ("d\u{e9}\tx", "ACG", "123", 3)];
        let all = batch(&reads);
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
            }
            let n = left.len();
            left.move_front(n, &mut into);
            assert_eq!(into, all, "cuts {cuts:?}");
        }
        // A batch read into again: its reads replaced.
        let (mut reused, mut from) = (all.clone(), all.clone());
        reused.clear();
        from.move_front(2, &mut reused);
        assert_eq!(reused, batch(&reads[..2]));
        let names: Vec<&str> = all.par_iter().map(|r| r.name).collect();
        assert_eq!(names, ["a", "bb", "", "d\u{e9}"]);
    }
}
