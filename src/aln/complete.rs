//! The CPU's part of every batch: the reads the GPU could not hold (or all of them, without a
//! GPU or after a failed GPU batch) aligned by the CPU search, merged with the GPU's answers in
//! input order.

use rayon::prelude::*;

use crate::aln_options::batch_options;
use crate::reads::ReadBatch;
use crate::sai::{AlnHit, GapOptions};
use crate::search::{align_read, Scratch};

/// The batch's hits in input order: the GPU's where it has them, the CPU oracle's for the
/// rest (all reads when the GPU batch failed). Returns the hits and how many reads the CPU did.
pub fn complete_on_cpu(
    bwt: &bcuda_index::Bwt,
    reads: &ReadBatch,
    opt: &GapOptions,
    gpu: Option<Vec<Option<Vec<AlnHit>>>>,
    read_done: &(dyn Fn() + Sync),
) -> (Vec<Vec<AlnHit>>, usize) {
    let gpu = gpu.unwrap_or_else(|| vec![None; reads.len()]);
    let fallback = gpu.iter().filter(|r| r.is_none()).count();
    let batch_opt = batch_options(opt, reads.aligned_lens().max().unwrap_or(0));
    let hits = gpu
        .into_par_iter()
        .enumerate()
        .with_min_len(256)
        .map_init(Scratch::default, |scratch, (i, r)| {
            let hits = r.unwrap_or_else(|| align_read(bwt, reads.aligned(i), &batch_opt, scratch));
            read_done();
            hits
        })
        .collect();
    (hits, fallback)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::batch::GpuAnswers;
    use crate::gpu::HostBatch;

    /// Reads the GPU answered keep its hits, the others are aligned by the CPU oracle: the
    /// merged batch equals the CPU's whole answer (demo reference and reads).
    #[test]
    fn gpu_answers_merge_with_the_cpu_oracle() {
        let dir = tempfile::tempdir().unwrap();
        let testdata = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata");
        let prefix = dir.path().join("demo_ref.fa");
        std::fs::copy(testdata.join("demo_ref.fa"), &prefix).unwrap();
        bcuda_index::build_index(&prefix, &prefix, bcuda_index::BuildOptions::default()).unwrap();
        let bwt = bcuda_index::Bwt::load(&bcuda_index::with_ext(&prefix, ".bwt")).unwrap();
        let mut reader = crate::reads::ReadBatchReader::open(&testdata.join("demo.fq"), Default::default()).unwrap();
        let reads = reader.next_batch(1 << 20).unwrap();
        let opt = GapOptions::default();
        let (cpu, all_on_cpu) = complete_on_cpu(&bwt, &reads, &opt, None, &|| {});
        assert_eq!(all_on_cpu, reads.len());
        assert!(cpu.iter().any(|h| h.len() > 1), "the demo has reads with several hits");

        // The "GPU" answers every other read with the oracle's hits, encoded as the kernels
        // write them (packed read after read; reads with more hits than their slot in the long
        // list), and flags the rest as overflowed.
        let batch = HostBatch::new(&reads, &opt, true);
        let per_read = 1;
        let (mut n_hits, mut hits, mut firsts) = (Vec::new(), Vec::new(), Vec::new());
        let (mut long_hits, mut long_offsets) = (Vec::new(), vec![0u32; batch.gpu_reads.len()]);
        let words = |hit: &AlnHit| {
            hit.to_bytes().chunks(8).map(|c| u64::from_le_bytes(c.try_into().unwrap())).collect::<Vec<u64>>()
        };
        for (j, &i) in batch.gpu_reads.iter().enumerate() {
            let mine = &cpu[i as usize];
            firsts.push((hits.len() / 3) as u32);
            if j % 2 == 1 {
                n_hits.push(-1);
                continue;
            }
            n_hits.push(mine.len() as i32);
            if mine.len() <= per_read {
                mine.iter().for_each(|hit| hits.extend(words(hit)));
            } else {
                long_offsets[j] = (long_hits.len() / 3) as u32;
                mine.iter().for_each(|hit| long_hits.extend(words(hit)));
            }
        }
        assert!(!long_hits.is_empty(), "some reads use the long hit list");
        let answers = GpuAnswers {
            n_hits: &n_hits,
            hits: &hits,
            firsts: &firsts,
            hits_per_read: per_read,
            long_hits: &long_hits,
            long_offsets: &long_offsets,
        };
        let (merged, on_cpu) = complete_on_cpu(&bwt, &reads, &opt, Some(answers.to_hits(&batch)), &|| {});
        assert_eq!(merged, cpu);
        let answered = n_hits.iter().filter(|&&c| c >= 0).count();
        assert!(answered > 0 && on_cpu == reads.len() - answered);
    }
}
