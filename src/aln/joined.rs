//! Joined batches: consecutive bwa batches of one end read as one batch of the pipeline, where
//! their options are the same. bwa caps a batch's gap opens by its longest read
//! ([`batch_options`]), which is the only way a batch enters a read's answer; so a read in a
//! join of batches with equal options is searched as in its own bwa batch, and the `.sai` is
//! bwa's. On a GPU a larger launch spends less of its time in the tail of each pass, where a
//! few heavy reads hold mostly idle SMs.
//!
//! The joins grow from one bwa batch to the most allowed (1, 2, 3, ...), so that the GPUs start
//! on a batch as small as bwa's while the pipeline fills.

use crate::aln_options::batch_options;
use crate::reads::{ReadBatch, ReadBatchReader, ReadsError};
use crate::sai::GapOptions;

/// Reads each end's joined batches: bwa batches of `bwa_batch` reads, at most `most` a join.
pub struct Joiner {
    bwa_batch: usize,
    most: usize,
    opt: GapOptions,
    /// Per end: the bwa batches read but not yet sent (they start the next join), and the
    /// joins sent so far.
    pending: Vec<ReadBatch>,
    sent: Vec<usize>,
    /// A batch to read the rest of a join into, kept between joins for its buffers.
    spare: ReadBatch,
}

impl Joiner {
    pub fn new(ends: usize, bwa_batch: usize, most: usize, opt: &GapOptions) -> Joiner {
        let pending = vec![ReadBatch::default(); ends];
        Joiner { bwa_batch, most: most.max(1), opt: *opt, pending, sent: vec![0; ends], spare: ReadBatch::default() }
    }

    /// End `end`'s next join, read into `into` (its reads replaced; empty at the end of the
    /// input): bwa's next batches of `reader`, as many as the join may take that share the
    /// first one's options.
    pub fn next(
        &mut self,
        reader: &mut ReadBatchReader,
        end: usize,
        mut into: ReadBatch,
    ) -> Result<ReadBatch, ReadsError> {
        let want = self.bwa_batch * self.most.min(self.sent[end] + 1);
        into.clear();
        std::mem::swap(&mut into, &mut self.pending[end]);
        if into.is_empty() {
            reader.next_batch_into(&mut into, want)?;
        } else if into.len() < want {
            reader.next_batch_into(&mut self.spare, want - into.len())?;
            into.extend_from(&self.spare, 0..self.spare.len());
        }
        let alike = self.alike_batches(&into);
        self.pending[end] = into.split_off(alike * self.bwa_batch);
        self.sent[end] += 1;
        Ok(into)
    }

    /// How many of `reads`' bwa batches, from the first, have the first one's options.
    fn alike_batches(&self, reads: &ReadBatch) -> usize {
        let lens: Vec<usize> = reads.aligned_lens().collect();
        let mut options =
            lens.chunks(self.bwa_batch).map(|b| batch_options(&self.opt, b.iter().copied().max().unwrap_or(0)));
        let Some(first) = options.next() else { return 0 };
        1 + options.take_while(|o| *o == first).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reads::ReadOptions;

    /// A reader of FASTA reads of the given lengths, named by their number.
    fn reader(lens: &[usize]) -> ReadBatchReader {
        let fasta: String = lens.iter().enumerate().map(|(i, &n)| format!(">r{i}\n{}\n", "A".repeat(n))).collect();
        let input = Box::new(std::io::Cursor::new(fasta.into_bytes()));
        ReadBatchReader::from_reader(input, std::path::Path::new("reads.fa"), 0, ReadOptions::default())
            .expect("in-memory reads")
    }

    fn names(b: &ReadBatch) -> Vec<String> {
        b.iter().map(|r| r.name.to_string()).collect()
    }

    /// `-n 0.04 -o 3`: a batch whose longest read is 20 bases allows 2 differences, so its gap
    /// opens are capped at 2; one with a 100-base read allows 3.
    fn capped_options() -> GapOptions {
        GapOptions { max_gapo: 3, ..GapOptions::default() }
    }

    #[test]
    fn joins_grow_and_end_where_the_options_change() {
        let opt = capped_options();
        assert_ne!(batch_options(&opt, 20), batch_options(&opt, 100), "the test needs two options");
        // bwa batches of 3 reads: 6 of 20 bases, one with a 100-base read, then 20 bases again.
        let mut lens = vec![20; 6];
        lens.extend([20, 100, 20]);
        lens.extend(vec![20; 10]);
        let mut r = reader(&lens);
        let mut joiner = Joiner::new(1, 3, 4, &opt);
        let mut sizes = Vec::new();
        let mut all = Vec::new();
        loop {
            let b = joiner.next(&mut r, 0, ReadBatch::default()).unwrap();
            if b.is_empty() {
                break;
            }
            sizes.push(b.len());
            all.extend(names(&b));
        }
        // 3 (the first join is one batch), 3 (two wanted, the second has other options),
        // 3 (the 100-base batch alone: the next has other options), then the last 10 reads
        // (four batches wanted).
        assert_eq!(sizes, [3, 3, 3, 10]);
        assert_eq!(all, (0..lens.len()).map(|i| format!("r{i}")).collect::<Vec<_>>());
    }

    #[test]
    fn ends_are_joined_apart() {
        let opt = GapOptions::default();
        let (mut a, mut b) = (reader(&[30; 7]), reader(&[40; 7]));
        let mut joiner = Joiner::new(2, 2, 2, &opt);
        let mut got = Vec::new();
        for _ in 0..4 {
            got.push(joiner.next(&mut a, 0, ReadBatch::default()).unwrap().len());
            got.push(joiner.next(&mut b, 1, ReadBatch::default()).unwrap().len());
        }
        assert_eq!(got, [2, 2, 4, 4, 1, 1, 0, 0]);
    }
}
