//! Reads that occur whole, answered by the candidates and the replay instead of bwa's search
//! (the switch `exact_replay`).
//!
//! bwa's search of a read that occurs whole finds its exact hit first, then proves the stratum
//! of one mismatch: each mismatch is a chain of matching children until its interval empties,
//! about 300 chains of a dozen pops a 100 bp read at 3.1 Gbp. Those reads are a third to two
//! fifths of a run, but take only about 3 % of the SMs in pass 2 (docs/gpu-search.md: at 3.1
//! Gbp the replay is exact and no faster, so it is off by default). Here one rung of the
//! candidates' ladder (cuda/candidates.cu) at a budget of one mismatch finds every alignment
//! within it, `candidate_tree` lays them out as bwa's search walks them, and `inexact_replay`
//! (cuda/inexact_match.cu) runs bwa's search kept to that tree: bwa's hits in bwa's order, in
//! about a read's length of pops. A read the rung or the tree cannot hold, or with more hits
//! than its slots, goes on to pass 1.
//!
//! Why bwa's `-m` cannot differ: with every gap costing more than a mismatch, bwa pops only
//! entries of score 0 and s_mm for such a read: the root's chain (len + 1) and, for each of
//! 3 x len mismatches, a chain of at most len + 1. A pop adds at most 8 entries to the stack,
//! so [`max_len_for`] keeps the reads whose stack cannot pass `-m`.

use std::sync::Arc;

use anyhow::{Context, Result};
use cudarc::driver::{CudaEvent, CudaStream, PushKernelArg};

use super::candidate_buffers::{at, CandidateBuffers, Room, RungLaunch, Sizes, MOST_EXTENSIONS};
use super::candidates::{cfg, lookups_in, ptr, rounds_for, CandidateKernels, Penalties, COUNTERS};
use super::slot::BatchOnGpu;
use super::BatchTimes;
use crate::sai::{GapOptions, MODE_NONSTOP};

/// Room per inexact read of a batch: a read's rung has two parts and branches little (one
/// mismatch), its tree a path of about a read's length an alignment.
const ROOM: Room = Room { branches: 4, min_branches: 1 << 16, nodes: 96, found: 4, tree_nodes: 128 };
/// A read with more alignments than this goes to the passes (more than 16 hits would anyway).
const MOST_ALIGNS: u32 = 32;

/// Whether these options let the replay answer the reads that occur whole: every difference
/// costs something, a gap more than a mismatch (so bwa pops no gapped entry), and bwa stops one
/// mismatch past its best hit (not `-N`).
pub fn applies(opt: &GapOptions) -> bool {
    opt.s_mm > 0 && opt.s_gapo > opt.s_mm && opt.mode & MODE_NONSTOP == 0
}

/// The longest read whose bwa stack cannot pass `max_entries` (bwa's `-m`) when it occurs whole
/// (see the module's note): 1 + 8 (len + 1)(3 len + 1) entries at most.
pub fn max_len_for(max_entries: i32) -> usize {
    let fits = |len: u64| 8 * (len + 1) * (3 * len + 1) < max_entries.max(0) as u64;
    (0..super::GPU_MAX_LEN as u64).take_while(|&len| fits(len + 1)).count()
}

/// Lists the batch's reads that occur whole (and whose search `-m` cannot stop) for the rung,
/// with their search sequences, bounds and budget: before inexact_order, which leaves them out
/// of pass 1.
/// Returns the room reserved for the branches, nodes, alignments and tree nodes (and the
/// replay's stack, `entry_bytes` an entry).
fn mark_exact_reads(
    k: &CandidateKernels,
    b: &mut CandidateBuffers,
    s: &Arc<CudaStream>,
    x: &BatchOnGpu,
    entry_bytes: usize,
) -> Result<Sizes> {
    let sizes = b.reserve(s, (x.n, x.n_codes), ROOM, entry_bytes)?;
    let (n32, max_len, s_mm) = (x.n as u32, max_len_for(x.opt.max_entries) as i32, x.opt.s_mm);
    let rs = b.reads_arg(s, x.starts, x.lens)?;
    let (status, (list, listed)) = (at(&mut b.status, s)?, b.list(s, 0, x.n)?);
    let mut launch = s.launch_builder(&k.exact_reads);
    launch.arg(x.exact_k).arg(x.exact_l).arg(x.read_of).arg(x.codes).arg(x.starts).arg(x.lens).arg(&n32);
    launch.arg(&max_len).arg(&s_mm).arg(&rs.codes).arg(&rs.bounds).arg(&rs.bound_start);
    launch.arg(&rs.budget).arg(&rs.max_edits).arg(&status).arg(&list).arg(&listed);
    // SAFETY: argument order and types match candidate_exact_reads' signature.
    unsafe { launch.launch(cfg(x.n)) }.context("launching candidate_exact_reads")?;
    Ok(sizes)
}

/// The rung over the listed reads and their trees, queued on `s` (after read_widths, before
/// the replay): seed, the rounds, rung_end, candidate_tree.
fn queue_ladder(
    k: &CandidateKernels,
    b: &mut CandidateBuffers,
    s: &Arc<CudaStream>,
    x: &BatchOnGpu,
    sizes: Sizes,
) -> Result<()> {
    let p = Penalties::of(x.opt);
    let rs = b.reads_arg(s, x.starts, x.lens)?;
    let rung = RungLaunch {
        words: x.words,
        primary: x.primary,
        l2: x.l2,
        p,
        rounds: rounds(x),
        most_extensions: MOST_EXTENSIONS,
        stop_at_any: false,
        keep_paths: true,
        sms: x.sms,
        n: x.n,
    };
    let (o, extensions) = b.queue_rung(k, s, &rs, &rung, sizes)?;
    let [list, next, proof] = [0, 1, 2].map(|j| b.list(s, j, x.n));
    let ((list, listed), (next, next_count), (proof, proof_count)) = (list?, next?, proof?);
    let status = at(&mut b.status, s)?;
    let (most, most_score, s_mm) = (MOST_EXTENSIONS, x.opt.s_mm, x.opt.s_mm);
    let mut launch = s.launch_builder(&k.rung_end);
    launch.arg(&list).arg(&listed).arg(&o.best).arg(&extensions).arg(&most).arg(&s_mm).arg(&most_score);
    launch.arg(&rs.max_edits).arg(&rs.budget).arg(&status).arg(&next).arg(&next_count);
    launch.arg(&proof).arg(&proof_count);
    // SAFETY: argument order and types match candidate_rung_end's signature.
    unsafe { launch.launch(cfg(x.n)) }.context("launching candidate_rung_end")?;
    let (tree, tree_capacity) = (at(&mut b.tree, s)?, sizes[3] as u32);
    let (tree_used, tree_start) = (at(&mut b.tree_used, s)?, at(&mut b.tree_start, s)?);
    let mut launch = s.launch_builder(&k.tree);
    launch.arg(&list).arg(&listed).arg(&rs).arg(&p).arg(&o.nodes).arg(&o.found).arg(&o.found_head);
    launch.arg(&o.found_next).arg(&o.counters).arg(&MOST_ALIGNS).arg(&tree).arg(&tree_capacity).arg(&tree_used);
    launch.arg(&tree_start).arg(&status);
    // SAFETY: argument order and types match candidate_tree's signature.
    unsafe { launch.launch(cfg(x.n)) }.context("launching candidate_tree")?;
    Ok(())
}

/// The rounds of the rung: one mismatch's budget pays for that many edits of the cheapest kind.
fn rounds(x: &BatchOnGpu) -> usize {
    rounds_for(x.max_len, (x.opt.s_mm / Penalties::of(x.opt).cheapest().max(1)) as usize)
}

/// Adds a fetched batch's replay to the totals: its events (around the rung and trees, around
/// the replay), given pass 1's reads (those not marked, and those the replay handed on) and the
/// batch's inexact reads. Returns its words for the kernel line.
pub(super) fn add_to(
    t: &mut BatchTimes,
    b: &CandidateBuffers,
    e: &[CudaEvent; 4],
    pass_one_reads: usize,
    n_gpu: usize,
) -> Result<String> {
    let (rung_ms, replay_ms) = (e[0].elapsed_ms(&e[1])?, e[2].elapsed_ms(&e[3])?);
    let marked = b.list_counts.read(3)?[0] as usize;
    let answered = marked.saturating_sub(pass_one_reads.saturating_sub(n_gpu.saturating_sub(marked)));
    t.replay_ms += rung_ms + replay_ms;
    t.replay_rung_ms += rung_ms;
    t.replay_reads += marked;
    t.replay_answered += answered;
    t.replay_rung_lookups += lookups_in(b.counters.read(COUNTERS)?);
    t.replay_lookups += b.lookups.read(1)?[0];
    Ok(format!(", rung {rung_ms:.0} ms + replay {replay_ms:.0} ms ({answered} of {marked} whole)"))
}

/// inexact_replay's inputs from these buffers (device addresses).
pub(super) struct ReplayArgs {
    pub list: u64,
    pub listed: u64,
    pub status: u64,
    pub tree: u64,
    pub tree_start: u64,
    pub entries: u64,
    pub lookups: u64,
}

pub(super) fn replay_args(b: &mut CandidateBuffers, s: &Arc<CudaStream>) -> Result<ReplayArgs> {
    // The rung's list, list 0, starts where the lists do whatever the batch's size.
    let (list, listed) = b.list(s, 0, 0)?;
    Ok(ReplayArgs {
        list,
        listed,
        status: at(&mut b.status, s)?,
        tree: at(&mut b.tree, s)?,
        tree_start: at(&mut b.tree_start, s)?,
        entries: at(&mut b.entries, s)?,
        lookups: ptr(b.lookups.reserve(s, 0)?, s),
    })
}

/// One batch's replay as the queue drives it: the reads listed (before inexact_order, which
/// reads their marks at `status`), the rung and trees (after read_widths), the replay (before
/// pass 1, [`GpuAligner`](super::GpuAligner)'s launch_replay), with events around the last two.
pub(super) struct BatchReplay<'k> {
    kernels: &'k CandidateKernels,
    sizes: Sizes,
    pub status: u64,
    pub events: Vec<CudaEvent>,
}

impl<'k> BatchReplay<'k> {
    pub fn mark(
        kernels: &'k CandidateKernels,
        b: &mut CandidateBuffers,
        s: &Arc<CudaStream>,
        x: &BatchOnGpu,
        entry_bytes: usize,
    ) -> Result<BatchReplay<'k>> {
        let sizes = mark_exact_reads(kernels, b, s, x, entry_bytes)?;
        Ok(BatchReplay { kernels, sizes, status: at(&mut b.status, s)?, events: Vec::new() })
    }

    pub fn queue_ladder(&mut self, b: &mut CandidateBuffers, s: &Arc<CudaStream>, x: &BatchOnGpu) -> Result<()> {
        self.events.push(super::timing_event(s)?);
        queue_ladder(self.kernels, b, s, x, self.sizes)?;
        self.events.push(super::timing_event(s)?);
        Ok(())
    }

    /// Queues the copies of the summary's counts; the four events.
    pub fn finish(self, b: &mut CandidateBuffers, s: &Arc<CudaStream>) -> Result<[CudaEvent; 4]> {
        b.fetch_counts(s)?;
        self.events.try_into().map_err(|e: Vec<CudaEvent>| anyhow::anyhow!("{} replay events, not 4", e.len()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// bwa's default -m keeps reads of up to 288 bases (1 + 8 x 289 x 865 = 1,999,881 entries at
    /// most); -m 300 none that the ladder could take (two bases need 1 + 8 x 3 x 7 = 169).
    #[test]
    fn the_longest_read_follows_bwas_limit() {
        assert_eq!(max_len_for(2_000_000), 288);
        assert_eq!(max_len_for(300), 2);
        assert_eq!(max_len_for(0), 0);
        assert_eq!(max_len_for(i32::MAX), super::super::GPU_MAX_LEN);
    }

    /// Only where every gap costs more than a mismatch, a mismatch costs something, and bwa
    /// stops a mismatch past its best hit.
    #[test]
    fn the_options_decide_whether_it_applies() {
        let d = GapOptions::default();
        assert!(applies(&d));
        assert!(!applies(&GapOptions { s_gapo: d.s_mm, ..d }));
        assert!(!applies(&GapOptions { s_mm: 0, ..d }));
        assert!(!applies(&GapOptions { mode: d.mode | MODE_NONSTOP, ..d }));
    }
}
