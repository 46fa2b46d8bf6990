//! One batch in flight on a GPU: its stream and its kernels' inputs and outputs (device
//! buffers with page-locked host copies, grown on demand and reused batch after batch).

use std::sync::Arc;

use anyhow::Result;
use cudarc::driver::{CudaContext, CudaSlice, CudaStream};

use super::buffers::{DeviceBuffer, Download, PinTimes, Upload};
use super::candidate_buffers::CandidateBuffers;
use super::MAX_PASSES;
use crate::sai::GapOptions;

/// The buffers of one batch in flight, on its own stream.
pub(super) struct Slot {
    pub(super) stream: Arc<CudaStream>,
    pub(super) exact_words: Upload<u32>,
    pub(super) exact_starts: Upload<u64>,
    pub(super) lens: Upload<u16>,
    pub(super) opt: Upload<u32>,
    /// The inexact reads' codes, a byte a base, unpacked on the GPU from `exact_words`.
    pub(super) codes: DeviceBuffer<u8>,
    pub(super) starts: Upload<u64>,
    pub(super) gpu_lens: Upload<u16>,
    pub(super) max_diffs: Upload<i32>,
    /// Each inexact read's index in the batch (inexact_order reads exact_match's answers by it).
    pub(super) read_of: Upload<u32>,
    /// The D arrays of the batch's inexact reads (read_widths): each read's, then each seed's.
    pub(super) widths: DeviceBuffer<u64>,
    pub(super) seed_widths: DeviceBuffer<u64>,
    /// With `root_chain`, the intervals of each read's root chain (k, l per depth, placed as
    /// its D array).
    pub(super) root_intervals: DeviceBuffer<u64>,
    pub(super) k: Download<u64>,
    pub(super) l: Download<u64>,
    pub(super) n_hits: Download<i32>,
    /// Each read's hit slots, which the passes write, and the hits in them packed for the copy
    /// back (`cuda/compact_hits.cu`) with where each chunk of reads starts there.
    pub(super) hits: DeviceBuffer<u64>,
    pub(super) packed_hits: Download<u64>,
    pub(super) hit_chunks: Download<u32>,
    /// The passes' read queues, one after the other (`N_LISTS` lists of the batch's inexact
    /// reads: each pass's, the reads left to the CPU, the no-hit pass's, and the reads' weights
    /// for the team passes' order, [`WEIGHT_LIST`]), and their counters. Only the GPU reads
    /// the queues.
    pub(super) queues: DeviceBuffer<u32>,
    pub(super) counters: Download<u32>,
    /// Occurrence lookups (BWT blocks read) of each pass, then of read_widths, then of the
    /// no-hit pass; then each pass's block residence in nanoseconds, then read_widths'.
    pub(super) lookups: Download<u64>,
    /// Hits of reads with more than HITS_PER_READ, and each such read's first one there.
    pub(super) long_hits: Download<u64>,
    pub(super) long_offsets: Download<u32>,
    /// The rung, trees and replay of the reads that occur whole (`exact_replay`).
    pub(super) replay: CandidateBuffers,
    /// The no-hit proof before the last pass (`proof_before_last`).
    pub(super) proof: CandidateBuffers,
}

impl Slot {
    /// Each upload's host time and page-locking, in one list for both sums.
    fn uploads(&self) -> [(f64, PinTimes); 8] {
        [
            (self.exact_words.busy_s, self.exact_words.pinned),
            (self.exact_starts.busy_s, self.exact_starts.pinned),
            (self.lens.busy_s, self.lens.pinned),
            (self.opt.busy_s, self.opt.pinned),
            (self.starts.busy_s, self.starts.pinned),
            (self.gpu_lens.busy_s, self.gpu_lens.pinned),
            (self.max_diffs.busy_s, self.max_diffs.pinned),
            (self.read_of.busy_s, self.read_of.pinned),
        ]
    }

    /// The host's time copying the batches' inputs into the staging buffers and queueing
    /// their copies.
    pub(super) fn upload_s(&self) -> f64 {
        self.uploads().iter().map(|u| u.0).sum()
    }

    /// The page-locking of the slot's host copies: staging and answers.
    pub(super) fn pinned(&self) -> PinTimes {
        let downloads = [
            self.k.pinned,
            self.l.pinned,
            self.n_hits.pinned,
            self.packed_hits.pinned,
            self.hit_chunks.pinned,
            self.counters.pinned,
            self.lookups.pinned,
            self.long_hits.pinned,
            self.long_offsets.pinned,
            self.replay.pinned(),
            self.proof.pinned(),
        ];
        self.uploads().into_iter().map(|u| u.1).chain(downloads).sum()
    }
}

/// A batch on the GPU (its slot's buffers, filled for it) with the BWT it is searched in, as
/// inexact_order, read_widths, the passes, the no-hit pass, the replay's rung and the proof
/// before the last pass read it: built once a batch, each takes its part.
pub(super) struct BatchOnGpu<'a> {
    /// The BWT as the search counts from it (the occurrence sectors with `occ_sectors`, else
    /// bwa's array; the candidates' kernels are compiled to match), its primary row and `l2`.
    pub words: &'a CudaSlice<u32>,
    pub primary: u64,
    pub l2: &'a CudaSlice<u64>,
    /// exact_match's answers (an interval per read of the batch), and each inexact read's index
    /// in the batch.
    pub exact_k: &'a CudaSlice<u64>,
    pub exact_l: &'a CudaSlice<u64>,
    pub read_of: &'a CudaSlice<u32>,
    /// The inexact reads: their codes back to back, each read's first code, length and maximum
    /// differences, and its hit count (which the passes, the replay and the proofs write).
    pub codes: &'a CudaSlice<u8>,
    pub starts: &'a CudaSlice<u64>,
    pub lens: &'a CudaSlice<u16>,
    pub max_diffs: &'a CudaSlice<i32>,
    pub n_hits: &'a CudaSlice<i32>,
    /// How many inexact reads and codes there are, the longest read, and the batch's options.
    pub n: usize,
    pub n_codes: usize,
    pub max_len: usize,
    pub opt: &'a GapOptions,
    /// The GPU's SMs, which the no-hit pass's threads fill.
    pub sms: usize,
}

/// Counters per batch: (queued, taken) per queue, then inexact_order's two (its queue's reads
/// without and with an exact match), the no-hit pass's four (its list's count, reads taken,
/// left to the passes, proved), then the long hits.
pub(super) const ORDER_COUNTERS: usize = 2 * (MAX_PASSES + 1);
pub(super) const NO_HIT_COUNTERS: usize = ORDER_COUNTERS + 2;
pub(super) const LONG_HITS_COUNTER: usize = NO_HIT_COUNTERS + 4;
pub(super) const N_COUNTERS: usize = LONG_HITS_COUNTER + 1;
/// The lists of [`Slot::queues`], and the counts of [`Slot::lookups`]: each list's lookups,
/// then each pass's block residence, RESIDENCE_COUNTS a pass (nanoseconds its blocks stayed on
/// their SMs, summed; the complement of its launch's first start; its last end, on the GPU's
/// clock).
pub(super) const N_LISTS: usize = MAX_PASSES + 3;
/// With `level_order`, each inexact read's weight (its root chain's, from read_widths), by its
/// index in the batch.
pub(super) const WEIGHT_LIST: usize = MAX_PASSES + 2;
pub(super) const N_LOOKUP_COUNTS: usize = MAX_PASSES + 2;
pub(super) const RESIDENCE_AT: usize = N_LOOKUP_COUNTS;
pub(super) const RESIDENCE_COUNTS: usize = 3;
/// read_widths' block residence, after the passes'.
pub(super) const WIDTHS_RESIDENCE_AT: usize = RESIDENCE_AT + RESIDENCE_COUNTS * MAX_PASSES;
/// Then each team pass's `-m` guard of the ladder's rungs (a test hook), GUARD_COUNTS a pass:
/// its teams' nanoseconds in it, the reads it judged, the reads it bounded.
pub(super) const GUARD_AT: usize = WIDTHS_RESIDENCE_AT + RESIDENCE_COUNTS;
pub(super) const GUARD_COUNTS: usize = 3;
pub(super) const N_KERNEL_COUNTS: usize = GUARD_AT + GUARD_COUNTS * MAX_PASSES;

impl Slot {
    pub(super) fn new(ctx: &Arc<CudaContext>) -> Result<Slot> {
        Ok(Slot {
            stream: ctx.new_stream()?,
            exact_words: Upload::new(),
            exact_starts: Upload::new(),
            lens: Upload::new(),
            opt: Upload::new(),
            codes: DeviceBuffer::new(),
            starts: Upload::new(),
            gpu_lens: Upload::new(),
            max_diffs: Upload::new(),
            read_of: Upload::new(),
            widths: DeviceBuffer::new(),
            seed_widths: DeviceBuffer::new(),
            root_intervals: DeviceBuffer::new(),
            k: Download::new(),
            l: Download::new(),
            n_hits: Download::new(),
            hits: DeviceBuffer::new(),
            packed_hits: Download::new(),
            hit_chunks: Download::new(),
            queues: DeviceBuffer::new(),
            counters: Download::new(),
            lookups: Download::new(),
            long_hits: Download::new(),
            long_offsets: Download::new(),
            replay: CandidateBuffers::new(),
            proof: CandidateBuffers::new(),
        })
    }
}
