//! One batch queued on its slot's stream: its inputs copied to the GPU, exact_match, the queue
//! order, the D arrays (read_widths), each pass of the inexact search, and the answers copied
//! back, with GPU events around the kernels ([`InFlight`](super::InFlight)'s).

use std::sync::Arc;

use anyhow::{Context, Result};
use cudarc::driver::{sys, CudaEvent, CudaFunction, CudaSlice, CudaStream, LaunchArgs, LaunchConfig, PushKernelArg};

use super::batch::HostBatch;
use super::candidate_buffers::CandidateBuffers;
use super::compact_hits;
use super::exact_replay::{self, BatchReplay};
use super::inexact::{self, PassKind, Scratchpad};
use super::no_hit::{self, NO_HIT_LIST};
use super::proof_pass::{self, ProofInputs};
use super::rungs;
use super::slot::{
    BatchOnGpu, Slot, GUARD_AT, GUARD_COUNTS, LONG_HITS_COUNTER, NO_HIT_COUNTERS, N_COUNTERS, N_KERNEL_COUNTS, N_LISTS,
    ORDER_COUNTERS, RESIDENCE_AT, RESIDENCE_COUNTS, WEIGHT_LIST, WIDTHS_RESIDENCE_AT,
};
use super::unpack_codes;
use super::{buffers, long_hits_room, timing_event, ExactArgs, GpuAligner, MAX_PASSES};

/// The arguments of inexact_search but for the scratchpad and the queues.
struct SearchArgs<'a> {
    index: &'a GpuAligner,
    batch: &'a BatchOnGpu<'a>,
    opt: &'a CudaSlice<u32>,
    widths: &'a CudaSlice<u64>,
    seed_widths: &'a CudaSlice<u64>,
    seed_stride: i32,
    root_intervals: &'a CudaSlice<u64>,
    max_len: i32,
    n_buckets: i32,
    hits: &'a CudaSlice<u64>,
    hits_per_read: i32,
}

impl<'a> SearchArgs<'a> {
    /// The arguments of inexact_search (Thread passes: `size` is the stack entries per thread)
    /// or inexact_level (Warp passes: `size` is the chunks per warp), up to the queues.
    fn push(&'a self, launch: &mut LaunchArgs<'a>, scratch: &'a Scratchpad, size: &'a i32) {
        self.push_reads(launch);
        self.push_read_scratch(launch, scratch);
        launch.arg(&scratch.entries).arg(&scratch.ints).arg(size).arg(&self.n_buckets);
        match scratch.pass.kind {
            PassKind::Thread => launch.arg(&self.index.first_max_pops).arg(&self.index.first_rule),
            PassKind::Warp => launch.arg(&scratch.lane_buffers).arg(self.root_intervals),
        };
        self.push_hits(launch);
    }

    /// What every search kernel (the passes, inexact_replay) starts with: the BWT and interval
    /// table, the batch's options, its inexact reads and their D arrays.
    fn push_reads(&'a self, launch: &mut LaunchArgs<'a>) {
        let (x, batch) = (self.index, self.batch);
        launch.arg(x.search_words()).arg(&x.primary).arg(&x.seq_len).arg(&x.l2);
        launch.arg(&x.intervals.table).arg(&x.intervals.depth).arg(self.opt);
        launch.arg(batch.codes).arg(batch.starts).arg(batch.lens).arg(batch.max_diffs);
        launch.arg(self.widths).arg(self.seed_widths).arg(&self.seed_stride);
    }

    /// A thread's copies of its read's D arrays and sequence in `scratch`, and their length.
    fn push_read_scratch(&'a self, launch: &mut LaunchArgs<'a>, scratch: &'a Scratchpad) {
        launch.arg(&scratch.width).arg(&scratch.seed_width).arg(&scratch.seq).arg(&self.max_len);
    }

    /// Where the hits go: the slots, their count a read, and each read's hit count.
    fn push_hits(&'a self, launch: &mut LaunchArgs<'a>) {
        launch.arg(self.hits).arg(&self.hits_per_read).arg(self.batch.n_hits);
    }
}

/// Where read_widths writes: the D arrays, the seeds' (`seed_stride` cells each), the root
/// chains' intervals, its lookups and its blocks' residence.
struct WidthOutputs<'a> {
    widths: &'a mut CudaSlice<u64>,
    seed_widths: &'a mut CudaSlice<u64>,
    seed_stride: usize,
    root_intervals: &'a mut CudaSlice<u64>,
    root_weights: &'a cudarc::driver::CudaView<'a, u32>,
    lookups: &'a cudarc::driver::CudaView<'a, u64>,
    residence: &'a cudarc::driver::CudaView<'a, u64>,
}

/// The events around a batch's kernels: exact_match's, read_widths', each pass's start and end
/// (see [`InFlight`](super::InFlight)), the no-hit pass's when it runs, the rung's and the
/// replay's when `exact_replay` runs, and the proof's before the last pass when it runs.
pub(super) type BatchEvents = (Vec<CudaEvent>, Option<[CudaEvent; 2]>, Option<[CudaEvent; 4]>, Option<[CudaEvent; 2]>);

/// The lists that link the passes: each pass's read queue and counters (see
/// [`Slot::queues`]), each pass's occurrence lookups, and the long hits of the team passes.
struct PassLists<'a> {
    queues: &'a CudaSlice<u32>,
    counters: &'a CudaSlice<u32>,
    lookups: &'a CudaSlice<u64>,
    long_hits: &'a CudaSlice<u64>,
    long_offsets: &'a CudaSlice<u32>,
    /// Length of each queue: the batch's inexact reads (at least 1).
    list_len: usize,
}

impl GpuAligner {
    /// Queues batch `b` on `slot` (its stream, its buffers) with `exact_f` as exact_match and
    /// the passes' scratch set `set`; returns the events around its kernels.
    pub(super) fn queue(
        &mut self,
        slot: &mut Slot,
        b: &HostBatch,
        exact_f: &CudaFunction,
        set: usize,
    ) -> Result<BatchEvents> {
        let stream = slot.stream.clone();
        let (n, n_gpu) = (b.n, b.gpu_reads.len());
        self.poison_scratch(&stream, set)?;
        let by_root = self.inexact_switches.orders_by_root();
        let mut events = Vec::from(self.queue_exact(slot, b, exact_f)?);

        let opt_words: [u32; 16] = bytemuck::cast(b.opt);
        let d_opt = slot.opt.put(&stream, &opt_words)?;
        let starts = slot.starts.put(&stream, &b.starts)?;
        let gpu_lens = slot.gpu_lens.put(&stream, &b.gpu_lens)?;
        // With the ladder's rungs the passes read each read's limit in the rung beside its own.
        let max_diffs = slot.max_diffs.put(&stream, &rungs::limits(self.ladder.as_deref(), &b.max_diffs))?;
        let read_of = slot.read_of.put(&stream, &b.gpu_reads)?;
        let (codes, _) = slot.codes.reserve(&stream, b.n_codes)?;
        let packed = unpack_codes::PackedReads {
            words: slot.exact_words.uploaded()?,
            starts: slot.exact_starts.uploaded()?,
            stride: b.stride,
        };
        let inexact_reads = unpack_codes::InexactReads { read_of, starts, lens: gpu_lens, n: n_gpu };
        unpack_codes::launch(&stream, &self.unpack, &packed, &inexact_reads, codes)?;
        let n_hits = slot.n_hits.reserve(&stream, n_gpu)?;
        let (hits, _) = slot.hits.reserve(&stream, n_gpu * self.hits_per_read * 3)?;
        let (queues, _) = slot.queues.reserve(&stream, n_gpu.max(1) * N_LISTS)?;
        let counters = slot.counters.reserve(&stream, N_COUNTERS)?;
        stream.memset_zeros(counters)?;
        let lookups = slot.lookups.reserve(&stream, N_KERNEL_COUNTS)?;
        stream.memset_zeros(lookups)?;
        let long_room = long_hits_room(n_gpu);
        let long_hits = slot.long_hits.reserve_host(&stream, long_room * 3, self.host_room.long_words(long_room))?;
        let long_offsets = slot.long_offsets.reserve(&stream, n_gpu)?;
        if self.poison {
            buffers::poison(&stream, n_hits)?;
            buffers::poison(&stream, hits)?;
            buffers::poison(&stream, queues)?;
            buffers::poison(&stream, long_hits)?;
            buffers::poison(&stream, long_offsets)?;
        }
        // The first queue: reads without an exact match first (see inexact_order); the no-hit
        // pass's, when it runs. With the replay, the reads it takes are marked first and left out.
        let no_hit = self.no_hit.clone().filter(|_| n_gpu > 0);
        let replay_on = self.inexact_switches.exact_replay && n_gpu > 0 && no_hit.is_none();
        let replay_kernels = self.candidates.as_ref().filter(|_| replay_on && exact_replay::applies(&b.opt));
        let (k, l) = (&*slot.k.reserve(&stream, n)?, &*slot.l.reserve(&stream, n)?);
        let batch = self.batch_on_gpu(b, (k, l, read_of), (codes, starts, gpu_lens), (max_diffs, n_hits));
        let entry_bytes = self.inexact_switches.entry_bytes();
        let mut replay = replay_kernels
            .map(|kn| BatchReplay::mark(kn, &mut slot.replay, &stream, &batch, entry_bytes))
            .transpose()?;
        let replayed = replay.as_ref().map_or(0, |r| r.status);
        let list = if no_hit.is_some() { NO_HIT_LIST } else { 0 };
        if n_gpu > 0 && !by_root {
            self.launch_order(&stream, &batch, (queues, counters), (list, replayed), None)?;
        }
        // The D arrays: each read's (its length + 1 cells, after those of the reads before it),
        // then each seed's (reads longer than the seed; seed_stride cells each).
        let seed_stride = (b.opt.seed_len.max(0) as usize).min(b.max_len) + 1;
        let (widths, _) = slot.widths.reserve(&stream, b.n_codes + n_gpu)?;
        let (seed_widths, _) = slot.seed_widths.reserve(&stream, n_gpu * seed_stride)?;
        // The root chains' intervals: two words per cell of the D arrays (root_chain).
        let root_chain = self.inexact_switches.root_chain;
        let root_len = if root_chain { 2 * (b.n_codes + n_gpu) } else { 2 };
        let (root_intervals, _) = slot.root_intervals.reserve(&stream, root_len)?;
        for buffer in [&mut *widths, &mut *seed_widths, &mut *root_intervals].into_iter().filter(|_| self.poison) {
            buffers::poison(&stream, buffer)?;
        }
        events.push(timing_event(&stream)?);
        if n_gpu > 0 {
            let outputs = WidthOutputs {
                widths: &mut *widths,
                seed_widths: &mut *seed_widths,
                seed_stride,
                root_intervals: &mut *root_intervals,
                root_weights: &queues.slice(WEIGHT_LIST * n_gpu..(WEIGHT_LIST + 1) * n_gpu),
                lookups: &lookups.slice(MAX_PASSES..MAX_PASSES + 1),
                residence: &lookups.slice(WIDTHS_RESIDENCE_AT..WIDTHS_RESIDENCE_AT + RESIDENCE_COUNTS),
            };
            self.launch_widths(&stream, d_opt, &batch, outputs)?;
        }
        events.push(timing_event(&stream)?);
        if n_gpu > 0 && by_root {
            self.launch_order(&stream, &batch, (queues, counters), (list, replayed), Some(root_intervals))?;
        }
        if let Some(r) = &mut replay {
            r.queue_ladder(&mut slot.replay, &stream, &batch)?;
        }
        let args = SearchArgs {
            index: self,
            batch: &batch,
            opt: d_opt,
            widths,
            seed_widths,
            seed_stride: seed_stride as i32,
            root_intervals,
            max_len: b.max_len.max(1) as i32,
            n_buckets: b.n_buckets,
            hits,
            hits_per_read: self.hits_per_read as i32,
        };
        let lists = PassLists { queues, counters, lookups, long_hits, long_offsets, list_len: n_gpu.max(1) };
        let no_hit_events = no_hit.as_ref().map(|kn| self.queue_no_hit(kn, &stream, &args, &lists)).transpose()?;
        let bufs = (&mut slot.replay, &mut slot.proof);
        let (free_events, proof_events) =
            self.queue_passes(&stream, set, (&args, &lists), replay.as_mut(), bufs, &mut events)?;
        for (pass, free) in self.passes.iter_mut().zip(free_events) {
            pass.sets[set].free = Some(free);
        }
        self.fetch_answers(slot, if by_root { 0 } else { n }, n_gpu)?;
        let replay_events = replay.map(|r| r.finish(&mut slot.replay, &stream)).transpose()?;
        Ok((events, no_hit_events, replay_events, proof_events))
    }

    /// The passes on the batch's queue: the events after each pass's last use of set `set`'s
    /// scratch, and the proof's before the last pass.
    fn queue_passes(
        &self,
        stream: &Arc<CudaStream>,
        set: usize,
        (args, lists): (&SearchArgs, &PassLists),
        mut replay: Option<&mut BatchReplay>,
        (replay_bufs, proof_bufs): (&mut CandidateBuffers, &mut CandidateBuffers),
        events: &mut Vec<CudaEvent>,
    ) -> Result<(Vec<CudaEvent>, Option<[CudaEvent; 2]>)> {
        let (mut free_events, mut proof_events) = (Vec::new(), None);
        for p in 0..self.passes.len() {
            // The scratchpads are shared by the slots' streams: wait for the previous batch on
            // this set to finish with this pass's.
            if let Some(free) = &self.passes[p].sets[set].free {
                stream.wait(free)?;
            }
            let bufs = (&mut *replay_bufs, &mut *proof_bufs);
            proof_events =
                self.before_pass(stream, (set, p), (args, lists), replay.as_deref_mut(), bufs)?.or(proof_events);
            events.push(timing_event(stream)?);
            self.launch_pass(stream, p, set, args, lists, args.n_buckets)?;
            events.push(timing_event(stream)?);
            free_events.push(stream.record_event(None)?);
        }
        Ok((free_events, proof_events))
    }

    /// With poisoning on, each pass's scratch of set `set`, once the batch before has finished
    /// with it (before the batch's first kernel).
    fn poison_scratch(&mut self, stream: &Arc<CudaStream>, set: usize) -> Result<()> {
        if !self.poison {
            return Ok(());
        }
        for pass in self.passes.iter_mut() {
            let scratch_set = &mut pass.sets[set];
            if let Some(free) = &scratch_set.free {
                stream.wait(free)?;
            }
            scratch_set.scratch.poison(stream)?;
        }
        Ok(())
    }

    /// read_widths: the D arrays of the batch's inexact reads, their seeds' and (with
    /// root_chain) their root chains' intervals.
    fn launch_widths(
        &self,
        stream: &Arc<CudaStream>,
        d_opt: &CudaSlice<u32>,
        batch: &BatchOnGpu,
        out: WidthOutputs,
    ) -> Result<()> {
        let threads = if self.inexact_switches.root_chain { 3 } else { 2 } * batch.n as u32;
        let block = super::WIDTHS_BLOCK;
        let cfg =
            LaunchConfig { grid_dim: (threads.div_ceil(block), 1, 1), block_dim: (block, 1, 1), shared_mem_bytes: 0 };
        let (n32, stride32) = (batch.n as u32, out.seed_stride as i32);
        let mut launch = stream.launch_builder(&self.inexact.widths);
        launch.arg(self.search_words()).arg(&self.primary).arg(&self.seq_len).arg(&self.l2).arg(d_opt);
        launch.arg(batch.codes).arg(batch.starts).arg(batch.lens).arg(&n32);
        launch.arg(out.widths).arg(out.seed_widths).arg(&stride32).arg(out.root_intervals).arg(out.root_weights);
        launch.arg(out.lookups).arg(out.residence);
        // SAFETY: argument order and types match read_widths' signature.
        unsafe { launch.launch(cfg) }.context("launching read_widths")?;
        Ok(())
    }

    /// The no-hit pass on the reads of the pass's list (see [`no_hit`]), between two events:
    /// the reads it leaves, then those with an exact match, make pass 1's queue.
    fn queue_no_hit(
        &self,
        kernels: &no_hit::NoHitKernels,
        stream: &Arc<CudaStream>,
        args: &SearchArgs,
        lists: &PassLists,
    ) -> Result<[CudaEvent; 2]> {
        let list = |p: usize| lists.queues.slice(p * lists.list_len..(p + 1) * lists.list_len);
        let a = no_hit::NoHitArgs {
            batch: args.batch,
            bwa_words: &self.words,
            max_lookups: self.inexact_switches.no_hit_budget,
            queue: list(NO_HIT_LIST),
            order_counters: lists.counters.slice(ORDER_COUNTERS..ORDER_COUNTERS + 2),
            counters: lists.counters.slice(NO_HIT_COUNTERS..NO_HIT_COUNTERS + 4),
            next_queue: list(0),
            next_counters: lists.counters.slice(0..2),
            lookups: lists.lookups.slice(MAX_PASSES + 1..MAX_PASSES + 2),
        };
        let before = timing_event(stream)?;
        no_hit::launch(kernels, stream, &a, self.inexact_switches.block_w)?;
        Ok([before, timing_event(stream)?])
    }

    /// exact_match on the batch's reads: their codes copied to the GPU, then the kernel between
    /// the two events returned; with `root_order` neither (the root chains give pass 1's order).
    fn queue_exact(&self, slot: &mut Slot, b: &HostBatch, exact_f: &CudaFunction) -> Result<[CudaEvent; 2]> {
        let stream = &slot.stream;
        // The inexact kernels' codes are unpacked from exact_match's reads: uploaded either way.
        let reads = slot.exact_words.put(stream, &b.exact_words)?;
        let starts = slot.exact_starts.put(stream, &b.exact_starts)?;
        if self.inexact_switches.orders_by_root() {
            return Ok([timing_event(stream)?, timing_event(stream)?]);
        }
        let lens = slot.lens.put(stream, &b.lens)?;
        let k = slot.k.reserve(stream, b.n)?;
        let l = slot.l.reserve(stream, b.n)?;
        if self.poison {
            buffers::poison(stream, k)?;
            buffers::poison(stream, l)?;
        }
        let before = timing_event(stream)?;
        let args = ExactArgs { reads, starts, lens, n: b.n, fixed_len: b.fixed_len.unwrap_or(0) };
        self.launch_exact(stream, exact_f, args, k, l)?;
        Ok([before, timing_event(stream)?])
    }

    /// inexact_order: the queue of list `list` (pass 1's, or the no-hit pass's), the reads
    /// without an exact match first, by exact_match's intervals or by the root chains'
    /// (`root`); `replayed` (0: none) the replay's marks, whose reads it leaves out.
    fn launch_order(
        &self,
        stream: &Arc<CudaStream>,
        batch: &BatchOnGpu,
        (queues, counters): (&mut CudaSlice<u32>, &CudaSlice<u32>),
        (list, replayed): (usize, u64),
        root: Option<&CudaSlice<u64>>,
    ) -> Result<()> {
        let n_gpu = batch.n;
        let cfg = LaunchConfig {
            grid_dim: ((n_gpu as u32).div_ceil(256), 1, 1),
            block_dim: (256, 1, 1),
            shared_mem_bytes: 0,
        };
        let (k, l) = (batch.exact_k.slice(..), batch.exact_l.slice(..));
        let n32 = n_gpu as u32;
        let mut q = queues.slice_mut(list * n_gpu..(list + 1) * n_gpu);
        let mut launch = stream.launch_builder(&self.inexact.order);
        // The list's count: pass 1's, or the no-hit pass's first counter.
        let count_at = if list == 0 { 0 } else { NO_HIT_COUNTERS };
        let (order_counters, queue_counters) =
            (counters.slice(ORDER_COUNTERS..), counters.slice(count_at..count_at + 2));
        launch.arg(&k).arg(&l);
        let no_root = 0u64; // a null pointer: exact_match's intervals
        match root {
            Some(r) => launch.arg(r),
            None => launch.arg(&no_root),
        };
        launch.arg(batch.starts).arg(batch.lens);
        launch.arg(batch.read_of).arg(&n32).arg(&replayed).arg(&mut q).arg(&order_counters);
        launch.arg(&queue_counters);
        // SAFETY: argument order and types match inexact_order's signature.
        unsafe { launch.launch(cfg) }.context("launching inexact_order")?;
        Ok(())
    }

    /// Pass `p` of the inexact search: inexact_search (a thread per read) or inexact_level (a
    /// team per read) on the pass's queue; the reads it hands on go to the next queue, which
    /// after the last pass is the CPU's.
    fn launch_pass(
        &self,
        stream: &Arc<CudaStream>,
        p: usize,
        set: usize,
        args: &SearchArgs,
        lists: &PassLists,
        n_buckets: i32,
    ) -> Result<()> {
        let scratch = &self.passes[p].sets[set].scratch;
        let last = self.passes.len() - 1;
        let list = |p: usize| p * lists.list_len;
        let counter = |p: usize| 2 * p;
        let (kernel, cfg) = self.pass_launch(p, n_buckets)?;
        let shared = cfg.shared_mem_bytes;
        let size = match scratch.pass.kind {
            PassKind::Thread => scratch.pass.entries as i32,
            PassKind::Warp => (scratch.pass.entries / inexact::CHUNK) as i32,
        };
        if shared > 48 << 10 {
            // Past the default limit of dynamic shared memory: opt in (or the launch fails,
            // and with it the batch, which the CPU then aligns).
            kernel.set_attribute(
                sys::CUfunction_attribute_enum::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                shared as i32,
            )?;
        }
        let queue = lists.queues.slice(list(p)..list(p + 1));
        let queue_counters = lists.counters.slice(counter(p)..counter(p) + 2);
        // After the last pass, the overflow list is the CPU's.
        let next = p.min(last) + 1;
        let next_queue = lists.queues.slice(list(next)..list(next + 1));
        let next_counters = lists.counters.slice(counter(next)..counter(next) + 2);
        // Pass 2 hands its longest searches on after `level_max_rounds` groups of chains;
        // the passes after it have no such limit.
        let max_rounds = if p == 1 && p != last { self.inexact_switches.level_max_rounds as i32 } else { 0 };
        let mut launch = stream.launch_builder(kernel);
        args.push(&mut launch, scratch, &size);
        let lookup_count = lists.lookups.slice(p..p + 1);
        launch.arg(&queue).arg(&queue_counters).arg(&next_queue).arg(&next_counters).arg(&lookup_count);
        let long_count = lists.counters.slice(LONG_HITS_COUNTER..LONG_HITS_COUNTER + 1);
        let (warp_hits, long_capacity) = (inexact::WARP_HITS as i32, long_hits_room(lists.list_len) as u32);
        if scratch.pass.kind == PassKind::Warp {
            launch
                .arg(&scratch.hits)
                .arg(&warp_hits)
                .arg(lists.long_hits)
                .arg(&long_capacity)
                .arg(&long_count)
                .arg(lists.long_offsets)
                .arg(&max_rounds);
        }
        let at = RESIDENCE_AT + RESIDENCE_COUNTS * p;
        let resident_ns = lists.lookups.slice(at..at + RESIDENCE_COUNTS);
        launch.arg(&resident_ns);
        let guard_at = GUARD_AT + GUARD_COUNTS * p;
        let guard_counts = lists.lookups.slice(guard_at..guard_at + GUARD_COUNTS);
        // The team kernel's alone (inexact_search has no guard).
        if scratch.pass.kind == PassKind::Warp {
            launch.arg(&guard_counts);
        }
        // SAFETY: argument order and types match inexact_search's or inexact_level's signature.
        unsafe { launch.launch(cfg) }.context("launching the inexact search")?;
        Ok(())
    }

    /// Batch `b` as its slot's buffers hold it: exact_match's answers, each inexact read's
    /// index in the batch, the inexact reads' codes, starts, lengths and maximum differences,
    /// and their hit counts; with the BWT the search counts from.
    fn batch_on_gpu<'a>(
        &'a self,
        b: &'a HostBatch,
        (exact_k, exact_l, read_of): (&'a CudaSlice<u64>, &'a CudaSlice<u64>, &'a CudaSlice<u32>),
        (codes, starts, lens): (&'a CudaSlice<u8>, &'a CudaSlice<u64>, &'a CudaSlice<u16>),
        (max_diffs, n_hits): (&'a CudaSlice<i32>, &'a CudaSlice<i32>),
    ) -> BatchOnGpu<'a> {
        BatchOnGpu {
            words: self.search_words(),
            primary: self.primary,
            l2: &self.l2,
            exact_k,
            exact_l,
            read_of,
            codes,
            starts,
            lens,
            max_diffs,
            n_hits,
            n: b.gpu_reads.len(),
            n_codes: b.n_codes,
            max_len: b.max_len,
            opt: &b.opt,
            sms: self.sms,
        }
    }

    /// What runs before pass `p` on the batch's queue: the replay before pass 1 (on its
    /// scratch, before pass 1 takes the reads it hands on), the proof before the last team pass;
    /// the proof's events.
    fn before_pass(
        &self,
        stream: &Arc<CudaStream>,
        (set, p): (usize, usize),
        (args, lists): (&SearchArgs, &PassLists),
        replay: Option<&mut BatchReplay>,
        (replay_bufs, proof_bufs): (&mut CandidateBuffers, &mut CandidateBuffers),
    ) -> Result<Option<[CudaEvent; 2]>> {
        if let Some(r) = replay.filter(|_| p == 0) {
            self.launch_replay(stream, set, (args, lists), replay_bufs, r)?;
        }
        let proof = if p > 0 && p + 1 == self.passes.len() {
            self.queue_proof(stream, (args, lists, p), proof_bufs)?
        } else {
            None
        };
        if self.orders_pass(p) {
            self.launch_weight_order(stream, lists, p)?;
        }
        Ok(proof)
    }

    /// Whether pass `p`'s queue is sorted heaviest first (`level_order`: 1 pass 2's, 2 every
    /// team pass's).
    fn orders_pass(&self, p: usize) -> bool {
        let order = self.inexact_switches.queue_order();
        p > 0 && self.passes[p].first().pass.kind == PassKind::Warp && (order >= 2 || (order == 1 && p == 1))
    }

    /// With `level_order`, pass `p`'s queue heaviest first by its reads' root chains' weights
    /// (read_widths', in [`WEIGHT_LIST`]; order_by_weight, one block), sorted through the next
    /// list, which fills only once pass `p` runs.
    fn launch_weight_order(&self, stream: &Arc<CudaStream>, lists: &PassLists, p: usize) -> Result<()> {
        let list = |p: usize| lists.queues.slice(p * lists.list_len..(p + 1) * lists.list_len);
        let (queue, weights, ordered) = (list(p), list(WEIGHT_LIST), list(p + 1));
        let counters = lists.counters.slice(2 * p..2 * p + 2); // pass p's (queued, taken)
        let cfg = LaunchConfig { grid_dim: (1, 1, 1), block_dim: (1024, 1, 1), shared_mem_bytes: 0 };
        let mut launch = stream.launch_builder(&self.inexact.order_by_weight);
        launch.arg(&queue).arg(&counters).arg(&weights).arg(&ordered);
        // SAFETY: argument order and types match order_by_weight's signature.
        unsafe { launch.launch(cfg) }.context("launching order_by_weight")?;
        Ok(())
    }

    /// With `proof_before_last`, the no-hit proof on the queue of pass `p` (the last), between
    /// two events: the reads it answers leave the queue.
    fn queue_proof(
        &self,
        stream: &Arc<CudaStream>,
        (args, lists, p): (&SearchArgs, &PassLists, usize),
        pb: &mut CandidateBuffers,
    ) -> Result<Option<[CudaEvent; 2]>> {
        let Some(kernels) = self.candidates.as_ref().filter(|_| self.inexact_switches.proof_before_last) else {
            return Ok(None);
        };
        let x = ProofInputs {
            batch: args.batch,
            queue: super::candidates::ptr(lists.queues, stream) + 4 * (p * lists.list_len) as u64,
            queue_count: super::candidates::ptr(lists.counters, stream) + 4 * (2 * p) as u64,
            most_extensions: self.inexact_switches.proof_extensions,
        };
        let start = timing_event(stream)?;
        proof_pass::queue_proof(kernels, pb, stream, &x)?;
        let end = timing_event(stream)?;
        pb.fetch_counts(stream)?;
        Ok(Some([start, end]))
    }

    /// inexact_replay on pass 1's threads and scratch (set `set`): the marked reads the rung
    /// answered get bwa's hits from their trees; the others join pass 1's queue.
    fn launch_replay(
        &self,
        stream: &Arc<CudaStream>,
        set: usize,
        (args, lists): (&SearchArgs, &PassLists),
        rb: &mut CandidateBuffers,
        replay: &mut BatchReplay,
    ) -> Result<()> {
        replay.events.push(timing_event(stream)?);
        let scratch = &self.passes[0].sets[set].scratch;
        let (_, pass_cfg) = self.pass_launch(0, args.n_buckets)?;
        let cfg = LaunchConfig { shared_mem_bytes: 0, ..pass_cfg };
        let r = exact_replay::replay_args(rb, stream)?;
        let queue = lists.queues.slice(0..lists.list_len);
        let queue_counters = lists.counters.slice(0..2);
        let mut launch = stream.launch_builder(&self.inexact.replay);
        args.push_reads(&mut launch);
        launch.arg(args.root_intervals);
        args.push_read_scratch(&mut launch, scratch);
        launch.arg(&r.list).arg(&r.listed).arg(&r.status).arg(&r.tree).arg(&r.tree_start).arg(&r.entries);
        args.push_hits(&mut launch);
        launch.arg(&queue).arg(&queue_counters).arg(&r.lookups);
        // SAFETY: argument order and types match inexact_replay's signature.
        unsafe { launch.launch(cfg) }.context("launching inexact_replay")?;
        replay.events.push(timing_event(stream)?);
        Ok(())
    }

    /// Pass `p`'s kernel and launch shape for reads of `n_buckets` scores: a thread pass runs
    /// blocks of `block_w` threads, a team pass a block per team.
    pub(super) fn pass_launch(&self, p: usize, n_buckets: i32) -> Result<(&CudaFunction, LaunchConfig)> {
        let pass = &self.passes[p].first().pass;
        let threads = pass.threads as u32;
        let (kernel, block) = match pass.kind {
            PassKind::Thread => (&self.inexact.search, threads.min(self.inexact_switches.block_w)),
            PassKind::Warp => (self.inexact.level(pass.team as u32)?, pass.team as u32),
        };
        // heads_shared: pass 1's list heads, one per score and thread, in shared memory.
        let shared = match pass.kind {
            PassKind::Thread if self.inexact_switches.heads_shared => n_buckets as u32 * block * 4,
            _ => 0,
        };
        let cfg = LaunchConfig {
            grid_dim: (threads.div_ceil(block), 1, 1),
            block_dim: (block, 1, 1),
            shared_mem_bytes: shared,
        };
        Ok((kernel, cfg))
    }
}

impl GpuAligner {
    /// Packs the batch's hits (compact_hits) and queues the copy of its answers back to the
    /// host (read after the stream's last event): `n` exact_match intervals (0 where it did not
    /// run), and the hits of `n_gpu` reads, as many as the slot's host copy holds
    /// ([`GpuAligner::collect`] reads the rest).
    fn fetch_answers(&self, slot: &mut Slot, n: usize, n_gpu: usize) -> Result<()> {
        let stream = slot.stream.clone();
        let per_read = self.hits_per_read;
        let host_words = self.host_room.packed_words(n_gpu);
        let packed = slot.packed_hits.reserve_host(&stream, n_gpu * per_read * 3, host_words)?;
        let chunk_at = slot.hit_chunks.reserve(&stream, compact_hits::chunk_words(n_gpu))?;
        if self.poison {
            buffers::poison(&stream, packed)?;
            buffers::poison(&stream, chunk_at)?;
        }
        let n_hits = slot.n_hits.reserve(&stream, n_gpu)?;
        let (hits, _) = slot.hits.reserve(&stream, n_gpu * per_read * 3)?;
        let slots = compact_hits::HitSlots { n_hits, hits, hits_per_read: per_read, n: n_gpu };
        compact_hits::launch(&stream, &self.compact, &slots, chunk_at, packed)?;
        slot.k.fetch(&stream, n)?;
        slot.l.fetch(&stream, n)?;
        slot.n_hits.fetch(&stream, n_gpu)?;
        slot.packed_hits.fetch(&stream, n_gpu * per_read * 3)?;
        slot.hit_chunks.fetch(&stream, compact_hits::chunk_words(n_gpu))?;
        slot.counters.fetch(&stream, N_COUNTERS)?;
        slot.lookups.fetch(&stream, N_KERNEL_COUNTS)?;
        slot.long_hits.fetch(&stream, long_hits_room(n_gpu) * 3)?;
        slot.long_offsets.fetch(&stream, n_gpu)?;
        Ok(())
    }
}
