//! The passes of the GPU's inexact search (cuda/inexact_match.cu): how many threads each pass
//! runs and how large their stacks are, and the scratch that holds them.
//!
//! Why passes: the work and the stack a read needs vary by orders of magnitude. Most reads
//! finish within a few thousand pops and entries; reads from repeat families and satellites take
//! up to millions of pops. Pass 1 (`inexact_search`) runs one read per thread with a small
//! bounded stack and a pop budget, so the many short searches run at full width; a read that
//! needs more is listed for pass 2 (`inexact_level`), where a team of threads (a warp) searches
//! one read, its lanes running the chains of a score level together (see
//! src/search/level_search.rs), with a pool of entries per team. The last pass is pass 2 with
//! fewer, larger teams (a block of `last_team_lanes` threads: its reads' levels hold thousands
//! of chains) and pools as large as bwa's `-m` lets a search grow (when memory permits), so no
//! read is left to the CPU but for those that reach bwa's `-m` limit. A middle pass
//! (`mid_team_lanes`) may stand between them: teams of a size between, several an SM, with
//! pools that hold most of what pass 2 hands on. Threads and teams take reads from a queue, so
//! each pass's time follows its work rather than its longest read.

use std::sync::Arc;

use anyhow::{bail, Result};
use cudarc::driver::{CudaSlice, CudaStream};

use super::switches::InexactSwitches;
use crate::search::level_search::lane_buffer_entries;

/// Hits a warp pass keeps for one read (more: the CPU takes the read).
pub const WARP_HITS: usize = 4096;
/// Bytes of one hit (`Hit`: a .sai record).
pub const HIT_BYTES: usize = 24;
/// Bytes of one D-array cell (`Width`).
const WIDTH_BYTES: usize = 16;
/// Lanes of a warp, and entries per chunk of a warp's pool (CHUNK in the kernel and in
/// src/search/level_search.rs).
pub const LANES: usize = 32;
pub const CHUNK: usize = crate::search::level_search::CHUNK;

/// Pass 1: threads per SM; the last pass: teams per SM (its pools get what bwa's `-m` needs).
/// Pass 1's stack entries and pop budget, pass 2's warps per SM and pool entries, the middle
/// pass's shape, and the threads per team of the team passes are tuning switches
/// ([`InexactSwitches`]: 512 entries, 2048 pops, 16 warps, 32,768 entries, teams of 32 and 1024
/// threads by default, no middle pass, measured on the H100).
const FIRST_THREADS_PER_SM: usize = 1024;
const LAST_TEAMS_PER_SM: usize = 1;
/// Entries a team's pool may need beyond bwa's `-m`: the search stops once it holds more than
/// `-m`, but a group of chains (one per thread of the team) is committed at once, each chain's
/// first entry still in its level's chunks, and its last pop may push 9; and the pool is handed
/// out in chunks: each score's last chunk may be part-filled, and a commit keeps a free chunk
/// per score in reserve (two chunks per score, and some to spare). 128 chunks in all is short
/// of that at 68 scores and teams of 1024 (`bcuda-dev stack-profile --lanes 1024`).
fn entries_beyond_max(n_buckets: usize, team: usize) -> usize {
    16 + team + (2 * n_buckets + 64) * CHUNK
}

/// How a pass searches a read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PassKind {
    /// One thread per read, a bounded stack of its own (`inexact_search`).
    Thread,
    /// One team of threads (a block) per read, a pool of entries per team (`inexact_level`).
    Warp,
}

/// One pass: its kind, its threads (a multiple of the block width, or fewer than one block),
/// its stack entries per thread (Thread) or per team (Warp), and its threads per team (Warp;
/// 1 for Thread: each thread searches alone).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pass {
    pub kind: PassKind,
    pub threads: usize,
    pub entries: usize,
    pub team: usize,
}

impl Pass {
    /// Searchers (threads, or warps) of the pass: each has its own scratch.
    pub fn searchers(&self) -> usize {
        match self.kind {
            PassKind::Thread => self.threads,
            PassKind::Warp => self.threads.div_ceil(self.team),
        }
    }
}

/// Scratch bytes per searcher (a thread, or a team of `team` threads) of a pass kind, for reads
/// up to `max_len` and `n_buckets` scores, with stack entries of `entry_bytes`
/// ([`InexactSwitches::entry_bytes`]).
pub fn bytes_per_searcher(
    kind: PassKind,
    entries: usize,
    team: usize,
    max_len: usize,
    n_buckets: usize,
    entry_bytes: usize,
) -> usize {
    let read = 2 * (max_len + 1) * WIDTH_BYTES + max_len;
    match kind {
        PassKind::Thread => entries * entry_bytes + read + 4 * n_buckets,
        PassKind::Warp => {
            let chunks = entries / CHUNK;
            entries * entry_bytes
                + read
                + 4 * (n_buckets * chunks + chunks + 2 * n_buckets)
                + 4 * super::rungs::guard_counter_ints(max_len)
                + team * lane_buffer_entries(max_len) * entry_bytes
                + WARP_HITS * HIT_BYTES
        }
    }
}

/// Bytes of a pass's scratch: its searchers' (threads, or teams) for reads up to `max_len` and
/// `n_buckets` scores.
pub fn pass_bytes(pass: &Pass, max_len: usize, n_buckets: usize, entry_bytes: usize) -> usize {
    pass.searchers() * bytes_per_searcher(pass.kind, pass.entries, pass.team, max_len, n_buckets, entry_bytes)
}

/// What a pass is for: pass 1's threads, pass 2's teams, the middle pass's (when the
/// switches ask for one) and the last pass's, whose pools hold what bwa's `-m` allows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    First,
    Level,
    Middle,
    Last,
}

/// The passes for a GPU with `sms` SMs and `budget` bytes of scratch, for reads up to
/// `max_len`, `n_buckets` scores and bwa's `-m` of `max_entries`, shaped by the switches `sw`
/// (block width, pass 1's stack entries, each team pass's teams per SM, threads per team and
/// pool). `entries` overrides the stack sizes (the device checks force small stacks this way;
/// one to four sizes: pass 1's, pass 2's, then the last pass's, the middle pass's before it when
/// there are four; warp pools are rounded to whole chunks). Each pass gets at most an even share
/// of what the passes before it left (the last pass the rest: the others need far less than their
/// share, the last pass's pools for bwa's `-m` far more); a team pass whose pools would be no
/// larger than the one before is left out.
pub fn plan(
    sms: usize,
    budget: usize,
    max_len: usize,
    n_buckets: usize,
    max_entries: usize,
    sw: &InexactSwitches,
    entries: Option<&[usize]>,
) -> Result<Vec<Pass>> {
    let last = (max_entries + entries_beyond_max(n_buckets, sw.last_team_lanes as usize)).next_multiple_of(CHUNK);
    let wanted = wanted_passes(sw, last, entries)?;
    let mut passes: Vec<Pass> = Vec::new();
    let mut left = budget;
    for (p, &(role, want)) in wanted.iter().enumerate() {
        let share = left / (wanted.len() - p);
        let pass = pass_within(role, want, share, sms.max(1), (max_len, n_buckets), sw);
        let smaller = passes.last().is_some_and(|prev| prev.kind == PassKind::Warp && pass.entries <= prev.entries);
        if pass.threads == 0 || pass.entries == 0 || smaller {
            continue;
        }
        left = left.saturating_sub(pass_bytes(&pass, max_len, n_buckets, sw.entry_bytes()));
        passes.push(pass);
    }
    if passes.first().is_none_or(|p| p.kind != PassKind::Thread) {
        bail!("no GPU memory for the inexact search's stacks ({budget} bytes free for them)");
    }
    Ok(passes)
}

/// The passes the switches (or the forced stack sizes) ask for, with their stack entries; the
/// last pass's pools are `last` entries.
fn wanted_passes(sw: &InexactSwitches, last: usize, entries: Option<&[usize]>) -> Result<Vec<(Role, usize)>> {
    let level = (sw.level_entries as usize).min(last);
    Ok(match entries {
        Some(&[first]) => vec![(Role::First, first)],
        Some(&[first, level]) => vec![(Role::First, first), (Role::Level, level)],
        Some(&[first, level, last]) => vec![(Role::First, first), (Role::Level, level), (Role::Last, last)],
        Some(&[first, level, mid, last]) if sw.mid_team_lanes > 0 => {
            vec![(Role::First, first), (Role::Level, level), (Role::Middle, mid), (Role::Last, last)]
        }
        Some(e) => bail!("{} forced stack sizes: one to three, or four with a middle pass (mid_team_lanes)", e.len()),
        None if sw.mid_team_lanes > 0 => vec![
            (Role::First, sw.first_entries as usize),
            (Role::Level, level),
            (Role::Middle, (sw.mid_entries as usize).min(last)),
            (Role::Last, last),
        ],
        None => vec![(Role::First, sw.first_entries as usize), (Role::Level, level), (Role::Last, last)],
    })
}

/// One pass of `role` wanting `want` stack entries, within `share` bytes: pass 1 keeps its
/// threads (whole blocks) and gives up entries; a team pass keeps its pools and gives up teams.
fn pass_within(
    role: Role,
    want: usize,
    share: usize,
    sms: usize,
    (max_len, n_buckets): (usize, usize),
    sw: &InexactSwitches,
) -> Pass {
    let entry_bytes = sw.entry_bytes();
    if role == Role::First {
        let (threads, block_w) = (sms * FIRST_THREADS_PER_SM, sw.block_w as usize);
        let fixed = bytes_per_searcher(PassKind::Thread, 0, 1, max_len, n_buckets, entry_bytes);
        let entries = want.min((share / threads).saturating_sub(fixed) / entry_bytes);
        let threads = if threads >= block_w { threads / block_w * block_w } else { threads };
        return Pass { kind: PassKind::Thread, threads, entries, team: 1 };
    }
    let want = want.next_multiple_of(CHUNK);
    let (most, team) = match role {
        Role::Level => {
            let team = sw.level_team_lanes as usize;
            (sms * (sw.level_warps_per_sm as usize * LANES / team).max(1), team)
        }
        Role::Middle => (sms * sw.mid_teams_per_sm as usize, sw.mid_team_lanes as usize),
        _ => ((sms * LAST_TEAMS_PER_SM * sw.last_teams_percent as usize / 100).max(1), sw.last_team_lanes as usize),
    };
    let teams = (share / bytes_per_searcher(PassKind::Warp, want, team, max_len, n_buckets, entry_bytes)).min(most);
    Pass { kind: PassKind::Warp, threads: teams * team, entries: want, team }
}

/// Scratch of one pass, kept across batches. Left uninitialised: the kernels write every cell
/// before reading it. Each of a pass's scratch sets serves every slot's stream: a batch's pass
/// waits for the previous batch on the same set to finish with it.
pub struct Scratchpad {
    pub pass: Pass,
    /// (max_len, buckets) it was sized for.
    pub size: (usize, usize),
    pub width: CudaSlice<u8>,
    pub seed_width: CudaSlice<u8>,
    pub seq: CudaSlice<u8>,
    pub entries: CudaSlice<u8>,
    /// Thread passes: the heads of each score's list. Warp passes: the chunk tables, free
    /// chunks and lengths.
    pub ints: CudaSlice<i32>,
    /// Warp passes: the lanes' buffers, and each warp's hit list (empty for thread passes).
    pub lane_buffers: CudaSlice<u8>,
    pub hits: CudaSlice<u8>,
}

impl Scratchpad {
    pub fn fits(&self, max_len: usize, buckets: usize) -> bool {
        max_len <= self.size.0 && buckets <= self.size.1
    }

    /// Fills every buffer with 0xFF (queued on `stream`): a kernel that reads what it did not
    /// write then sees that, not the state the batch before left (see
    /// [`GpuAligner::poison_outputs`](super::GpuAligner::poison_outputs)).
    pub fn poison(&mut self, stream: &Arc<CudaStream>) -> Result<()> {
        for buffer in [
            &mut self.width,
            &mut self.seed_width,
            &mut self.seq,
            &mut self.entries,
            &mut self.lane_buffers,
            &mut self.hits,
        ] {
            super::buffers::poison(stream, buffer)?;
        }
        super::buffers::poison(stream, &mut self.ints)
    }

    pub fn new(stream: &Arc<CudaStream>, pass: Pass, m: usize, b: usize, entry_bytes: usize) -> Result<Scratchpad> {
        let (n, e) = (pass.searchers(), pass.entries);
        let (ints, lane, hits) = match pass.kind {
            PassKind::Thread => (n * b, 0, 0),
            PassKind::Warp => {
                let chunks = e / CHUNK;
                (
                    // The chunk table, the free chunks, the lengths and the scores with gap
                    // records; after every team's, its -m guard counters (the rungs).
                    n * (b * chunks + chunks + 2 * b + super::rungs::guard_counter_ints(m)),
                    n * pass.team * lane_buffer_entries(m) * entry_bytes,
                    n * WARP_HITS * HIT_BYTES,
                )
            }
        };
        // SAFETY: the kernels initialise every element before reading it.
        unsafe {
            Ok(Scratchpad {
                pass,
                size: (m, b),
                width: stream.alloc::<u8>(n * (m + 1) * WIDTH_BYTES)?,
                seed_width: stream.alloc::<u8>(n * (m + 1) * WIDTH_BYTES)?,
                seq: stream.alloc::<u8>(n * m)?,
                entries: stream.alloc::<u8>(n * e * entry_bytes)?,
                ints: stream.alloc::<i32>(ints.max(1))?,
                lane_buffers: stream.alloc::<u8>(lane.max(1))?,
                hits: stream.alloc::<u8>(hits.max(1))?,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GB: usize = 1 << 30;

    fn total(p: &[Pass]) -> usize {
        p.iter().map(|x| pass_bytes(x, 100, 68, InexactSwitches::default().entry_bytes())).sum()
    }

    /// On an H100-sized budget: a thread pass, then two warp passes, the last with pools as
    /// large as bwa's -m needs.
    #[test]
    fn a_large_gpu_gets_three_passes_and_a_pool_for_bwas_limit() {
        let p = plan(132, 40 * GB, 100, 68, 2_000_000, &InexactSwitches::default(), None).unwrap();
        assert_eq!(p.len(), 3, "{p:?}");
        assert_eq!(p[0], Pass { kind: PassKind::Thread, threads: 132 * 1024, entries: 512, team: 1 });
        // Pass 2: 16 warps' worth of teams of one warp per SM.
        assert_eq!(p[1], Pass { kind: PassKind::Warp, threads: 132 * 16 * 32, entries: 32768, team: 32 });
        assert_eq!(p[2].kind, PassKind::Warp);
        assert!(p[2].entries > 2_000_000 && p[2].entries.is_multiple_of(CHUNK));
        let team = InexactSwitches::default().last_team_lanes as usize;
        assert_eq!((p[2].team, p[2].threads), (team, 132 * team), "{p:?}");
        assert!(total(&p) <= 40 * GB, "{}", total(&p));
    }

    /// Pass 3 gets what passes 1 and 2 leave of the budget, not a third of it: at 16 GB a third
    /// would hold about 70 of its teams.
    #[test]
    fn the_last_pass_takes_what_the_others_leave() {
        let p = plan(132, 16 * GB, 100, 68, 2_000_000, &InexactSwitches::default(), None).unwrap();
        let team = InexactSwitches::default().last_team_lanes as usize;
        assert_eq!(p[2].threads, 132 * team, "{p:?}");
        assert!(pass_bytes(&p[2], 100, 68, InexactSwitches::default().entry_bytes()) > 16 * GB / 2);
        assert!(total(&p) <= 16 * GB, "{}", total(&p));
    }

    /// A small budget shrinks pass 1's stacks and the warp passes' warps.
    #[test]
    fn a_small_gpu_gets_smaller_passes() {
        let p = plan(20, GB / 2, 100, 68, 2_000_000, &InexactSwitches::default(), None).unwrap();
        assert!(p[0].entries < InexactSwitches::default().first_entries as usize && p[0].threads == 20 * 1024, "{p:?}");
        assert!(total(&p) <= GB / 2, "{p:?}");
        assert!(p.iter().skip(1).all(|x| x.kind == PassKind::Warp && x.threads >= 32), "{p:?}");
    }

    /// A small -m needs no large pools: a warp pass that would not be larger is left out.
    #[test]
    fn a_small_max_entries_needs_two_passes() {
        let p = plan(132, 40 * GB, 100, 68, 1000, &InexactSwitches::default(), None).unwrap();
        assert_eq!(p.len(), 2, "{p:?}");
        assert_eq!(p[1].entries, (1000 + entries_beyond_max(68, 1024)).next_multiple_of(CHUNK));
    }

    #[test]
    fn forced_stack_sizes_are_kept() {
        let p = plan(132, 40 * GB, 100, 68, 2_000_000, &InexactSwitches::default(), Some(&[64, 16384])).unwrap();
        assert_eq!(
            p,
            [
                Pass { kind: PassKind::Thread, threads: 132 * 1024, entries: 64, team: 1 },
                Pass { kind: PassKind::Warp, threads: 132 * 16 * 32, entries: 16384, team: 32 }
            ]
        );
    }

    /// The switches shape the plan: pass 1's stacks, pass 2's warps, whole blocks.
    #[test]
    fn switches_shape_the_plan() {
        let sw = InexactSwitches {
            block_w: 256,
            first_entries: 512,
            level_warps_per_sm: 4,
            last_team_lanes: 64,
            ..InexactSwitches::default()
        };
        let wide = InexactSwitches { level_team_lanes: 64, ..sw.clone() };
        let q = plan(132, 40 * GB, 100, 68, 2_000_000, &wide, None).unwrap();
        assert_eq!((q[1].team, q[1].threads), (64, 132 * 2 * 64), "pass 2: 4 warps' worth of 64-thread teams per SM");
        let p = plan(132, 40 * GB, 100, 68, 2_000_000, &sw, None).unwrap();
        assert_eq!(p[0], Pass { kind: PassKind::Thread, threads: 132 * 1024, entries: 512, team: 1 });
        assert_eq!(p[1].threads, 132 * 4 * 32);
        assert_eq!((p[2].team, p[2].threads), (64, 132 * 64));
        assert!(p[0].threads.is_multiple_of(256), "{p:?}");
    }

    /// A middle pass stands between pass 2 and the last: its teams per SM and pools from the
    /// switches, the last pass as without it; with a small -m neither team pass after pass 2 is
    /// larger, so both are left out.
    #[test]
    fn a_middle_pass_stands_between_pass_2_and_the_last() {
        let sw = InexactSwitches { mid_team_lanes: 128, ..InexactSwitches::default() };
        let p = plan(132, 40 * GB, 100, 68, 2_000_000, &sw, None).unwrap();
        let without = plan(132, 40 * GB, 100, 68, 2_000_000, &InexactSwitches::default(), None).unwrap();
        assert_eq!(p.len(), 4, "{p:?}");
        assert_eq!(p[2], Pass { kind: PassKind::Warp, threads: 132 * 4 * 128, entries: 131072, team: 128 });
        assert_eq!((&p[..2], p[3]), (&without[..2], without[2]));
        assert!(total(&p) <= 40 * GB, "{}", total(&p));
        assert_eq!(plan(132, 40 * GB, 100, 68, 1000, &sw, None).unwrap().len(), 2);
        let forced = plan(132, 40 * GB, 100, 68, 2_000_000, &sw, Some(&[16, 2048, 16384, 262144])).unwrap();
        let shape: Vec<_> = forced.iter().map(|x| (x.entries, x.team)).collect();
        assert_eq!(shape, [(16, 1), (2048, 32), (16384, 128), (262144, 1024)]);
        let no_middle = InexactSwitches::default();
        assert!(plan(132, 40 * GB, 100, 68, 2_000_000, &no_middle, Some(&[16, 2048, 16384, 262144])).is_err());
    }

    #[test]
    fn no_memory_is_an_error() {
        assert!(plan(132, 1000, 100, 68, 2_000_000, &InexactSwitches::default(), None).is_err());
    }
}
