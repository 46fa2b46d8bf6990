//! The candidates' enumeration on the GPU (cuda/candidates.cu): every alignment of each read
//! within a ladder of score budgets, by pigeonhole searches run breadth first over the batch,
//! then the no-hit proof for the reads no budget found anything for. A port of
//! [`crate::search::pigeonhole`] (the kernels built for the CPU find its alignments:
//! dev/tests/candidates_kernel.rs). `aln` uses one rung of it for the reads that occur whole
//! (`exact_replay`, src/gpu/exact_replay.rs); `bcuda-dev candidates-gpu` measures the ladder.

use std::sync::Arc;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use cudarc::driver::{
    CudaContext, CudaFunction, CudaSlice, CudaStream, DevicePtr, DeviceRepr, LaunchConfig, PushKernelArg,
};

use super::interval_table::GpuBwt;
use super::nvrtc::compile_cached;
use super::occ_sectors;
use crate::sai::GapOptions;

pub const CANDIDATES_CU: &str = include_str!("../../cuda/candidates.cu");

/// A read's state in the ladder (cuda/candidates.cu's CAND_*).
pub const PENDING: u8 = 0;
pub const ANSWERED: u8 = 1;
pub const LEFT: u8 = 2;
pub const EXACT: u8 = 3;
pub const PROOF: u8 = 4;
pub const NO_ALIGNMENT: u8 = 5;
/// Left to bwa's search by the ladder: over a rung's extensions (or fewer bases than parts),
/// over the last budget, an alignment the proof found, over the proof's extensions.
pub const LEFT_EXTENSIONS: u8 = 6;
pub const LEFT_SCORE: u8 = 7;
pub const LEFT_ALIGNS: u8 = 8;
pub const LEFT_PROOF_EXTENSIONS: u8 = 9;

/// Whether a read in state `status` goes to bwa's search.
pub fn left_to_bwa(status: u8) -> bool {
    status == EXACT || status == LEFT || status >= LEFT_EXTENSIONS
}

/// The kernels' structures as C lays them out (checked against the kernels' own sizes).
pub(super) const BRANCH_BYTES: usize = 48;
pub(super) const FOUND_WORDS: usize = 4;
pub(super) const TREE_NODE_BYTES: usize = 12;
/// A rung's counters (cuda/candidates.cu's CNT_*): nodes, alignments found, overflow, then the
/// lookups as a u64 in two words.
pub(super) const COUNTERS: usize = 6;
const CNT_NODES: usize = 0;
const CNT_FOUND: usize = 1;
pub(super) const CNT_OVERFLOW: usize = 2;
const CNT_LOOKUPS: usize = 4;

/// The lookups of the counters `c` read back.
pub(super) fn lookups_in(c: &[u32]) -> u64 {
    c[CNT_LOOKUPS] as u64 | (c[CNT_LOOKUPS + 1] as u64) << 32
}
pub(super) const BLOCK: u32 = 256;

/// The batch as the kernels take it (device pointers): each read's search sequence, bounds,
/// budget and edit limit.
#[repr(C)]
#[derive(Clone, Copy)]
pub(super) struct ReadsArg {
    pub codes: u64,
    pub code_start: u64,
    pub len: u64,
    pub bounds: u64,
    pub bound_start: u64,
    pub budget: u64,
    pub max_edits: u64,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct Penalties {
    pub s_mm: i32,
    pub s_gapo: i32,
    pub s_gape: i32,
    pub max_gapo: i32,
}

impl Penalties {
    /// The no-hit proof's: every edit at one, gap opens unlimited (bwa limits them: more
    /// alignments is safe).
    pub const UNIT: Penalties = Penalties { s_mm: 1, s_gapo: 1, s_gape: 1, max_gapo: 1 << 30 };

    /// bwa's penalties and gap opens.
    pub fn of(opt: &GapOptions) -> Penalties {
        Penalties { s_mm: opt.s_mm, s_gapo: opt.s_gapo, s_gape: opt.s_gape, max_gapo: opt.max_gapo.max(0) }
    }

    /// The cheapest edit (candidates.cu's `cheapest`): a mismatch, or a gap's where gaps may open.
    pub fn cheapest(&self) -> i32 {
        if self.max_gapo == 0 {
            self.s_mm
        } else {
            self.s_mm.min(self.s_gapo).min(self.s_gape)
        }
    }
}

/// Where a rung writes (device pointers; `found_head` 0: the alignments are not listed by read).
#[repr(C)]
#[derive(Clone, Copy)]
pub(super) struct OutputsArg {
    pub next: u64,
    pub next_capacity: u32,
    pub _pad0: u32,
    pub nodes: u64,
    pub node_capacity: u32,
    pub _pad1: u32,
    pub found: u64,
    pub found_capacity: u32,
    pub _pad2: u32,
    pub counters: u64,
    pub best: u64,
    pub any: u64,
    pub found_head: u64,
    pub found_next: u64,
}

// SAFETY: plain C structures of integers and device pointers, as the kernels declare them.
unsafe impl DeviceRepr for ReadsArg {}
unsafe impl DeviceRepr for Penalties {}
unsafe impl DeviceRepr for OutputsArg {}

/// What the ladder may spend: its last budget, the extensions a read may take in a rung and in
/// the proof, and the buffers' sizes (a rung that outgrows one fails the ladder: a smaller
/// batch fits).
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    pub most_score: i32,
    pub rung_extensions: u32,
    pub proof_extensions: u32,
    pub branches: usize,
    pub nodes: usize,
    pub found: usize,
    /// Reads that occur whole go up the ladder too (else they are left to bwa's search).
    pub exact_too: bool,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            most_score: 15,
            rung_extensions: 60_000,
            proof_extensions: 60_000,
            branches: 24 << 20,
            nodes: 256 << 20,
            found: 32 << 20,
            exact_too: false,
        }
    }
}

/// A batch as the kernels take it: each read's codes (bwa's search sequence, N as 4), its edit
/// limit, and its first state (PENDING, or already decided).
#[derive(Default)]
pub struct CandidateBatch {
    pub codes: Vec<u8>,
    pub starts: Vec<u64>,
    pub lens: Vec<u16>,
    pub max_edits: Vec<u8>,
    pub status: Vec<u8>,
}

impl CandidateBatch {
    pub fn push(&mut self, seq: &[u8], max_edits: u8, status: u8) {
        self.starts.push(self.codes.len() as u64);
        self.codes.extend_from_slice(seq);
        self.lens.push(seq.len() as u16);
        self.max_edits.push(max_edits);
        self.status.push(status);
    }

    pub fn len(&self) -> usize {
        self.lens.len()
    }

    /// Reads `range` as a batch of their own.
    pub fn part(&self, range: std::ops::Range<usize>) -> CandidateBatch {
        let mut out = CandidateBatch::default();
        for r in range {
            let start = self.starts[r] as usize;
            out.push(&self.codes[start..start + self.lens[r] as usize], self.max_edits[r], self.status[r]);
        }
        out
    }

    pub fn is_empty(&self) -> bool {
        self.lens.is_empty()
    }

    /// The rounds a rung of these reads takes at most.
    fn rounds(&self) -> usize {
        let max_len = self.lens.iter().copied().max().unwrap_or(0) as usize;
        rounds_for(max_len, self.max_edits.iter().copied().max().unwrap_or(0) as usize)
    }
}

/// One rung (or the proof): its reads, time, extensions and what it found.
#[derive(Clone, Debug, Default)]
pub struct RungStats {
    pub reads: usize,
    pub ms: f64,
    pub rounds: usize,
    pub lookups: u64,
    pub nodes: u64,
    pub found: u64,
    /// With [`CandidateSearch::round_times`]: each round's branches and microseconds.
    pub round_times: Vec<(u32, f64)>,
}

/// What the ladder did to a batch: each read's state, the bounds' time and lookups, the rungs.
pub struct LadderOutcome {
    pub status: Vec<u8>,
    pub bounds_ms: f64,
    pub bounds_lookups: u64,
    pub rungs: Vec<RungStats>,
    pub proof: RungStats,
}

/// An alignment one rung found: its read, search (part), last node and score; `nodes` gives
/// its path.
pub struct FoundAlignments {
    pub found: Vec<[u32; 4]>,
    pub nodes: Vec<u64>,
}

/// The module's kernels as loaded on a GPU, counting from the occurrence sectors or bwa's array
/// as they were compiled ([`CandidateSearch::defines`]).
#[derive(Clone)]
pub struct CandidateKernels {
    pub(super) bounds: CudaFunction,
    pub(super) seed: CudaFunction,
    pub(super) round: CudaFunction,
    pub(super) rung_end: CudaFunction,
    pub(super) proof_end: CudaFunction,
    pub(super) tree: CudaFunction,
    pub(super) exact_reads: CudaFunction,
    pub(super) queued_reads: CudaFunction,
    pub(super) drop_proved: CudaFunction,
    pub(super) copy_list: CudaFunction,
}

impl CandidateKernels {
    /// Compiles (or takes from the kernel cache) and loads the kernels for `arch`; checks that
    /// their structures take the bytes the host lays out.
    pub fn load(
        ctx: &Arc<CudaContext>,
        arch: &'static str,
        sectors: bool,
        min_blocks: u32,
    ) -> Result<CandidateKernels> {
        let module = compile_cached(CANDIDATES_CU, &CandidateSearch::defines(sectors, min_blocks), arch)?.load(ctx)?;
        let f = |name| module.load_function(name).with_context(|| format!("loading {name}"));
        let kernels = CandidateKernels {
            bounds: f("candidate_bounds")?,
            seed: f("candidate_seed")?,
            round: f("candidate_round")?,
            rung_end: f("candidate_rung_end")?,
            proof_end: f("candidate_proof_end")?,
            tree: f("candidate_tree")?,
            exact_reads: f("candidate_exact_reads")?,
            queued_reads: f("candidate_queued_reads")?,
            drop_proved: f("candidate_drop_proved")?,
            copy_list: f("candidate_copy_list")?,
        };
        check_sizes(&ctx.default_stream(), &f("candidate_sizes")?)?;
        Ok(kernels)
    }
}

/// The kernels' Branch, Found, Reads, Outputs and TreeNode take the bytes the host lays out.
fn check_sizes(stream: &Arc<CudaStream>, f: &CudaFunction) -> Result<()> {
    let mut out = stream.alloc_zeros::<u32>(5)?;
    let mut launch = stream.launch_builder(f);
    launch.arg(&mut out);
    // SAFETY: candidate_sizes(u32 *out) writes five words.
    unsafe { launch.launch(cfg(1)) }?;
    let sizes = stream.clone_dtoh(&out)?;
    let host = [BRANCH_BYTES, FOUND_WORDS * 4, size_of::<ReadsArg>(), size_of::<OutputsArg>(), TREE_NODE_BYTES];
    if sizes != host.map(|b| b as u32) {
        bail!("candidates.cu's Branch, Found, Reads, Outputs and TreeNode take {sizes:?} bytes, the host expects {host:?}");
    }
    Ok(())
}

/// The kernels on a GPU with its copy of the BWT (the occurrence sectors, or bwa's array).
pub struct CandidateSearch {
    stream: Arc<CudaStream>,
    kernels: CandidateKernels,
    words: CudaSlice<u32>,
    l2: CudaSlice<u64>,
    primary: u64,
    /// Time each round (waiting for it): [`RungStats::round_times`].
    pub round_times: bool,
}

/// The batch's arrays on the GPU and the ladder's buffers.
struct OnGpu {
    codes: CudaSlice<u8>,
    starts: CudaSlice<u64>,
    lens: CudaSlice<u16>,
    bounds: CudaSlice<u8>,
    bound_starts: CudaSlice<u64>,
    budget: CudaSlice<u16>,
    max_edits: CudaSlice<u8>,
    status: CudaSlice<u8>,
    best: CudaSlice<u32>,
    any: CudaSlice<u8>,
    extensions: CudaSlice<u32>,
    lists: [CudaSlice<u32>; 3],
    list_counts: CudaSlice<u32>,
    branches: [CudaSlice<u8>; 2],
    counts: CudaSlice<u32>,
    nodes: CudaSlice<u64>,
    found: CudaSlice<u32>,
    counters: CudaSlice<u32>,
}

pub(super) fn ptr<T>(s: &CudaSlice<T>, stream: &CudaStream) -> u64 {
    s.device_ptr(stream).0
}

pub(super) fn cfg(n: usize) -> LaunchConfig {
    let blocks = (n as u32).max(1).div_ceil(BLOCK);
    LaunchConfig { grid_dim: (blocks, 1, 1), block_dim: (BLOCK, 1, 1), shared_mem_bytes: 0 }
}

impl CandidateSearch {
    /// The kernels' `-D` options.
    pub fn defines(sectors: bool, min_blocks: u32) -> Vec<String> {
        vec![
            format!("-DCAND_BLOCK_W={BLOCK}"),
            format!("-DCAND_SECTORS={}", sectors as u8),
            format!("-DCAND_MIN_BLOCKS={min_blocks}"),
        ]
    }

    /// Compiles the kernels for `arch` and copies the BWT (bwa's words, L2, primary) to the GPU.
    /// With `sectors`, lookups count from the occurrence sectors (built here from bwa's array,
    /// which then goes) instead; `min_blocks` as [`CandidateSearch::defines`] takes it.
    pub fn new(
        ctx: &Arc<CudaContext>,
        arch: &'static str,
        bwt: &bcuda_index::Bwt,
        (sectors, min_blocks): (bool, u32),
    ) -> Result<CandidateSearch> {
        let stream = ctx.default_stream();
        let kernels = CandidateKernels::load(ctx, arch, sectors, min_blocks)?;
        let mut words = stream.clone_htod(bwt.words()).context("copying the BWT to the GPU")?;
        let l2 = stream.clone_htod(&bwt.l2())?;
        if sectors {
            let on_gpu = GpuBwt { words: &words, primary: bwt.primary(), seq_len: bwt.seq_len(), l2: &l2 };
            words = occ_sectors::build(ctx, &stream, arch, &on_gpu, false)?;
        }
        Ok(CandidateSearch { stream, kernels, words, l2, primary: bwt.primary(), round_times: false })
    }

    fn upload(&self, batch: &CandidateBatch, limits: &Limits) -> Result<OnGpu> {
        let s = &self.stream;
        let n = batch.len().max(1);
        let mut bound_starts = Vec::with_capacity(n);
        let mut at = 0u64;
        for &len in &batch.lens {
            bound_starts.push(at);
            at += 2 * (len as u64 + 1);
        }
        Ok(OnGpu {
            codes: s.clone_htod(&batch.codes)?,
            starts: s.clone_htod(&batch.starts)?,
            lens: s.clone_htod(&batch.lens)?,
            bounds: s.alloc_zeros::<u8>(at.max(1) as usize)?,
            bound_starts: s.clone_htod(&bound_starts)?,
            budget: s.alloc_zeros::<u16>(n)?,
            max_edits: s.clone_htod(&batch.max_edits)?,
            status: s.clone_htod(&batch.status)?,
            best: s.alloc_zeros::<u32>(n)?,
            any: s.alloc_zeros::<u8>(n)?,
            extensions: s.alloc_zeros::<u32>(n)?,
            lists: [s.alloc_zeros::<u32>(n)?, s.alloc_zeros::<u32>(n)?, s.alloc_zeros::<u32>(n)?],
            list_counts: s.alloc_zeros::<u32>(3)?,
            branches: [
                s.alloc_zeros::<u8>(limits.branches * BRANCH_BYTES)?,
                s.alloc_zeros::<u8>(limits.branches * BRANCH_BYTES)?,
            ],
            counts: s.alloc_zeros::<u32>(MAX_ROUNDS + 2)?,
            nodes: s.alloc_zeros::<u64>(limits.nodes)?,
            found: s.alloc_zeros::<u32>(limits.found * FOUND_WORDS)?,
            counters: s.alloc_zeros::<u32>(COUNTERS)?,
        })
    }

    fn reads_arg(&self, g: &OnGpu) -> ReadsArg {
        let s = &self.stream;
        ReadsArg {
            codes: ptr(&g.codes, s),
            code_start: ptr(&g.starts, s),
            len: ptr(&g.lens, s),
            bounds: ptr(&g.bounds, s),
            bound_start: ptr(&g.bound_starts, s),
            budget: ptr(&g.budget, s),
            max_edits: ptr(&g.max_edits, s),
        }
    }

    fn outputs_arg(&self, g: &OnGpu, limits: &Limits) -> OutputsArg {
        let s = &self.stream;
        OutputsArg {
            next: 0,
            next_capacity: limits.branches as u32,
            _pad0: 0,
            nodes: ptr(&g.nodes, s),
            node_capacity: limits.nodes as u32,
            _pad1: 0,
            found: ptr(&g.found, s),
            found_capacity: limits.found as u32,
            _pad2: 0,
            counters: ptr(&g.counters, s),
            best: ptr(&g.best, s),
            any: ptr(&g.any, s),
            found_head: 0,
            found_next: 0,
        }
    }
}

/// The most rounds a rung may take: a branch extends at most once a read base and once a
/// deleted base.
pub(super) const MAX_ROUNDS: usize = 1024;

/// The rounds a rung of reads of at most `max_len` bases with at most `max_edits` edits takes.
pub(super) fn rounds_for(max_len: usize, max_edits: usize) -> usize {
    (max_len + max_edits + 2).min(MAX_ROUNDS)
}

impl CandidateSearch {
    /// Each read's bounds and first budget, with `penalties`; the reads listed for the first rung.
    fn run_bounds(&self, g: &mut OnGpu, n: usize, p: Penalties, exact_too: bool) -> Result<(usize, u64)> {
        let rs = self.reads_arg(g);
        let (n32, exact_too, proof) = (n as u32, exact_too as i32, 0i32);
        let mut launch = self.stream.launch_builder(&self.kernels.bounds);
        launch.arg(&self.words).arg(&self.primary).arg(&self.l2).arg(&rs).arg(&p).arg(&n32).arg(&exact_too).arg(&proof);
        launch.arg(&mut g.bounds).arg(&mut g.budget).arg(&mut g.status).arg(&mut g.lists[0]);
        launch.arg(&mut g.list_counts).arg(&mut g.counters);
        // SAFETY: argument order and types match candidate_bounds' signature.
        unsafe { launch.launch(cfg(n)) }.context("launching candidate_bounds")?;
        let counts = self.stream.clone_dtoh(&g.list_counts)?;
        Ok((counts[0] as usize, lookups_in(&self.stream.clone_dtoh(&g.counters)?)))
    }

    /// One rung over the `n` reads of list `list` (their budgets set): seed, then the rounds;
    /// None where it outgrew a buffer (branches, nodes or alignments found).
    fn run_rung(
        &self,
        g: &mut OnGpu,
        list: usize,
        n: usize,
        p: Penalties,
        rung: RungArgs,
    ) -> Result<Option<RungStats>> {
        let t = Instant::now();
        let s = &self.stream;
        s.memset_zeros(&mut g.counts)?;
        s.memset_zeros(&mut g.counters)?;
        let rs = self.reads_arg(g);
        let mut o = self.outputs_arg(g, &rung.limits);
        let listed = g.list_counts.slice(list..list + 1);
        let mut launch = s.launch_builder(&self.kernels.seed);
        launch.arg(&self.l2).arg(&rs).arg(&p).arg(&g.lists[list]).arg(&listed).arg(&mut g.counts);
        launch.arg(&mut g.branches[0]).arg(&o).arg(&mut g.extensions);
        // SAFETY: argument order and types match candidate_seed's signature.
        unsafe { launch.launch(cfg(n)) }.context("launching candidate_seed")?;
        let grid = LaunchConfig { grid_dim: (rung.blocks, 1, 1), block_dim: (BLOCK, 1, 1), shared_mem_bytes: 0 };
        let mut round_times = Vec::new();
        for round in 0..rung.rounds {
            let start = self.round_times.then(|| s.synchronize().map(|_| Instant::now())).transpose()?;
            o.next = ptr(&g.branches[(round + 1) % 2], s);
            let r32 = round as u32;
            let mut launch = s.launch_builder(&self.kernels.round);
            launch.arg(&self.words).arg(&self.primary).arg(&self.l2).arg(&rs).arg(&p).arg(&r32);
            launch.arg(&g.branches[round % 2]).arg(&mut g.counts).arg(&o).arg(&mut g.extensions);
            launch.arg(&rung.most_extensions).arg(&rung.stop_at_any);
            // SAFETY: argument order and types match candidate_round's signature.
            unsafe { launch.launch(grid) }.context("launching candidate_round")?;
            if let Some(start) = start {
                s.synchronize()?;
                let us = start.elapsed().as_secs_f64() * 1e6;
                round_times.push((s.clone_dtoh(&g.counts.slice(round..round + 1))?[0], us));
            }
        }
        let counts = s.clone_dtoh(&g.counts)?;
        let c = s.clone_dtoh(&g.counters)?;
        if counts[rung.rounds] != 0 {
            bail!("a rung ran out of rounds ({} branches left after {})", counts[rung.rounds], rung.rounds);
        }
        if c[CNT_OVERFLOW] != 0 {
            return Ok(None);
        }
        let rounds = counts.iter().position(|&x| x == 0).unwrap_or(rung.rounds);
        let ms = t.elapsed().as_secs_f64() * 1e3;
        let (nodes, found) = (c[CNT_NODES] as u64, c[CNT_FOUND] as u64);
        Ok(Some(RungStats { reads: n, ms, rounds, lookups: lookups_in(&c), nodes, found, round_times }))
    }
}

/// A rung's launch settings.
#[derive(Clone, Copy)]
struct RungArgs {
    rounds: usize,
    blocks: u32,
    most_extensions: u32,
    stop_at_any: i32,
    limits: Limits,
}

impl CandidateSearch {
    /// The ladder over `batch` at bwa's `penalties` (the no-hit proof at one per edit), with
    /// `blocks` blocks for each round; None where a rung outgrew a buffer (a smaller batch fits).
    pub fn ladder(
        &self,
        batch: &CandidateBatch,
        p: Penalties,
        limits: Limits,
        blocks: u32,
    ) -> Result<Option<LadderOutcome>> {
        let mut g = self.upload(batch, &limits)?;
        self.stream.synchronize()?;
        let t = Instant::now();
        let n = batch.len();
        let (mut listed, bounds_lookups) = self.run_bounds(&mut g, n, p, limits.exact_too)?;
        let bounds_ms = t.elapsed().as_secs_f64() * 1e3;
        let mut rung = RungArgs {
            rounds: batch.rounds(),
            blocks,
            most_extensions: limits.rung_extensions,
            stop_at_any: 0,
            limits,
        };
        let (mut list, mut rungs) = (0, Vec::new());
        let mut proofs = 0;
        while listed > 0 {
            let Some(stats) = self.run_rung(&mut g, list, listed, p, rung)? else { return Ok(None) };
            rungs.push(stats);
            let next = 1 - list;
            (listed, proofs) = self.run_rung_end(&mut g, list, rungs.last().unwrap().reads, p, &limits)?;
            list = next;
        }
        let mut proof = RungStats::default();
        if proofs > 0 {
            rung.most_extensions = limits.proof_extensions;
            rung.stop_at_any = 1;
            let Some(stats) = self.run_rung(&mut g, 2, proofs, Penalties::UNIT, rung)? else { return Ok(None) };
            proof = stats;
            self.run_proof_end(&mut g, proofs, limits.proof_extensions)?;
        }
        let status = self.stream.clone_dtoh(&g.status)?;
        Ok(Some(LadderOutcome { status: status[..n].to_vec(), bounds_ms, bounds_lookups, rungs, proof }))
    }

    /// After a rung over list `list`: the next rung's reads (in the other list) and the proof's
    /// (appended to list 2); returns both counts.
    fn run_rung_end(
        &self,
        g: &mut OnGpu,
        list: usize,
        n: usize,
        p: Penalties,
        limits: &Limits,
    ) -> Result<(usize, usize)> {
        let s = &self.stream;
        let next = 1 - list;
        let mut counts = s.clone_dtoh(&g.list_counts)?;
        counts[next] = 0;
        s.memcpy_htod(&counts, &mut g.list_counts)?;
        let (next_count, proof_count) = (next as u64, 2u64);
        let counts_ptr = ptr(&g.list_counts, s);
        let listed = counts_ptr + 4 * list as u64;
        let [a, b, c] = &mut g.lists;
        let (this, other) = if list == 0 { (&*a, b) } else { (&*b, a) };
        let mut launch = s.launch_builder(&self.kernels.rung_end);
        launch.arg(this).arg(&listed).arg(&g.best).arg(&g.extensions).arg(&limits.rung_extensions);
        launch.arg(&p.s_mm).arg(&limits.most_score).arg(&g.max_edits).arg(&mut g.budget).arg(&mut g.status);
        let (next_at, proof_at) = (counts_ptr + 4 * next_count, counts_ptr + 4 * proof_count);
        launch.arg(other).arg(&next_at).arg(c).arg(&proof_at);
        // SAFETY: argument order and types match candidate_rung_end's signature (the three counts
        // are pointers into list_counts).
        unsafe { launch.launch(cfg(n)) }.context("launching candidate_rung_end")?;
        let counts = s.clone_dtoh(&g.list_counts)?;
        Ok((counts[next] as usize, counts[2] as usize))
    }

    fn run_proof_end(&self, g: &mut OnGpu, n: usize, most: u32) -> Result<()> {
        let listed = g.list_counts.slice(2..3);
        let mut launch = self.stream.launch_builder(&self.kernels.proof_end);
        launch.arg(&g.lists[2]).arg(&listed).arg(&g.any).arg(&g.extensions).arg(&most);
        launch.arg(&mut g.status);
        // SAFETY: argument order and types match candidate_proof_end's signature.
        unsafe { launch.launch(cfg(n)) }.context("launching candidate_proof_end")?;
        Ok(())
    }

    /// One rung over every read of `batch` at the given budgets (no ladder), and the alignments
    /// it found: what the CPU model is checked against.
    pub fn one_rung(
        &self,
        batch: &CandidateBatch,
        budgets: &[u16],
        p: Penalties,
        limits: Limits,
    ) -> Result<FoundAlignments> {
        let mut g = self.upload(batch, &limits)?;
        self.run_bounds(&mut g, batch.len(), p, false)?;
        self.stream.memcpy_htod(budgets, &mut g.budget)?;
        let all: Vec<u32> = (0..batch.len() as u32).collect();
        self.stream.memcpy_htod(&all, &mut g.lists[0])?;
        self.stream.memcpy_htod(&[batch.len() as u32, 0, 0], &mut g.list_counts)?;
        let rung = RungArgs { rounds: batch.rounds(), blocks: 1024, most_extensions: u32::MAX, stop_at_any: 0, limits };
        let Some(stats) = self.run_rung(&mut g, 0, batch.len(), p, rung)? else {
            bail!("one rung over {} reads outgrew its buffers: {limits:?}", batch.len())
        };
        // Only the used part of each buffer (the whole are gigabytes).
        let found = self.stream.clone_dtoh(&g.found.slice(..stats.found as usize * FOUND_WORDS))?;
        let nodes = self.stream.clone_dtoh(&g.nodes.slice(..stats.nodes as usize))?;
        let found = found.chunks(FOUND_WORDS).map(|c| [c[0], c[1], c[2], c[3]]).collect();
        Ok(FoundAlignments { found, nodes })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::nvrtc::{compile as nvrtc_compile, nvrtc_present};

    /// The kernels compile for sm_90, from bwa's array and from the sectors (skipped without NVRTC).
    #[test]
    fn the_kernels_compile() {
        if !nvrtc_present() {
            eprintln!("skipped: libnvrtc not found (set LD_LIBRARY_PATH to a CUDA 13 NVRTC to run this test)");
            return;
        }
        for sectors in [false, true] {
            let ptx = nvrtc_compile(CANDIDATES_CU, &CandidateSearch::defines(sectors, 0), Some("sm_90")).unwrap();
            for kernel in ["candidate_bounds", "candidate_seed", "candidate_round", "candidate_rung_end"] {
                assert!(ptx.contains(&format!(".entry {kernel}")), "{kernel}");
            }
        }
    }
}
