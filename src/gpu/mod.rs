//! GPU driver: the kernels of `cuda/` compiled at run time with NVRTC and run through cudarc.
//!
//! `exact_match` gives each read's exact SA interval; `inexact_search` runs BWA's full aln
//! search per read (the CPU oracle's algorithm, same hits) with bounded stacks, in up to three
//! passes of fewer threads with larger stacks (see [`inexact`]), the reads without an exact
//! match first. Reads that do not fit even so (longer than [`GPU_MAX_LEN`], more hits than a
//! warp pass keeps, a stack that outgrows the last pass's) are aligned on the CPU, so the
//! .sai is identical whatever the GPU does.

pub mod batch;
mod batch_times;
mod buffers;
mod candidate_buffers;
pub mod candidates;
pub mod compact_hits;
mod exact_replay;
mod first_pass;
pub mod host_copy;
pub mod index_sort;
pub mod inexact;
pub mod inexact_kernels;
pub mod interval_table;
pub mod no_hit;
pub mod nvrtc;
pub mod occ_sectors;
mod open;
pub mod overlap;
mod proof_pass;
mod queue;
pub mod queue_order;
pub mod rungs;
mod slot;
pub mod switches;
pub mod tuned;
pub mod unpack_codes;

use std::collections::HashMap;
use std::sync::Arc;

use anyhow::{bail, Context, Result};
use bcuda_index::Bwt;
use cudarc::driver::{sys, CudaContext, CudaEvent, CudaFunction, CudaSlice, CudaStream, LaunchConfig, PushKernelArg};

use crate::reads::ReadBatch;
use crate::sai::AlnHit;
use batch::GpuAnswers;
pub use batch::{pack_reads, HostBatch};
pub use batch_times::{BatchTimes, GuardTimes, HostTimes};
pub use buffers::PinTimes;
use candidates::CandidateKernels;
pub use first_pass::HAND_ON_SHARE;
use first_pass::{gave_up, given_up_state, rule_state};
use inexact::{Pass, Scratchpad};
use inexact_kernels::InexactKernels;
use interval_table::{GpuBwt, GpuIntervals};
use no_hit::NoHitKernels;
pub use nvrtc::{arch_for, cache_dir, compile, compile_cached, driver_present, nvrtc_present, resource_usage};
pub use open::{gpu_model, warm_kernel_cache, OpenGpu, StartupTimes};
use slot::{Slot, LONG_HITS_COUNTER, N_COUNTERS, N_KERNEL_COUNTS, ORDER_COUNTERS};
pub use switches::{InexactSwitches, Switches};

/// Longest read the GPU aligns; longer ones go to the CPU.
pub const GPU_MAX_LEN: usize = 512;
/// GPU memory kept free for the batches' buffers when the passes' stacks are sized.
const MEMORY_MARGIN: usize = 4 << 30;
/// Share of the remaining free memory the passes' stacks may take.
const SCRATCH_SHARE: f64 = 0.8;
/// Most passes of the inexact search (see [`inexact`]).
const MAX_PASSES: usize = 4;
/// Hit slots per read; a read with more goes on to the warp passes (see [`inexact::WARP_HITS`]).
pub const HITS_PER_READ: usize = 16;
/// The room for the hits of reads with more than HITS_PER_READ (their list is copied there;
/// beyond it, or beyond inexact::WARP_HITS, the CPU takes the read): a hit per read of the
/// batch, and never less than this. Short reads of repeats have long lists: with a fixed room,
/// batches larger than bwa's (`BCUDA_TEST_BATCH_READS`) left ancient-DNA reads to the CPU.
const LONG_HITS: usize = 1 << 18;

/// The long hits' room, in hits, of a batch of `n_gpu` inexact reads.
fn long_hits_room(n_gpu: usize) -> usize {
    LONG_HITS.max(n_gpu)
}

/// Threads in a block of read_widths (its `__launch_bounds__`).
pub(super) const WIDTHS_BLOCK: u32 = 256;

/// The blocks of `kernel` launched as `cfg` that an SM holds at once.
fn blocks_per_sm(kernel: &CudaFunction, cfg: &LaunchConfig) -> Result<u32> {
    Ok(kernel.occupancy_max_active_blocks_per_multiprocessor(cfg.block_dim.0, cfg.shared_mem_bytes as usize, None)?)
}

pub const BWT_CUH: &str = include_str!("../../cuda/bwt.cuh");
pub const EXACT_MATCH_CU: &str = include_str!("../../cuda/exact_match.cu");
/// The inexact kernels and, after them, the team passes' queue order (a file of its own, so
/// that dev/tests/queue_order.rs can build it for the CPU).
pub const INEXACT_MATCH_CU: &str =
    concat!(include_str!("../../cuda/inexact_match.cu"), include_str!("../../cuda/queue_order.cu"));

/// A batch queued on the GPU: its slot, its inputs, and events around its kernels (exact
/// start and end, read_widths' start and end, then the start and end of each pass; the no-hit
/// pass's apart, when it ran).
pub struct InFlight {
    slot: usize,
    batch: HostBatch,
    events: Vec<CudaEvent>,
    no_hit_events: Option<[CudaEvent; 2]>,
    /// Around the rung and trees, and around the replay (`exact_replay`).
    replay_events: Option<[CudaEvent; 4]>,
    /// Around the proof before the last pass (`proof_before_last`).
    proof_events: Option<[CudaEvent; 2]>,
}

/// The exact_match kernel's arguments besides the index.
struct ExactArgs<'a> {
    reads: &'a CudaSlice<u32>,
    starts: &'a CudaSlice<u64>,
    lens: &'a CudaSlice<u16>,
    n: usize,
    fixed_len: u32,
}

/// Batches in flight on a GPU. The passes' scratch sets are shared by the batches, so with more in
/// flight the next batches' pass 2 fills the SMs that a batch's long pass 3 leaves idle: on
/// the H100 at 3.1 Gbp, 8M 100 bp reads, GPU busy 10.17 s with four against 11.02 s with two
/// (bench/results/h100-80gb-hbm3-16c/steady-h100.log).
const BATCHES_IN_FLIGHT: usize = 4;

pub struct GpuAligner {
    ctx: Arc<CudaContext>,
    /// Stream of the index copy and of the one-off `exact_match` calls.
    stream: Arc<CudaStream>,
    words: CudaSlice<u32>,
    l2: CudaSlice<u64>,
    /// The interval table the search's first steps read (`interval_depth`).
    intervals: GpuIntervals,
    /// The BWT in occurrence sectors, which the search counts from with `occ_sectors`.
    sectors: Option<CudaSlice<u32>>,
    /// Whether the sectors hold the pairs' counts after them (`occ_pairs`).
    sector_pairs: bool,
    primary: u64,
    seq_len: u64,
    switches: Switches,
    /// Source of the exact_match kernel: `cuda/exact_match.cu`, or a variant (autotune).
    exact_source: String,
    /// The inexact kernels' switches, and pass 1's pop budget as the kernel takes it.
    inexact_switches: InexactSwitches,
    first_max_pops: i32,
    /// The state of pass 1's rule on this GPU (see [`GpuAligner::adapt_first_pass`]).
    first_rule: CudaSlice<u64>,
    exact: HashMap<bool, CudaFunction>,
    inexact: InexactKernels,
    /// The no-hit pass's kernels, when `no_hit_budget` turns it on.
    no_hit: Option<NoHitKernels>,
    /// The candidates' kernels, when `exact_replay` or `proof_before_last` turns them on
    /// (counting from the BWT the search counts from).
    candidates: Option<CandidateKernels>,
    sms: usize,
    arch: &'static str,
    pub device_name: String,
    pub compute_capability: (i32, i32),
    /// Sums over all batches.
    pub totals: BatchTimes,
    /// The kernel times of the batch collected last, in words (aln's timeline).
    pub last_kernels: String,
    /// An event before the first batch's kernels, and each collected batch's kernel spans from
    /// it on the GPU's clock ([`overlap`]).
    origin: Option<CudaEvent>,
    pub kernel_spans: Vec<Vec<overlap::Span>>,
    pub startup: StartupTimes,
    /// The passes of the inexact search, with their scratch (sized at the first batch), and
    /// [`crate::test_hooks::stacks`]: stack entries per pass, forced small so that the GPU
    /// checks show that every pass and the CPU give the same hits.
    passes: Vec<PassScratch>,
    test_stacks: Option<Vec<usize>>,
    /// Share of the free GPU memory the passes' stacks take (halved after a failed batch).
    scratch_share: f64,
    /// A slot per batch in flight ([`crate::test_hooks::slots`], default [`BATCHES_IN_FLIGHT`]): one copying while
    /// others compute.
    slots: Vec<Option<Slot>>,
    /// Hit slots a read in the answers ([`HITS_PER_READ`], or
    /// [`crate::test_hooks::hits_per_read`]).
    hits_per_read: usize,
    /// compact_hits, which packs them for the copy back, and the room of the slots' host copies
    /// of the packed and long hits.
    compact: CudaFunction,
    host_room: compact_hits::HostRoom,
    /// unpack_codes, which lays the inexact kernels' reads out from exact_match's.
    unpack: CudaFunction,
    next_slot: usize,
    /// Batches submitted so far, and those that fail on purpose (see
    /// [`crate::test_hooks::failing_batches`]).
    submitted: usize,
    fail_batch: Option<(usize, bool)>,
    /// Whether every batch's answer buffers are filled with 0xFF before its kernels run (see
    /// [`GpuAligner::poison_outputs`]).
    poison: bool,
    /// Whether pass 1 gives up once it hands on too many reads (see
    /// [`GpuAligner::adapt_first_pass`]).
    adapt_first: bool,
    /// The speculative ladder's guesses, its rungs inside the team passes (a test hook,
    /// [`rungs`]).
    ladder: Option<Vec<i32>>,
}

/// A pass's scratch sets (`scratch_sets`: batch n takes set n % sets).
struct PassScratch {
    sets: Vec<ScratchSet>,
}

/// One scratch set of a pass, with the event after the last queued use of it (none before the
/// first): the next batch on the set waits for it, while its other passes, and the batches on
/// the other sets, may run beside.
struct ScratchSet {
    scratch: Scratchpad,
    free: Option<CudaEvent>,
}

impl PassScratch {
    /// The pass's shape and size, the same in every set.
    fn first(&self) -> &Scratchpad {
        &self.sets[0].scratch
    }
}

/// A batch's hits from its slot, once its stream has finished (the packed and long hits past
/// the slot's host copies are copied now); the reads given up for their hit list and for bwa's
/// `-m`.
type Answers = (Vec<Option<Vec<AlnHit>>>, (usize, usize));
fn answers_of(slot: &Slot, batch: &HostBatch, hits_per_read: usize) -> Result<Answers> {
    let n_gpu = batch.gpu_reads.len();
    let chunk_at = slot.hit_chunks.read(compact_hits::chunk_words(n_gpu))?;
    let packed_words = chunk_at[0] as usize * 3;
    let packed = slot.packed_hits.read_all(&slot.stream, packed_words)?;
    // The list's count goes on past its room where reads did not fit (HITS_FULL).
    let long_count = slot.counters.read(N_COUNTERS)?[LONG_HITS_COUNTER] as usize;
    let long_words = long_count.min(long_hits_room(n_gpu)) * 3;
    let long_hits = slot.long_hits.read_all(&slot.stream, long_words)?;
    let n_hits = slot.n_hits.read(n_gpu)?;
    let firsts = compact_hits::read_firsts(n_hits, hits_per_read, &chunk_at[1..]);
    let answers = GpuAnswers {
        n_hits,
        hits: &packed,
        firsts: &firsts,
        hits_per_read,
        long_hits: &long_hits,
        long_offsets: slot.long_offsets.read(n_gpu)?,
    };
    Ok((answers.to_hits(batch), answers.given_up()))
}

/// A batch's kernel spans (its events in pairs: exact_match, read_widths, each pass) from
/// `origin`; `None` if the driver cannot time them: they only inform the summary.
fn kernel_spans(origin: &CudaEvent, events: &[CudaEvent]) -> Option<Vec<overlap::Span>> {
    let at = |e: &CudaEvent| origin.elapsed_ms(e).ok().map(|ms| ms as f64 / 1000.0);
    events.chunks_exact(2).map(|pair| Some((at(&pair[0])?, at(&pair[1])?))).collect()
}

fn timing_event(stream: &Arc<CudaStream>) -> Result<CudaEvent> {
    Ok(stream.record_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT))?)
}

impl GpuAligner {
    /// Opens GPU `ordinal`, compiles the kernels and copies the BWT to it.
    pub fn new(bwt: &Bwt, switches: Switches, ordinal: usize) -> Result<GpuAligner> {
        GpuAligner::on(OpenGpu::open(ordinal, switches)?, bwt)
    }

    /// Loads an opened GPU's kernels and copies the BWT to it.
    pub fn on(gpu: OpenGpu, bwt: &Bwt) -> Result<GpuAligner> {
        let t = std::time::Instant::now();
        let OpenGpu {
            ctx,
            device_name,
            compute_capability,
            arch,
            sms,
            switches,
            inexact_switches,
            inexact,
            no_hit,
            exact: exact_f,
            layout: (compact, unpack),
            mut startup,
        } = gpu;
        // A genome too large for compact stack entries gets the 32-byte ones, compiled below.
        let mut fitted = inexact_switches.fitted_to(bwt.seq_len());
        // cudarc binds the context to the thread that uses it; this may not be the one that opened it.
        ctx.bind_to_thread()?;
        let stream = ctx.default_stream();
        let ordinal = ctx.ordinal();
        let l2 = stream.clone_htod(&bwt.l2())?;
        let first_rule = stream.clone_htod(&rule_state(false))?;
        let direct_index = switches.direct_index;
        let n_slots = crate::test_hooks::slots(BATCHES_IN_FLIGHT)?;
        let slots = (0..n_slots).map(|_| Slot::new(&ctx).map(Some)).collect::<Result<Vec<_>>>()?;
        let test_stacks = crate::test_hooks::stacks(MAX_PASSES)?;
        // SAFETY: filled by the copy below before any kernel reads it.
        let mut words = unsafe { stream.alloc::<u32>(bwt.words().len().max(1)) }?;
        // Through page-locked staging; a plain copy if that memory cannot be had.
        if host_copy::copy_large(&stream, bwt.words(), &mut words).is_err() {
            stream.memcpy_htod(bwt.words(), &mut words).context("copying the BWT to the GPU")?;
        }
        let on_gpu = GpuBwt { words: &words, primary: bwt.primary(), seq_len: bwt.seq_len(), l2: &l2 };
        let intervals = interval_table::build(&ctx, &stream, arch, &on_gpu, inexact_switches.interval_depth)?;
        let mut aligner = GpuAligner {
            ctx,
            stream,
            words,
            l2,
            intervals,
            sectors: None,
            sector_pairs: false,
            primary: bwt.primary(),
            seq_len: bwt.seq_len(),
            switches,
            exact_source: EXACT_MATCH_CU.to_string(),
            first_max_pops: inexact_switches.first_max_pops as i32,
            first_rule,
            inexact_switches,
            exact: HashMap::from([(direct_index, exact_f)]),
            inexact,
            no_hit,
            candidates: None,
            sms,
            arch,
            device_name,
            compute_capability,
            totals: BatchTimes::default(),
            last_kernels: String::new(),
            origin: None,
            kernel_spans: Vec::new(),
            startup: StartupTimes::default(),
            scratch_share: SCRATCH_SHARE,
            passes: Vec::new(),
            test_stacks,
            slots,
            hits_per_read: crate::test_hooks::hits_per_read(HITS_PER_READ)?,
            compact,
            host_room: if crate::test_hooks::no_host_room()? {
                compact_hits::HostRoom::none()
            } else {
                compact_hits::HostRoom::default()
            },
            unpack,
            next_slot: 0,
            submitted: 0,
            fail_batch: crate::test_hooks::failing_batches(ordinal),
            poison: false,
            adapt_first: false,
            ladder: None,
        };
        // Where memory is short the search counts from bwa's array (compiled below): the
        // start-up's switches give way quietly (aln's start-up line says whether sectors are on).
        if fitted.occ_pairs > 0 && aligner.sectors_unfit(true)?.is_some() {
            fitted.occ_pairs = 0;
        }
        fitted.occ_sectors &= aligner.sectors_unfit(false)?.is_none();
        aligner.place_sectors(fitted.occ_sectors, fitted.occ_pairs > 0)?;
        aligner.stream.synchronize()?;
        startup.copy_s = t.elapsed().as_secs_f64();
        startup.interval_depth = aligner.intervals.depth;
        startup.occ_sectors = aligner.sectors.is_some();
        startup.occ_pairs = aligner.sector_pairs;
        aligner.startup = startup;
        // Loading the inexact kernels loads the candidates' too.
        if fitted != aligner.inexact_switches {
            aligner.set_inexact_kernels(INEXACT_MATCH_CU, fitted)?;
        } else {
            aligner.load_candidates()?;
        }
        Ok(aligner)
    }

    /// The BWT as the inexact search's kernels count from it: the occurrence sectors with
    /// `occ_sectors`, else bwa's array.
    fn search_words(&self) -> &CudaSlice<u32> {
        self.sectors.as_ref().unwrap_or(&self.words)
    }

    /// The exact_match kernel with `direct_index` as given (reads of mixed lengths need it off).
    fn exact_function(&mut self, direct_index: bool) -> Result<CudaFunction> {
        if let Some(f) = self.exact.get(&direct_index) {
            return Ok(f.clone());
        }
        let sw = Switches { direct_index, ..self.switches.clone() };
        let f = compile_cached(&self.exact_source, &sw.defines(), self.arch)?
            .load(&self.ctx)?
            .load_function("exact_match")?;
        self.exact.insert(direct_index, f.clone());
        Ok(f)
    }

    /// Uses another exact_match source and switches (a tuned or candidate kernel); compiles it
    /// now so that a bad variant fails here, leaving the kernel in use as it was.
    pub fn set_exact_kernel(&mut self, source: &str, switches: Switches) -> Result<()> {
        if let Some(why) = switches.illegal() {
            bail!("kernel switches: {why}");
        }
        let before = (
            std::mem::replace(&mut self.exact_source, source.to_string()),
            std::mem::replace(&mut self.switches, switches),
        );
        let compiled = std::mem::take(&mut self.exact);
        if let Err(e) = self.exact_function(self.switches.direct_index) {
            (self.exact_source, self.switches, self.exact) = (before.0, before.1, compiled);
            return Err(e);
        }
        Ok(())
    }

    /// Uses another source of the inexact kernels and their switches (a tuned or candidate
    /// variant); compiles it now so that a bad variant fails here. Switches this GPU cannot
    /// take are refused before the kernels, tables or sectors change. The passes are planned
    /// again at the next batch.
    pub fn set_inexact_kernels(&mut self, source: &str, switches: InexactSwitches) -> Result<()> {
        if self.ladder.is_some() {
            bail!("the ladder's rungs in the passes run the default inexact kernels");
        }
        self.refuse_unfit(&switches)?;
        let kernels = InexactKernels::load(&self.ctx, inexact_kernels::compile(source, &switches, self.arch)?)?;
        let no_hit = no_hit::compile(&switches, self.arch)?.map(|i| NoHitKernels::load(&self.ctx, i)).transpose()?;
        if switches.interval_depth != self.inexact_switches.interval_depth {
            let on_gpu = GpuBwt { words: &self.words, primary: self.primary, seq_len: self.seq_len, l2: &self.l2 };
            self.intervals =
                interval_table::build(&self.ctx, &self.stream, self.arch, &on_gpu, switches.interval_depth)?;
        }
        self.place_sectors(switches.occ_sectors, switches.occ_pairs > 0)?;
        self.inexact = kernels;
        self.no_hit = no_hit;
        self.first_max_pops = switches.first_max_pops as i32;
        self.inexact_switches = switches;
        self.load_candidates()
    }

    /// The candidates' kernels where `exact_replay` or `proof_before_last` is on, compiled to
    /// count from the BWT the search counts from (the occurrence sectors, or bwa's array).
    fn load_candidates(&mut self) -> Result<()> {
        let on = self.inexact_switches.exact_replay || self.inexact_switches.proof_before_last;
        self.candidates =
            on.then(|| CandidateKernels::load(&self.ctx, self.arch, self.sectors.is_some(), 0)).transpose()?;
        Ok(())
    }

    /// Refuses switches that are illegal, that cannot hold this genome's rows, or whose
    /// occurrence sectors (where not built yet) do not fit the GPU's free memory. The passes'
    /// scratch is freed first, so that it counts as free: it holds most of the memory after a
    /// batch, and the passes are sized again from what the sectors leave.
    fn refuse_unfit(&mut self, switches: &InexactSwitches) -> Result<()> {
        if let Some(why) = switches.illegal().or(switches.unfit_for(self.seq_len)) {
            bail!("inexact kernel switches: {why}");
        }
        // The old scratchpads may be in use by a batch in flight; freed, their memory goes
        // back to the driver (from the stream's pool) only at the next synchronisation.
        self.ctx.synchronize()?;
        self.passes.clear();
        self.ctx.synchronize()?;
        let pairs = switches.occ_pairs > 0;
        if switches.occ_sectors && (self.sectors.is_none() || pairs != self.sector_pairs) {
            if let Some(why) = self.sectors_unfit(pairs)? {
                bail!("inexact kernel switches: {why}");
            }
        }
        Ok(())
    }

    /// Why the occurrence sectors (with the pairs' counts: `pairs`) do not fit the GPU's free
    /// memory now, if they do not.
    /// Sectors in place count as free: a rebuild frees them first.
    fn sectors_unfit(&self, pairs: bool) -> Result<Option<String>> {
        let in_place = self.sectors.as_ref().map_or(0, |s| s.len() as u64 * 4);
        Ok(occ_sectors::unfit_for(self.seq_len, pairs, self.ctx.mem_get_info()?.0 as u64 + in_place))
    }

    /// Builds the occurrence sectors (`on`, with the pairs' counts: `pairs`) or frees them,
    /// where they are not so already.
    fn place_sectors(&mut self, on: bool, pairs: bool) -> Result<()> {
        let pairs = on && pairs;
        if on != self.sectors.is_some() || pairs != self.sector_pairs {
            self.sectors = None;
            let on_gpu = GpuBwt { words: &self.words, primary: self.primary, seq_len: self.seq_len, l2: &self.l2 };
            self.sectors =
                on.then(|| occ_sectors::build(&self.ctx, &self.stream, self.arch, &on_gpu, pairs)).transpose()?;
            self.sector_pairs = pairs;
        }
        Ok(())
    }

    /// Frees the GPU's memory and context, in parts: seconds spent on each (pass scratch,
    /// batch buffers, BWT, then kernels and context), for aln's timeline.
    pub fn release(self) -> [(&'static str, f64); 4] {
        let GpuAligner { ctx, stream, words, l2, intervals, first_rule, exact, inexact, no_hit, passes, slots, .. } =
            self;
        fn timed_drop(what: &'static str, x: impl Sized) -> (&'static str, f64) {
            let t = std::time::Instant::now();
            drop(x);
            (what, t.elapsed().as_secs_f64())
        }
        // In this order: the context goes with the last of what holds it.
        [
            timed_drop("pass scratch", passes),
            timed_drop("batch buffers", slots),
            timed_drop("BWT", (words, l2, intervals.table)),
            timed_drop("kernels and context", (exact, inexact, no_hit, first_rule, stream, ctx)),
        ]
    }

    /// Once pass 1 has handed on more than [`HAND_ON_SHARE`] of the reads it finished, it
    /// gives up on every read, so that the team passes search them all (`aln` sets it;
    /// autotune times each variant as it is). Pass 1 decides on the GPU, counting over every
    /// batch so far, so the batch in which the share is reached gains too, and so does the one
    /// beside it. On the 1 Gbp human-like benchmark pass 1 hands on 9.8 % of the reads, and
    /// letting the teams search all of them took the GPU from 1.64 to 1.39 s busy on 1M reads
    /// (H100): a warp of pass 1 waits for its longest read, a team shares one read's work. On
    /// E. coli it hands on 0.01 %, and the teams alone were slower (1.28 instead of 0.99 s end
    /// to end); budgets between 128 and 1024 pops were no better than 2048 on either. Every
    /// budget gives the same hits, and so does a read handed on part way.
    pub fn adapt_first_pass(&mut self) -> Result<()> {
        self.set_first_pass_rule(rule_state(true))
    }

    /// Pass 1 hands every read to the team passes from the first batch on, as once its rule has
    /// given up (`BCUDA_TEST_FIRST_PASS=teams`: the team passes' time on reads pass 1 would keep).
    pub fn first_pass_to_teams(&mut self) -> Result<()> {
        self.set_first_pass_rule(given_up_state())
    }

    /// Runs the rungs of a speculative ladder with `guesses`, then bwa's limits, inside the team
    /// passes (`BCUDA_TEST_LADDER=passes,2,3`; [`rungs`]): the default inexact kernels compiled
    /// with them and the `-m` guard (`BCUDA_TEST_RUNG_GUARD`: its measurement hook); pass 1
    /// hands every read on.
    pub fn ladder_in_passes(&mut self, guesses: Vec<i32>) -> Result<()> {
        self.refuse_beside_rungs()?;
        let hooks: Vec<String> =
            crate::test_hooks::rung_guard()?.map(|g| format!("-Drung_guard={g}")).into_iter().collect();
        let images = rungs::compile_in_passes(&self.inexact_switches, self.arch, &guesses, &hooks)?;
        self.inexact = InexactKernels::load(&self.ctx, images)?;
        self.ladder = Some(guesses);
        Ok(())
    }

    /// The rungs run without the passes' companions that read each read's own limit.
    fn refuse_beside_rungs(&self) -> Result<()> {
        let sw = &self.inexact_switches;
        if sw.no_hit_budget > 0 || sw.exact_replay || sw.proof_before_last {
            bail!("the ladder's rungs run without the no-hit pass, the replay and the proof before the last pass");
        }
        Ok(())
    }

    /// The state pass 1's rule has reached (its share, whether it gave up, its counts), for
    /// [`GpuAligner::set_first_pass_rule`].
    pub fn first_pass_rule(&self) -> Result<[u64; 4]> {
        self.ctx.synchronize()?;
        let v = self.stream.clone_dtoh(&self.first_rule)?;
        Ok([v[0], v[1], v[2], v[3]])
    }

    /// Puts pass 1's rule in `state` (its share 0: off). Autotune times every variant from the
    /// state `aln` reaches on the training reads, so that it tunes the passes `aln` runs.
    pub fn set_first_pass_rule(&mut self, state: [u64; 4]) -> Result<()> {
        self.adapt_first = state[0] != 0;
        // Without a team pass the reads pass 1 gives up on would go to the CPU.
        let state = if self.adapt_first && !self.passes.is_empty() && self.passes.len() < 2 {
            rule_state(false)
        } else {
            state
        };
        self.stream.memcpy_htod(&state, &mut self.first_rule)?;
        self.stream.synchronize()?;
        Ok(())
    }

    /// Fills every batch's answer buffers (intervals, hit counts, hits, read queues) and the
    /// passes' scratch with 0xFF before its kernels run (outside their timing). Buffers are
    /// reused batch after batch, so without it a variant kernel that leaves an answer
    /// unwritten shows the previous batch's: the autotuner's oracle ran the unmodified kernels
    /// on the same reads just before, and passed a variant that wrote no answer at all (pass 1
    /// without `record_answer`), whose `.sai` was wrong. The unmodified kernels write every
    /// scratch element before reading it (the scratch is allocated uninitialised), so they
    /// answer the same poisoned or not.
    pub fn poison_outputs(&mut self) {
        self.poison = true;
    }

    pub fn inexact_switches(&self) -> &InexactSwitches {
        &self.inexact_switches
    }

    /// The inexact search's passes, once sized (at the first batch).
    pub fn passes(&self) -> Vec<Pass> {
        self.passes.iter().map(|p| p.first().pass).collect()
    }

    /// After a failed batch: the passes are sized again, with half the memory.
    pub fn shrink_after_failure(&mut self) {
        if self.ctx.synchronize().is_ok() {
            self.passes.clear();
            self.scratch_share /= 2.0;
        }
    }

    /// The blocks of pass `p` an SM holds at once (at least 1).
    fn pass_blocks_per_sm(&self, p: usize, n_buckets: i32) -> f64 {
        let blocks = self.pass_launch(p, n_buckets).and_then(|(kernel, cfg)| blocks_per_sm(kernel, &cfg));
        blocks.unwrap_or(1).max(1) as f64
    }

    /// The blocks of read_widths an SM holds at once (at least 1).
    fn widths_blocks_per_sm(&self) -> f64 {
        let cfg = LaunchConfig { grid_dim: (1, 1, 1), block_dim: (WIDTHS_BLOCK, 1, 1), shared_mem_bytes: 0 };
        blocks_per_sm(&self.inexact.widths, &cfg).unwrap_or(1).max(1) as f64
    }

    /// SMs of the GPU.
    pub fn sms(&self) -> usize {
        self.sms
    }

    /// Batches it holds at once (its slots).
    pub fn depth(&self) -> usize {
        self.slots.len()
    }

    /// The GPU's CUDA ordinal (among the visible ones).
    pub fn ordinal(&self) -> usize {
        self.ctx.ordinal()
    }

    pub fn switches(&self) -> &Switches {
        &self.switches
    }

    /// Queues exact_match on `stream`.
    fn launch_exact(
        &self,
        stream: &Arc<CudaStream>,
        f: &CudaFunction,
        a: ExactArgs,
        k: &mut CudaSlice<u64>,
        l: &mut CudaSlice<u64>,
    ) -> Result<()> {
        let threads = if self.switches.kl_par { 2 * a.n } else { a.n } as u64;
        let bw = self.switches.block_w;
        let blocks = threads.div_ceil(bw as u64).max(1) as u32;
        let grid =
            if self.switches.many_blocks { (blocks.min(65535), blocks.div_ceil(65535), 1) } else { (blocks, 1, 1) };
        let cfg = LaunchConfig { grid_dim: grid, block_dim: (bw, 1, 1), shared_mem_bytes: 0 };
        let n32 = a.n as u32;
        let mut launch = stream.launch_builder(f);
        launch.arg(&self.words).arg(&self.primary).arg(&self.seq_len).arg(&self.l2);
        let n_read_words = a.reads.len() as u64;
        launch.arg(a.reads).arg(&n_read_words).arg(a.starts).arg(a.lens).arg(&n32).arg(&a.fixed_len).arg(k).arg(l);
        // SAFETY: argument order and types match exact_match's signature.
        unsafe { launch.launch(cfg) }.context("launching exact_match")?;
        Ok(())
    }

    /// Exact SA intervals of all reads (k = l = 0 for reads with N; k > l for no match) and
    /// the kernel's time: one synchronous call, for benchmarks and the autotuner.
    pub fn exact_match(&mut self, reads: &ReadBatch) -> Result<(Vec<u64>, Vec<u64>, f32)> {
        let n = reads.len();
        let lens: Vec<u16> = reads.aligned_lens().map(|len| len as u16).collect();
        let fixed = lens.iter().all(|&l| l == lens[0]);
        let f = self.exact_function(self.switches.direct_index && fixed)?;
        let (packed, starts) = pack_reads(reads, self.switches.sequence_stride);
        let stream = self.stream.clone();
        let d_reads = stream.clone_htod(&packed)?;
        let d_starts = stream.clone_htod(&starts)?;
        let d_lens = stream.clone_htod(&lens)?;
        let mut d_k = stream.alloc_zeros::<u64>(n)?;
        let mut d_l = stream.alloc_zeros::<u64>(n)?;
        let fixed_len = lens.first().copied().unwrap_or(0) as u32;
        let start = timing_event(&stream)?;
        self.launch_exact(
            &stream,
            &f,
            ExactArgs { reads: &d_reads, starts: &d_starts, lens: &d_lens, n, fixed_len },
            &mut d_k,
            &mut d_l,
        )?;
        let end = timing_event(&stream)?;
        let k = stream.clone_dtoh(&d_k)?;
        let l = stream.clone_dtoh(&d_l)?;
        Ok((k, l, start.elapsed_ms(&end)?))
    }

    /// Queues a batch: copies in, exact_match on every read, the inexact search's passes on
    /// the reads the GPU holds, copies out; returns at once. Batches take the slots (each with its
    /// stream) in turn, so one batch's copies overlap another's kernels; [`GpuAligner::collect`]
    /// waits for the answers, in the order submitted.
    pub fn submit(&mut self, batch: HostBatch) -> Result<InFlight> {
        self.submitted += 1;
        if self.fail_batch.is_some_and(|(n, from_on)| self.submitted == n || from_on && self.submitted > n) {
            bail!("batch {} failed on purpose (BCUDA_TEST_FAIL_BATCH)", self.submitted);
        }
        let direct_index = self.switches.direct_index && batch.fixed_len.is_some();
        let exact_f = self.exact_function(direct_index)?;
        let (ml, n_buckets) = (batch.max_len.max(1), batch.n_buckets as usize);
        if !self.passes.first().is_some_and(|p| p.first().fits(ml, n_buckets)) {
            self.size_passes(ml, n_buckets, batch.opt.max_entries.max(0) as usize)?;
        }
        // Round robin: the dealer collects in submit order, at most one batch per slot.
        let started = std::time::Instant::now();
        let slot_index = self.next_slot;
        self.next_slot = (self.next_slot + 1) % self.slots.len();
        // Out of self while it is filled, so the launches can borrow the index.
        let mut slot = self.slots[slot_index].take().expect("slots are put back after use");
        if self.origin.is_none() {
            self.origin = Some(timing_event(&slot.stream)?);
        }
        let set = (self.submitted - 1) % self.inexact_switches.scratch_sets as usize;
        let queued = self.queue(&mut slot, &batch, &exact_f, set);
        self.slots[slot_index] = Some(slot);
        let (events, no_hit_events, replay_events, proof_events) = queued?;
        self.totals.host.queue_s += started.elapsed().as_secs_f64();
        Ok(InFlight { slot: slot_index, batch, events, no_hit_events, replay_events, proof_events })
    }

    /// The host's time copying the batches' inputs into the staging buffers and queueing the
    /// copies (part of [`HostTimes::queue_s`]).
    pub fn upload_s(&self) -> f64 {
        self.slots.iter().flatten().map(Slot::upload_s).sum()
    }

    /// The host's page-locking of the slots' copies (part of [`HostTimes::queue_s`]).
    pub fn pinned(&self) -> PinTimes {
        self.slots.iter().flatten().map(Slot::pinned).sum()
    }

    /// Plans the passes from the free GPU memory (see [`inexact::plan`]) and allocates their
    /// scratch, for reads up to `max_len` and `n_buckets` scores (at least those of before).
    fn size_passes(&mut self, max_len: usize, n_buckets: usize, max_entries: usize) -> Result<()> {
        // The old scratchpads may be in use by the other stream's batch.
        self.ctx.synchronize()?;
        let (m, b) = self
            .passes
            .first()
            .map_or((max_len, n_buckets), |p| (p.first().size.0.max(max_len), p.first().size.1.max(n_buckets)));
        self.passes.clear();
        let (free, _) = self.ctx.mem_get_info()?;
        let sets = self.inexact_switches.scratch_sets as usize;
        let budget = (free.saturating_sub(MEMORY_MARGIN) as f64 * self.scratch_share) as usize / sets;
        let plan =
            inexact::plan(self.sms, budget, m, b, max_entries, &self.inexact_switches, self.test_stacks.as_deref())?;
        let t = std::time::Instant::now();
        let entry_bytes = self.inexact_switches.entry_bytes();
        for pass in plan {
            let new_set = || Scratchpad::new(&self.stream, pass, m, b, entry_bytes);
            let sets = (0..sets).map(|_| new_set().map(|scratch| ScratchSet { scratch, free: None }));
            self.passes.push(PassScratch { sets: sets.collect::<Result<_>>()? });
        }
        self.startup.scratch_s += t.elapsed().as_secs_f64();
        if self.adapt_first && self.passes.len() < 2 {
            // Without a team pass the reads pass 1 gives up on would go to the CPU.
            self.stream.memcpy_htod(&rule_state(false), &mut self.first_rule)?;
            self.stream.synchronize()?;
        }
        Ok(())
    }

    /// Waits for a queued batch; returns its inputs and, per read, the GPU's hits (`None`
    /// for reads left to the CPU, which the pipeline aligns there).
    pub fn collect(&mut self, flight: InFlight) -> Result<(HostBatch, Vec<Option<Vec<AlnHit>>>)> {
        let InFlight { slot, batch, events, no_hit_events, replay_events, proof_events } = flight;
        let slot = self.slots[slot].as_ref().expect("slots are put back after use");
        let (n, n_gpu) = (batch.n, batch.gpu_reads.len());
        let waited = std::time::Instant::now();
        slot.stream.synchronize()?;
        self.totals.host.wait_s += waited.elapsed().as_secs_f64();
        let answering = std::time::Instant::now();
        let (hits, (hits_full, entries_limit)) = answers_of(slot, &batch, self.hits_per_read)?;
        let counters = slot.counters.read(N_COUNTERS)?;
        let lookups = slot.lookups.read(N_KERNEL_COUNTS)?;
        let blocks_per_sm: Vec<f64> =
            (0..self.passes.len()).map(|p| self.pass_blocks_per_sm(p, batch.n_buckets)).collect();
        let widths_blocks_per_sm = self.widths_blocks_per_sm();
        let t = &mut self.totals;
        t.exact_reads += if self.inexact_switches.orders_by_root() {
            counters[ORDER_COUNTERS + 1] as usize // the reads the GPU searches that occur whole
        } else {
            let (k, l) = (slot.k.read(n)?, slot.l.read(n)?);
            k.iter().zip(l).filter(|&(&k, &l)| k <= l && !(k == 0 && l == 0)).count()
        };
        let kernels = t.add_kernels(&events, counters, lookups, (&blocks_per_sm, widths_blocks_per_sm))?;
        if let Some(spans) = self.origin.as_ref().and_then(|origin| kernel_spans(origin, &events)) {
            self.kernel_spans.push(spans);
        }
        let no_hit_line = match &no_hit_events {
            Some(e) => t.add_no_hit(e, counters, lookups)?,
            None => String::new(),
        };
        let replay_line = match &replay_events {
            Some(e) => exact_replay::add_to(t, &slot.replay, e, counters[0] as usize, n_gpu)?,
            None => String::new(),
        } + &match &proof_events {
            Some(e) => proof_pass::add_to(t, &slot.proof, e)?,
            None => String::new(),
        };
        self.last_kernels = format!(
            "kernels: exact_match {:.0} ms, D arrays {:.0} ms{no_hit_line}{replay_line}, passes {} reads",
            kernels.exact_ms,
            kernels.widths_ms,
            kernels.passes.join(" / ")
        );
        if self.adapt_first && t.first_pass_gave_up.is_none() {
            // On this batch's stream, which is idle now: the other's kernels run on.
            let rule = slot.stream.clone_dtoh(&self.first_rule)?;
            t.first_pass_gave_up = gave_up(&rule).map(|(finished, handed_on)| (t.batches, finished, handed_on));
        }
        t.hits_full_reads += hits_full;
        t.entries_limit_reads += entries_limit;
        t.not_taken_reads += n - n_gpu;
        t.batches += 1;
        t.host.answers_s += answering.elapsed().as_secs_f64();
        Ok((batch, hits))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every kernel and the default switches compile with NVRTC when it is present.
    #[test]
    fn kernels_compile_with_nvrtc() {
        if !nvrtc_present() {
            eprintln!("skipped: libnvrtc not found (set LD_LIBRARY_PATH to a CUDA 13 NVRTC to run this test)");
            return;
        }
        // The inexact kernels under each value of their switches (the host-side ones share
        // one compiled kernel) and all the occurrence variants together.
        let mut inexact = vec![
            InexactSwitches::default(),
            InexactSwitches {
                occ_ldg: true,
                occ_same_block: true,
                occ_unroll: true,
                occ_singleton: true,
                ..InexactSwitches::default()
            },
        ];
        for (name, values) in InexactSwitches::DOMAINS {
            for v in *values {
                inexact.push(InexactSwitches::default_with(&format!("{name}={v}")));
            }
        }
        let mut seen = std::collections::HashSet::new();
        for (_, defines) in inexact.iter().flat_map(|s| s.modules()).filter(|m| seen.insert(m.1.clone())) {
            compile(INEXACT_MATCH_CU, &defines, Some("sm_90")).unwrap_or_else(|e| panic!("{defines:?}: {e}"));
        }
        assert!(seen.len() >= 7, "{seen:?}");
        compile(interval_table::INTERVAL_TABLE_CU, &[], Some("sm_90")).unwrap();
        compile(compact_hits::COMPACT_HITS_CU, &[], Some("sm_90")).unwrap();
        compile(unpack_codes::UNPACK_CODES_CU, &[], Some("sm_90")).unwrap();
        let sw = Switches::default();
        compile(EXACT_MATCH_CU, &sw.defines(), Some("sm_90")).unwrap();
        for flip in 0..15 {
            let mut s = sw.clone();
            match flip {
                0 => s.kl_par = true,
                1 => s.many_blocks = true,
                2 => s.direct_sequence = false,
                3 => s.direct_index = false,
                4 => s.sequence_global = false,
                5 => s.sequence_shift81 = false,
                6 => s.sequence_stride = false,
                7 => (s.mycache4, s.mycache2) = (false, true),
                8 => s.direct_global_bwt = true,
                9 => s.cache_global_bwt = false,
                10 => s.scache_global_bwt = true,
                11 => s.cache_threads = Some(1),
                12 => s.cache_threads = Some(4),
                13 => (s.cache_threads, s.occ_par) = (Some(8), true),
                _ => (s.cache_threads, s.occ_par, s.block_w) = (Some(32), true, 256),
            }
            assert_eq!(s.illegal(), None, "{s:?}");
            compile(EXACT_MATCH_CU, &s.defines(), Some("sm_90")).unwrap_or_else(|e| panic!("{s:?}: {e}"));
        }
    }
}
