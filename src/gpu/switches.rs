//! The 15 tuning switches of the exact_match kernel (BarraCUDA's names), passed to NVRTC as
//! `-D` defines. Defaults are BarraCUDA's.

use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Switches {
    /// Threads per block.
    pub block_w: u32,
    /// Lanes loading BWT blocks together (None = unset; else a power of 2, 1..=32).
    pub cache_threads: Option<u32>,
    pub kl_par: bool,
    pub occ_par: bool,
    pub many_blocks: bool,
    pub direct_sequence: bool,
    pub direct_index: bool,
    pub sequence_global: bool,
    pub sequence_shift81: bool,
    pub sequence_stride: bool,
    pub mycache4: bool,
    pub mycache2: bool,
    pub direct_global_bwt: bool,
    pub cache_global_bwt: bool,
    pub scache_global_bwt: bool,
}

impl Default for Switches {
    fn default() -> Self {
        Switches {
            block_w: 64,
            cache_threads: None,
            kl_par: false,
            occ_par: false,
            many_blocks: false,
            direct_sequence: true,
            direct_index: true,
            sequence_global: true,
            sequence_shift81: true,
            sequence_stride: true,
            mycache4: true,
            mycache2: false,
            direct_global_bwt: false,
            cache_global_bwt: true,
            scache_global_bwt: false,
        }
    }
}

impl Switches {
    /// Why this combination cannot run, if it cannot.
    pub fn illegal(&self) -> Option<&'static str> {
        if self.block_w == 0 || !self.block_w.is_multiple_of(32) || self.block_w > 1024 {
            return Some("BLOCK_W must be a multiple of 32 up to 1024");
        }
        if let Some(t) = self.cache_threads {
            if !(1..=32).contains(&t) || !t.is_power_of_two() {
                return Some("cache_threads must be a power of 2 in 1..=32");
            }
            if self.block_w > 512 {
                return Some("cache_threads keeps 64 bytes of shared memory per thread: BLOCK_W at most 512");
            }
            if self.kl_par {
                return Some("kl_par and cache_threads both pair up lanes: use one");
            }
        } else if self.occ_par {
            return Some("occ_par needs cache_threads");
        }
        if self.mycache4 && self.mycache2 {
            return Some("mycache4 and mycache2 are exclusive");
        }
        None
    }

    /// Sets one switch from `name=value` (BarraCUDA's names; booleans as 0/1, cache_threads
    /// also `unset`).
    pub fn set(&mut self, assignment: &str) -> Result<(), String> {
        let (name, value) = assignment.split_once('=').ok_or_else(|| format!("'{assignment}': expected name=value"))?;
        let flag = || match value {
            "0" => Ok(false),
            "1" => Ok(true),
            _ => Err(format!("{name}={value}: expected 0 or 1")),
        };
        match name {
            "BLOCK_W" => self.block_w = value.parse().map_err(|_| format!("BLOCK_W={value}: not a number"))?,
            "cache_threads" => {
                self.cache_threads = if value == "unset" {
                    None
                } else {
                    Some(value.parse().map_err(|_| format!("cache_threads={value}: not a number"))?)
                }
            }
            "kl_par" => self.kl_par = flag()?,
            "occ_par" => self.occ_par = flag()?,
            "many_blocks" => self.many_blocks = flag()?,
            "direct_sequence" => self.direct_sequence = flag()?,
            "direct_index" => self.direct_index = flag()?,
            "sequence_global" => self.sequence_global = flag()?,
            "sequence_shift81" => self.sequence_shift81 = flag()?,
            "sequence_stride" => self.sequence_stride = flag()?,
            "mycache4" => self.mycache4 = flag()?,
            "mycache2" => self.mycache2 = flag()?,
            "direct_global_bwt" => self.direct_global_bwt = flag()?,
            "cache_global_bwt" => self.cache_global_bwt = flag()?,
            "scache_global_bwt" => self.scache_global_bwt = flag()?,
            _ => return Err(format!("unknown switch '{name}'")),
        }
        Ok(())
    }

    /// The `-D` options for NVRTC.
    pub fn defines(&self) -> Vec<String> {
        let flag = |name: &str, on: bool| format!("-D{name}={}", on as u8);
        let mut d = vec![format!("-DBLOCK_W={}", self.block_w)];
        if let Some(t) = self.cache_threads {
            d.push(format!("-Dcache_threads={t}"));
        }
        d.extend([
            flag("kl_par", self.kl_par),
            flag("occ_par", self.occ_par),
            flag("many_blocks", self.many_blocks),
            flag("direct_sequence", self.direct_sequence),
            flag("direct_index", self.direct_index),
            flag("sequence_global", self.sequence_global),
            flag("sequence_shift81", self.sequence_shift81),
            flag("sequence_stride", self.sequence_stride),
            flag("mycache4", self.mycache4),
            flag("mycache2", self.mycache2),
            flag("direct_global_bwt", self.direct_global_bwt),
            flag("cache_global_bwt", self.cache_global_bwt),
            flag("scache_global_bwt", self.scache_global_bwt),
        ]);
        d
    }
}

/// The tuning switches of the inexact kernels (cuda/inexact_match.cu): the block width and the
/// occurrence-count variants are `-D` defines; the stack sizes, pop budget and warps are the
/// pass plan's (src/gpu/inexact.rs), set from the host. Every value gives the same hits.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct InexactSwitches {
    /// Threads per block of every pass (`INEXACT_BLOCK_W`).
    pub block_w: u32,
    /// Pass 1: stack entries per thread, and pops before a read is handed to pass 2.
    pub first_entries: u32,
    pub first_max_pops: u32,
    /// Pass 2: warps per SM, and entries per team's pool (a read that needs more goes to pass
    /// 3). Kept when a tuned file from before the pool size was a switch is read.
    pub level_warps_per_sm: u32,
    #[serde(default = "default_level_entries")]
    pub level_entries: u32,
    /// Threads per team (the block that searches one read) of pass 2 and of pass 3. The team
    /// kernel is compiled for each size (`MAX_TEAM`, its launch bounds: a team of 1024 threads
    /// leaves 64 registers to each, too few for pass 2's lanes). Kept when a tuned file from
    /// before they existed is read.
    #[serde(default = "default_level_team_lanes")]
    pub level_team_lanes: u32,
    #[serde(default = "default_last_team_lanes")]
    pub last_team_lanes: u32,
    /// Pass 2 hands a read on to pass 3 (larger teams) after this many groups of chains (a
    /// group: one chain per thread of the team); 0: no limit, a read stays until its pool is
    /// short. Pass 3 has no such limit. Aimed at pass 2's tail (its SMs busy 54 % of the
    /// kernel on the H100). A tuned file from before it existed reads as 0.
    #[serde(default)]
    pub level_max_rounds: u32,
    /// A middle team pass between pass 2 and the last: teams of this many threads (0: none),
    /// `mid_teams_per_sm` of them an SM (the launch bounds' minimum blocks of its kernel), each
    /// with a pool of `mid_entries`. The last pass's pools hold what bwa's `-m` lets a search
    /// grow to, so it runs one large team an SM, whose lanes wait at their barriers for the
    /// longest chain of each group; most reads pass 2 hands on fit far smaller pools, where
    /// teams of 128 pop in twice the share of their lane-steps and several reads share an SM
    /// (`bench/results/cpu-2c/team-lanes.txt`). A size of its own: not pass 2's or the last
    /// pass's. None by default: on the H200 at 3.1 Gbp it made 100 bp 27 % slower and left
    /// ancient DNA within its noise, as the last pass's time is that of its heaviest reads
    /// (bench/results/measurements.md, "A middle team pass"). A tuned file from before it
    /// existed reads as none.
    #[serde(default)]
    pub mid_team_lanes: u32,
    #[serde(default = "default_mid_teams_per_sm")]
    pub mid_teams_per_sm: u32,
    #[serde(default = "default_mid_entries")]
    pub mid_entries: u32,
    /// Read BWT blocks through `__ldg`, 16 bytes at a time.
    pub occ_ldg: bool,
    /// Rows k-1 and l in one 128-row block: read the block once for both counts.
    pub occ_same_block: bool,
    /// Count the four bases of a block in one unrolled pass.
    pub occ_unroll: bool,
    /// Pass 1's stacks side by side (slot j of every thread together) instead of one after
    /// the other. Kept when a tuned file from before it existed is read.
    #[serde(default)]
    pub stack_interleave: bool,
    /// Stack entries in 24 bytes instead of 32 (suffix-array rows in 34 bits: genomes up to
    /// 8 Gbp, [`InexactSwitches::unfit_for`]). Kept when a tuned file from before it existed
    /// is read.
    #[serde(default)]
    pub compact_entry: bool,
    /// The team passes find the pop where bwa's `-m` stops a group of chains (instead of
    /// handing the read to the CPU). `src/search/level_search.rs` is its model, checked against
    /// bwa in CI; on the H100 it gave the CPU's .sai at `-m 300` and bwa's at 1 Gbp. A tuned
    /// file from before it existed reads as off.
    #[serde(default)]
    pub entries_limit_exact: bool,
    /// Pass 1's threads take one step of their read per turn (a base of the D arrays or a pop)
    /// and the next read when theirs is done, instead of searching each read to its end, so
    /// that a warp does not wait for its longest read. Off: on the H200 it was slower (pass 1
    /// 844 -> 1,070 ms at 1 Gbp; Nsight Compute: 6.3 instead of 7.5 threads active per warp,
    /// the divergence is within a pop, not between reads). A tuned file from before it
    /// existed reads as off.
    #[serde(default)]
    pub first_lockstep: bool,
    /// Pass 1's list heads in shared memory instead of global (every push and pop reads and
    /// writes one). A tuned file from before it existed reads as off.
    #[serde(default)]
    pub heads_shared: bool,
    /// The search's first steps, for strings of fewer bases than this, read an interval table
    /// (cuda/interval_table.cu) built on the GPU at start-up: one 64-byte line for the four
    /// extensions instead of two occurrence lookups (0: none). Its levels take 16 x 4^d bytes
    /// (about 358 MB to depth 12, 1.4 GB to 13, 5.7 GB to 14). A runtime value, not a define.
    /// Off by default: on the H100 at 3.1 Gbp, depths 10-14 cut pass 2's lookups by 5-11 %
    /// but not its time, in both regimes (docs/gpu-search.md, "The interval table"); autotune may
    /// still choose it. A tuned file from before it existed reads as the default.
    #[serde(default = "default_interval_depth")]
    pub interval_depth: u32,
    /// Pass 3's teams, in percent of the SMs (one team of `last_team_lanes` threads each): with
    /// fewer, the next batches' pass 2 has SMs to itself while a batch's heaviest reads run. A
    /// host-side value. A tuned file from before it existed reads as the default.
    #[serde(default = "default_last_teams_percent")]
    pub last_teams_percent: u32,
    /// Pass 2's kernel compiled so that this many of its teams fit on an SM at once (the
    /// launch bounds' minimum blocks, which caps its registers; 0: the compiler's choice, 166
    /// registers for one-warp teams on sm_90, so 12 per SM). More resident teams hide more of
    /// the lookups' latency, at the price of spills: 16 (128 registers, no spills) is the
    /// default, measured 6-8 % faster in pass 2 than 0 on the H100, in both regimes
    /// (bench/results/measurements.md); 20 and more spill and lose. A tuned file from before it
    /// existed reads as 0.
    #[serde(default)]
    pub level_min_blocks: u32,
    /// The team passes run the root's chain (the read's exact backward search, about a read's
    /// length of dependent pops on one lane) on all their lanes at once, from its intervals
    /// computed beside the D arrays (`src/search/level_search.rs`, `root_chain`, is its model).
    /// A tuned file from before it existed reads as off.
    #[serde(default)]
    pub root_chain: bool,
    /// Pass 1's queue puts the reads that occur whole last by the root chain's interval of the
    /// whole read (`read_widths` computes it), and `exact_match`, whose answer is the same
    /// interval, does not run. Only with `root_chain` and without `exact_replay` (which reads
    /// exact_match's intervals); elsewhere exact_match runs as before. The order alone changes
    /// nothing of the answers. Off: on the H200 at 3.1 Gbp (8M reads) GPU busy fell 1-2 % at
    /// 100 bp and under 1 % in ancient DNA, about the runs' spread (bench/results/measurements.md),
    /// and off, `aln` runs the exact_match autotune tunes. A host-side value. A tuned file from
    /// before it existed reads as off.
    #[serde(default)]
    pub root_order: bool,
    /// An interval of one suffix-array row takes the counts before that row from the row's
    /// own block (less the row's base) instead of reading a second block: the same intervals.
    /// Off: on the H100 at 1 Gbp it moved neither pass (pass 2 -0.5 to -3 %, GPU busy within
    /// the noise, bench/results/measurements.md): the root chain, where a read's intervals
    /// are one row, already runs from `read_widths`' intervals, and the other pops are mostly
    /// near the root, over wider intervals. A tuned file from before it existed reads as off.
    #[serde(default)]
    pub occ_singleton: bool,
    /// Pass 2's lanes take their level's next chain as soon as their own ends (a segment of up
    /// to four chains a lane, cut at the first hit) instead of waiting, group by group, for the
    /// longest chain (cuda/inexact_match.cu, `run_segment`; `src/search/level_search.rs` runs
    /// segments too). Off: 3-5 % slower in pass 2 on the H100 (bench/results/measurements.md).
    /// A tuned file from before it existed reads as off.
    #[serde(default)]
    pub level_refill: bool,
    /// The same for pass 3, whose teams of `last_team_lanes` wait at their barriers for the
    /// longest of their chains. A tuned file from before it existed reads as off.
    #[serde(default)]
    pub last_refill: bool,
    /// The no-hit pass before pass 1 (cuda/no_hit.cu, src/gpu/no_hit.rs): the reads without an
    /// exact match are proved, where possible, to have no alignment within their edit limit
    /// (0 hits, without bwa's search), each proof giving up after this many occurrence lookups
    /// (0: no pass). Aimed at libraries with many unmapped reads (ancient DNA's environmental
    /// DNA). A host-side value (the pass's kernel is compiled apart). A tuned file from before
    /// it existed reads as off.
    #[serde(default)]
    pub no_hit_budget: u32,
    /// The search counts occurrences from a second copy of the BWT in 32-byte sectors of 64
    /// rows (cuda/bwt.cuh, built at start-up by cuda/occ_sectors.cu; as large as bwa's array): one
    /// memory sector a lookup and three popcounts for the four counts, where bwa's 64-byte
    /// block of 128 rows takes up to four words of 2-bit fields. It takes the place of
    /// `occ_ldg` and `occ_same_block`. On the H100 at 1 Gbp it took pass 2 15 % and pass 3
    /// 25 % faster at 100 bp (10 % and 17 % in ancient DNA), GPU busy 15 % and 9 %
    /// (bench/results/measurements.md, "Occurrence sectors"). Genomes up to 8 Gbp (rows in 34
    /// bits, [`InexactSwitches::fitted_to`]). A tuned file from before it existed reads as off.
    #[serde(default)]
    pub occ_sectors: bool,
    /// Sets of the passes' scratch: batch n takes set n % this, so that a batch's pass may
    /// start while the batch before on another set still holds the same pass (each set is
    /// planned with this share of the memory). With one, a batch's pass 2 waits for the whole
    /// of the previous batch's, whose last teams leave most of the SMs' warps idle: on the
    /// H100 at 3.1 Gbp (8M reads) two took GPU busy from 8.13 to 6.12 s at 100 bp and from
    /// 18.21 to 15.69 s in ancient DNA (bench/results/measurements.md, "Two scratch sets").
    /// A host-side value. A tuned file from before it existed reads as 2.
    #[serde(default = "default_scratch_sets")]
    pub scratch_sets: u32,
    /// The team passes' push buffers interleaved: entry j of every lane of a team side by side
    /// (`LaneView` in cuda/inexact_match.cu) instead of each lane's entries after one another,
    /// so that a commit's lanes, each reading its own entry j, read neighbouring entries. Off:
    /// on the H100 at 1 Gbp it was 4 % slower at 100 bp and 3 % faster in ancient DNA
    /// (bench/results/measurements.md, "Interleaved push buffers"). A tuned file from before
    /// it existed reads as off.
    #[serde(default)]
    pub lane_interleave: bool,
    /// Reads that occur whole skip bwa's search: one rung of the candidates (cuda/candidates.cu)
    /// finds their alignments within a mismatch, and `inexact_replay` runs bwa's search kept to
    /// them (src/gpu/exact_replay.rs). Where the options allow it (every gap costing more than a
    /// mismatch, not `-N`); the reads it cannot hold go on to pass 1. A host-side value. A tuned
    /// file from before it existed reads as off.
    #[serde(default)]
    pub exact_replay: bool,
    /// The reads the team pass hands to the last pass go through the candidates' no-hit proof
    /// first (src/gpu/proof_pass.rs): those with no alignment within their edit limit get no
    /// hit without bwa's search. A host-side value. A tuned file from before it existed reads
    /// as off.
    #[serde(default)]
    pub proof_before_last: bool,
    /// The most extensions a read's proof before the last pass may take before it is left to
    /// that pass (a read that loses a child to a full round is left at once). A host-side
    /// value. A tuned file from before it existed reads as 60,000.
    #[serde(default = "default_proof_extensions")]
    pub proof_extensions: u32,
    /// A pop asks for its children's occurrence sectors before it pushes them (a hint, so the
    /// counts are the same): 0 not at all, 1 the matching child's into L1 (the chain's next
    /// pop reads them at once), 2 the same into L2, 3 every child's into L2
    /// (cuda/inexact_match.cu, `prefetch_children`). A tuned file from before it existed reads
    /// as 0.
    #[serde(default)]
    pub occ_prefetch: u32,
    /// How the search's occurrence sectors use L1 (cuda/bwt.cuh, `sector_half`): 0 as any load,
    /// 1 marked first to evict, 2 not kept, 3 (the default) as 1 with the team passes' pushes
    /// marked last to evict. The lookups land on random sectors, rarely read twice, while the
    /// push buffers are read back by the commit. The same counts; on the H100 at 3.1 Gbp, 3 took
    /// GPU busy 5 % down in both regimes on 2M reads, and on 8M reads 5 % in ancient DNA and 1 %
    /// at 100 bp (bench/results/measurements.md, "Steady state at 39ac6c4"). A tuned file from
    /// before it existed reads as 0.
    #[serde(default)]
    pub occ_l1: u32,
    /// The team passes' lanes count their pushes above the pool's cap instead of storing them
    /// for the commit to drop (cuda/inexact_match.cu, `LaneBuffer::push`), in the groups whose
    /// pushes cannot take bwa's stack past `-m`: the cap only falls (to `best_score + s_mm` at
    /// the first hit, and where the pool is short), so those entries would be dropped, and `-m`
    /// needs only their number. On by default: on the H100 at 3.1 Gbp, 2M reads a regime, GPU
    /// busy 11 % lower in ancient DNA (pass 2 17 %) and 2 % at 100 bp
    /// (bench/results/measurements.md, "Pushes above the cap counted at the push"). A tuned
    /// file from before it existed reads as off.
    #[serde(default)]
    pub drop_at_push: bool,
    /// The team passes store each pop's gap children as one record, expanded into them when the
    /// search reaches their score (cuda/inexact_match.cu, `push_gap_record`, `expand_level`;
    /// modelled by src/search/level_pool.rs): most gap children score above the last score bwa
    /// pops. Not with segments or the interval table. On by default: on the H100 at 3.1 Gbp,
    /// 2M reads a regime, GPU busy 15 % lower in ancient DNA and 10 % at 100 bp
    /// (bench/results/measurements.md, "Gap records"). A tuned file from before it existed
    /// reads as off.
    #[serde(default)]
    pub gap_records: bool,
    /// Beside the occurrence sectors, counts of pairs of bases (cuda/bwt.cuh, "Pair sectors";
    /// built at start-up by cuda/occ_sectors.cu, 128 bytes per 64 rows): a pop's lookup gives
    /// its matching child's extensions too, so that a chain waits on one lookup for every two
    /// pops. Which searches chain so: 1 pass 2's teams of one warp, 2 pass 1 too, 3 every pass
    /// (0: none, and no pairs built). Only with `occ_sectors`. A tuned file from before it
    /// existed reads as off.
    #[serde(default)]
    pub occ_pairs: u32,
    /// The team passes' queues sorted heaviest first before they run (`order_by_weight` in
    /// cuda/queue_order.cu), by each read's root chain (the sum of log2 of its intervals'
    /// rows, from read_widths): a team pass lasts until its last team ends, and a heavy read
    /// taken late makes that tail. 1: pass 2's queue, 2: every team pass's (the default; 0:
    /// none). Only with `root_chain` (off without it, [`Self::queue_order`]). GPU busy -6 % at
    /// 100 bp, unchanged in ancient DNA (H200, 3.1 Gbp, 8M reads). A tuned file from before it
    /// existed reads as off, the order its kernels were timed with.
    #[serde(default)]
    pub level_order: u32,
}

fn default_proof_extensions() -> u32 {
    60_000
}

fn default_scratch_sets() -> u32 {
    2
}

fn default_last_teams_percent() -> u32 {
    100
}

fn default_interval_depth() -> u32 {
    0
}

/// The pool of pass 2's teams in tuned files from before it was a switch.
fn default_level_entries() -> u32 {
    1 << 16
}

/// Pass 2's teams in tuned files from before they were a switch.
fn default_level_team_lanes() -> u32 {
    64
}

fn default_last_team_lanes() -> u32 {
    1024
}

fn default_mid_teams_per_sm() -> u32 {
    4
}

fn default_mid_entries() -> u32 {
    1 << 17
}

impl Default for InexactSwitches {
    /// The fastest settings measured on an H100 with the 1 Gbp human-like benchmark, each kept
    /// only where it beat the one before beyond the noise, with the same `.sai`; how each was
    /// chosen, with its timings: bench/results/measurements.md, "How the inexact kernels' defaults
    /// were chosen".
    fn default() -> Self {
        InexactSwitches {
            block_w: 64,
            first_entries: 512,
            first_max_pops: 2048,
            level_warps_per_sm: 16,
            level_entries: 1 << 15,
            level_team_lanes: 32,
            last_team_lanes: default_last_team_lanes(),
            level_max_rounds: 0,
            mid_team_lanes: 0,
            mid_teams_per_sm: default_mid_teams_per_sm(),
            mid_entries: default_mid_entries(),
            occ_ldg: false,
            occ_same_block: false,
            occ_unroll: true,
            stack_interleave: false,
            compact_entry: true,
            entries_limit_exact: true,
            first_lockstep: false,
            heads_shared: false,
            interval_depth: default_interval_depth(),
            last_teams_percent: default_last_teams_percent(),
            level_min_blocks: 16,
            root_chain: true,
            root_order: false,
            occ_singleton: false,
            level_refill: false,
            last_refill: false,
            no_hit_budget: 0,
            occ_sectors: true,
            scratch_sets: default_scratch_sets(),
            lane_interleave: false,
            exact_replay: false,
            proof_before_last: false,
            proof_extensions: default_proof_extensions(),
            occ_prefetch: 0,
            occ_l1: 3,
            drop_at_push: true,
            gap_records: true,
            occ_pairs: 0,
            level_order: 2,
        }
    }
}

impl InexactSwitches {
    /// The values autotune tries for each switch (name, values); the defaults are among them.
    pub const DOMAINS: &'static [(&'static str, &'static [u32])] = &[
        ("INEXACT_BLOCK_W", &[64, 128, 256]),
        ("first_entries", &[256, 512, 1024, 2048, 4096]),
        ("first_max_pops", &[1, 1024, 2048, 4096, 8192, 16384, 32768]),
        ("level_warps_per_sm", &[4, 8, 16, 32]),
        ("level_entries", &[32768, 65536, 131072, 262144]),
        ("level_team_lanes", &[32, 64, 128]),
        ("last_team_lanes", &[32, 64, 128, 256, 512, 1024]),
        ("level_max_rounds", &[0, 64, 128, 256, 512, 1024, 4096]),
        ("mid_team_lanes", &[0, 64, 128, 256]),
        ("mid_teams_per_sm", &[2, 4, 8]),
        ("mid_entries", &[65536, 131072, 262144]),
        ("occ_ldg", &[0, 1]),
        ("occ_same_block", &[0, 1]),
        ("occ_unroll", &[0, 1]),
        ("stack_interleave", &[0, 1]),
        ("compact_entry", &[0, 1]),
        ("entries_limit_exact", &[0, 1]),
        ("first_lockstep", &[0, 1]),
        ("heads_shared", &[0, 1]),
        ("interval_depth", &[0, 8, 10, 11, 12, 13, 14]),
        ("last_teams_percent", &[25, 50, 75, 100]),
        ("level_min_blocks", &[0, 14, 16, 20, 24, 32]),
        ("root_chain", &[0, 1]),
        ("root_order", &[0, 1]),
        ("occ_singleton", &[0, 1]),
        ("level_refill", &[0, 1]),
        ("last_refill", &[0, 1]),
        ("no_hit_budget", &[0, 20000, 100000, 400000]),
        ("occ_sectors", &[0, 1]),
        ("scratch_sets", &[1, 2]),
        ("lane_interleave", &[0, 1]),
        ("exact_replay", &[0, 1]),
        ("proof_before_last", &[0, 1]),
        ("proof_extensions", &[5_000, 20_000, 60_000]),
        ("occ_prefetch", &[0, 1, 2, 3]),
        ("occ_l1", &[0, 1, 2, 3]),
        ("drop_at_push", &[0, 1]),
        ("gap_records", &[0, 1]),
        ("occ_pairs", &[0, 1, 2, 3]),
        ("level_order", &[0, 1, 2]),
    ];

    /// Whether pass 1's order comes from the root chains (`root_order` where it applies), so
    /// that exact_match does not run.
    pub fn orders_by_root(&self) -> bool {
        self.root_order && self.root_chain && !self.exact_replay
    }

    /// Which team passes' queues are sorted heaviest first (`level_order`), 0 without
    /// `root_chain`, whose chains give the reads' weights.
    pub fn queue_order(&self) -> u32 {
        if self.root_chain {
            self.level_order
        } else {
            0
        }
    }

    /// Why these values cannot run, if they cannot.
    pub fn illegal(&self) -> Option<&'static str> {
        if self.block_w == 0 || !self.block_w.is_multiple_of(32) || self.block_w > 1024 {
            return Some("INEXACT_BLOCK_W must be a multiple of 32 up to 1024");
        }
        if self.first_entries < 64 {
            return Some("first_entries must be at least 64 (one pop pushes up to 9)");
        }
        if self.first_max_pops == 0 || self.first_max_pops > i32::MAX as u32 {
            return Some("first_max_pops must be in 1..2^31");
        }
        if self.proof_extensions == 0 {
            return Some("proof_extensions must be at least 1");
        }
        if self.gap_records && self.excludes_gap_records() {
            return Some("gap_records: not with level_refill, last_refill or the interval table");
        }
        if self.occ_pairs > 3 {
            return Some("occ_pairs must be 0 (off), 1 (pass 2), 2 (passes 1 and 2) or 3 (every pass)");
        }
        if self.occ_pairs > 0 && !self.occ_sectors {
            return Some("occ_pairs: only with occ_sectors");
        }
        if self.level_order > 2 {
            return Some("level_order must be 0 (off), 1 (pass 2) or 2 (every team pass)");
        }
        if self.occ_prefetch > 3 {
            return Some("occ_prefetch must be 0 (off), 1 (L1), 2 (L2) or 3 (every child, L2)");
        }
        if self.occ_l1 > 3 {
            return Some("occ_l1 must be 0 (plain), 1 (evict first), 2 (no allocate) or 3 (1, pushes evict last)");
        }
        if self.level_max_rounds > i32::MAX as u32 {
            return Some("level_max_rounds must be under 2^31 (0: no limit)");
        }
        if !(1..=64).contains(&self.level_warps_per_sm) {
            return Some("level_warps_per_sm must be in 1..=64");
        }
        if self.level_entries < 1024 {
            return Some("level_entries must be at least 1024 (a chain's pushes, in 64-entry chunks)");
        }
        if self.interval_depth > bcuda_index::interval_table::MAX_DEPTH {
            return Some("interval_depth must be at most 14 (level 15 alone is 16 GiB)");
        }
        if !(1..=100).contains(&self.last_teams_percent) {
            return Some("last_teams_percent must be in 1..=100");
        }
        if !(1..=4).contains(&self.scratch_sets) {
            return Some("scratch_sets must be in 1..=4");
        }
        if self.level_min_blocks > 32 {
            return Some("level_min_blocks must be at most 32 (an SM's blocks)");
        }
        for lanes in [self.level_team_lanes, self.last_team_lanes] {
            if lanes == 0 || !lanes.is_multiple_of(32) || lanes > 1024 {
                return Some("level_team_lanes and last_team_lanes must be multiples of 32 up to 1024");
            }
        }
        self.illegal_middle()
    }

    /// Why the middle pass's values cannot run, if they cannot. Its kernel is compiled with
    /// launch bounds of its own, so its teams are of a size no other pass runs.
    fn illegal_middle(&self) -> Option<&'static str> {
        let lanes = self.mid_team_lanes;
        if lanes == 0 {
            return None;
        }
        if !lanes.is_multiple_of(32) || lanes > 1024 {
            return Some("mid_team_lanes must be 0 (no middle pass) or a multiple of 32 up to 1024");
        }
        if lanes == self.level_team_lanes || lanes == self.last_team_lanes {
            return Some("mid_team_lanes must differ from level_team_lanes and last_team_lanes");
        }
        if !(1..=32).contains(&self.mid_teams_per_sm) || lanes * self.mid_teams_per_sm > 2048 {
            return Some("mid_teams_per_sm must be in 1..=32, its threads at most an SM's 2048");
        }
        if self.mid_entries < 1024 {
            return Some("mid_entries must be at least 1024 (a chain's pushes, in 64-entry chunks)");
        }
        None
    }

    /// Why these values cannot search a genome whose BWT has `seq_len` rows, if they cannot:
    /// compact entries, and the no-hit pass's, hold rows in 34 bits (`ROW_BITS` in
    /// cuda/inexact_match.cu, `NO_HIT_ROW_BITS` in cuda/no_hit.cu), and the occurrence
    /// sectors have four superblocks (`SECTOR_SUPERS` in cuda/bwt.cuh).
    pub fn unfit_for(&self, seq_len: u64) -> Option<&'static str> {
        if seq_len < 1 << 34 {
            None
        } else if self.compact_entry {
            Some("compact_entry holds suffix-array rows in 34 bits: genomes up to 8 Gbp")
        } else if self.no_hit_budget > 0 {
            Some("the no-hit pass holds suffix-array rows in 34 bits: genomes up to 8 Gbp")
        } else if self.occ_sectors {
            Some("occ_sectors holds superblocks for rows in 34 bits: genomes up to 8 Gbp")
        } else {
            None
        }
    }

    /// Bytes of one stack entry (`Entry` in cuda/inexact_match.cu).
    pub fn entry_bytes(&self) -> usize {
        if self.compact_entry {
            24
        } else {
            32
        }
    }

    /// These values for a genome whose BWT has `seq_len` rows: the same, or with 32-byte
    /// stack entries and no no-hit pass where they cannot hold its rows.
    pub fn fitted_to(&self, seq_len: u64) -> InexactSwitches {
        let fits = seq_len < 1 << 34;
        InexactSwitches {
            compact_entry: self.compact_entry && fits,
            no_hit_budget: if fits { self.no_hit_budget } else { 0 },
            occ_sectors: self.occ_sectors && fits,
            occ_pairs: if fits { self.occ_pairs } else { 0 },
            ..self.clone()
        }
    }

    /// The defaults with one switch set from `name=value`, and gap records off where that
    /// switch excludes them (segments, the interval table): each value as it can run.
    #[cfg(test)]
    pub(crate) fn default_with(assignment: &str) -> InexactSwitches {
        let mut s = InexactSwitches::default();
        s.set(assignment).unwrap();
        s.gap_records &= !s.excludes_gap_records();
        s
    }

    /// Whether a switch is on that gap records cannot run with: segments (`commit_segment`
    /// counts each stored item as one entry) or the interval table (an entry may hold its
    /// string where a record needs its parent's interval).
    fn excludes_gap_records(&self) -> bool {
        self.level_refill || self.last_refill || self.interval_depth > 0
    }

    /// Sets one switch from `name=value` (booleans as 0/1).
    pub fn set(&mut self, assignment: &str) -> Result<(), String> {
        let (name, value) = assignment.split_once('=').ok_or_else(|| format!("'{assignment}': expected name=value"))?;
        let n: u32 = value.parse().map_err(|_| format!("{name}={value}: not a number"))?;
        let flag = || match n {
            0 | 1 => Ok(n == 1),
            _ => Err(format!("{name}={value}: expected 0 or 1")),
        };
        match name {
            "INEXACT_BLOCK_W" => self.block_w = n,
            "first_entries" => self.first_entries = n,
            "first_max_pops" => self.first_max_pops = n,
            "level_warps_per_sm" => self.level_warps_per_sm = n,
            "level_entries" => self.level_entries = n,
            "level_team_lanes" => self.level_team_lanes = n,
            "last_team_lanes" => self.last_team_lanes = n,
            "level_max_rounds" => self.level_max_rounds = n,
            "mid_team_lanes" => self.mid_team_lanes = n,
            "mid_teams_per_sm" => self.mid_teams_per_sm = n,
            "mid_entries" => self.mid_entries = n,
            "occ_ldg" => self.occ_ldg = flag()?,
            "occ_same_block" => self.occ_same_block = flag()?,
            "occ_unroll" => self.occ_unroll = flag()?,
            "stack_interleave" => self.stack_interleave = flag()?,
            "compact_entry" => self.compact_entry = flag()?,
            "entries_limit_exact" => self.entries_limit_exact = flag()?,
            "first_lockstep" => self.first_lockstep = flag()?,
            "heads_shared" => self.heads_shared = flag()?,
            "interval_depth" => self.interval_depth = n,
            "last_teams_percent" => self.last_teams_percent = n,
            "level_min_blocks" => self.level_min_blocks = n,
            "root_chain" => self.root_chain = flag()?,
            "root_order" => self.root_order = flag()?,
            "occ_singleton" => self.occ_singleton = flag()?,
            "occ_sectors" => self.occ_sectors = flag()?,
            "scratch_sets" => self.scratch_sets = n,
            "lane_interleave" => self.lane_interleave = flag()?,
            "level_refill" => self.level_refill = flag()?,
            "last_refill" => self.last_refill = flag()?,
            "no_hit_budget" => self.no_hit_budget = n,
            "exact_replay" => self.exact_replay = flag()?,
            "proof_before_last" => self.proof_before_last = flag()?,
            "proof_extensions" => self.proof_extensions = n,
            "occ_prefetch" => self.occ_prefetch = n,
            "occ_l1" => self.occ_l1 = n,
            "drop_at_push" => self.drop_at_push = flag()?,
            "gap_records" => self.gap_records = flag()?,
            "occ_pairs" => self.occ_pairs = n,
            "level_order" => self.level_order = n,
            _ => return Err(format!("unknown inexact switch '{name}'")),
        }
        Ok(())
    }

    /// Every switch as `(name, value)`, in [`InexactSwitches::DOMAINS`]' order.
    pub fn values(&self) -> Vec<(&'static str, u32)> {
        let v = [
            self.block_w,
            self.first_entries,
            self.first_max_pops,
            self.level_warps_per_sm,
            self.level_entries,
            self.level_team_lanes,
            self.last_team_lanes,
            self.level_max_rounds,
            self.mid_team_lanes,
            self.mid_teams_per_sm,
            self.mid_entries,
            self.occ_ldg as u32,
            self.occ_same_block as u32,
            self.occ_unroll as u32,
            self.stack_interleave as u32,
            self.compact_entry as u32,
            self.entries_limit_exact as u32,
            self.first_lockstep as u32,
            self.heads_shared as u32,
            self.interval_depth,
            self.last_teams_percent,
            self.level_min_blocks,
            self.root_chain as u32,
            self.root_order as u32,
            self.occ_singleton as u32,
            self.level_refill as u32,
            self.last_refill as u32,
            self.no_hit_budget,
            self.occ_sectors as u32,
            self.scratch_sets,
            self.lane_interleave as u32,
            self.exact_replay as u32,
            self.proof_before_last as u32,
            self.proof_extensions,
            self.occ_prefetch,
            self.occ_l1,
            self.drop_at_push as u32,
            self.gap_records as u32,
            self.occ_pairs,
            self.level_order,
        ];
        InexactSwitches::DOMAINS.iter().map(|d| d.0).zip(v).collect()
    }

    /// The `-D` options for NVRTC of the kernels whose team kernel runs teams of up to `team`
    /// threads (`MAX_TEAM`); the host-side switches are not among them, so they share one
    /// compiled kernel.
    pub fn defines(&self, team: u32) -> Vec<String> {
        let flag = |name: &str, on: bool| format!("-D{name}={}", on as u8);
        let mut defines = vec![
            format!("-DINEXACT_BLOCK_W={}", self.block_w),
            format!("-DMAX_TEAM={team}"),
            flag("occ_ldg", self.occ_ldg),
            flag("occ_same_block", self.occ_same_block),
            flag("occ_unroll", self.occ_unroll),
            flag("stack_interleave", self.stack_interleave),
            flag("compact_entry", self.compact_entry),
            flag("entries_limit_exact", self.entries_limit_exact),
            flag("first_lockstep", self.first_lockstep),
            flag("heads_shared", self.heads_shared),
            flag("root_chain", self.root_chain),
            flag("occ_singleton", self.occ_singleton),
        ];
        // Only when set, so that the default kernels' defines (and cache entries) stay as they were.
        if self.level_min_blocks > 0 && team == self.level_team_lanes {
            defines.push(format!("-DLEVEL_MIN_BLOCKS={}", self.level_min_blocks));
        }
        if self.mid_team_lanes > 0 && team == self.mid_team_lanes {
            defines.push(format!("-DLEVEL_MIN_BLOCKS={}", self.mid_teams_per_sm));
        }
        let refill =
            (self.level_refill && team == self.level_team_lanes) || (self.last_refill && team == self.last_team_lanes);
        if refill {
            defines.push("-Dlevel_refill=1".to_string());
        }
        if self.occ_sectors {
            defines.push("-Docc_sectors=1".to_string());
        }
        if self.lane_interleave {
            defines.push("-Dlane_interleave=1".to_string());
        }
        if self.occ_prefetch > 0 {
            defines.push(format!("-Docc_prefetch={}", self.occ_prefetch));
        }
        if self.occ_l1 > 0 {
            defines.push(format!("-Docc_l1={}", self.occ_l1));
        }
        if self.drop_at_push {
            defines.push("-Ddrop_at_push=1".to_string());
        }
        if self.gap_records {
            defines.push("-Dgap_records=1".to_string());
        }
        if self.occ_pairs > 0 {
            defines.push(format!("-Docc_pairs={}", self.occ_pairs));
        }
        if self.queue_order() > 0 {
            defines.push("-Dlevel_order=1".to_string());
        }
        defines
    }

    /// The inexact kernels are compiled once per team size of the team passes (pass 2's first:
    /// its compilation also gives pass 1's kernel; then the middle pass's, then the last's):
    /// each size's defines.
    pub fn modules(&self) -> Vec<(u32, Vec<String>)> {
        let mut teams = vec![self.level_team_lanes];
        for team in [self.mid_team_lanes, self.last_team_lanes] {
            if team > 0 && !teams.contains(&team) {
                teams.push(team);
            }
        }
        teams.into_iter().map(|t| (t, self.defines(t))).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_root_chains_give_pass_1s_order_only_where_exact_match_is_not_needed() {
        let d = InexactSwitches::default();
        let by_root = InexactSwitches { root_order: true, ..d.clone() };
        assert!(by_root.orders_by_root() && !d.orders_by_root());
        assert!(!InexactSwitches { root_chain: false, ..by_root.clone() }.orders_by_root(), "no root chains to read");
        assert!(
            !InexactSwitches { exact_replay: true, ..by_root.clone() }.orders_by_root(),
            "the replay reads exact_match's"
        );
    }

    #[test]
    fn the_queues_are_ordered_only_with_the_root_chains_weights() {
        let d = InexactSwitches::default();
        assert_eq!(d.queue_order(), 2);
        let no_chains = InexactSwitches { root_chain: false, ..d.clone() };
        assert_eq!((no_chains.queue_order(), no_chains.illegal()), (0, None));
        assert!(!no_chains.defines(64).iter().any(|d| d.starts_with("-Dlevel_order")), "no weights to write");
    }

    #[test]
    fn compact_entries_give_way_to_32_byte_ones_on_a_genome_too_large_for_them() {
        let d = InexactSwitches::default();
        assert!(d.compact_entry);
        assert_eq!(d.fitted_to(6_200_000_000), d, "a human genome's 6.2 G rows fit in 34 bits");
        let large = d.fitted_to(1 << 34);
        assert_eq!((large.compact_entry, large.unfit_for(1 << 34)), (false, None));
        assert_eq!(
            InexactSwitches { compact_entry: false, occ_sectors: false, ..d.clone() },
            large,
            "only compact_entry and occ_sectors change"
        );
        assert!(d.unfit_for(1 << 34).is_some());
        let no_hit = InexactSwitches { no_hit_budget: 100_000, ..d.clone() };
        assert_eq!(no_hit.fitted_to(6_200_000_000), no_hit);
        assert_eq!(no_hit.fitted_to(1 << 34).no_hit_budget, 0, "the no-hit pass holds rows in 34 bits");
        assert_eq!(no_hit.fitted_to(1 << 34).unfit_for(1 << 34), None);
        assert!(d.occ_sectors && !large.occ_sectors, "four superblocks of 2^32 rows");
    }

    #[test]
    fn inexact_switches_set_by_name_and_defaults_are_in_the_domains() {
        let d = InexactSwitches::default();
        assert_eq!(d.illegal(), None);
        assert!(InexactSwitches { last_team_lanes: 2048, ..d.clone() }.illegal().is_some());
        for (name, values) in InexactSwitches::DOMAINS {
            for v in *values {
                assert_eq!(InexactSwitches::default_with(&format!("{name}={v}")).illegal(), None, "{name}={v}");
            }
        }
        let segments_with_records = InexactSwitches { level_refill: true, ..d.clone() };
        assert!(segments_with_records.illegal().is_some());
        let mut back = InexactSwitches {
            block_w: 0,
            first_entries: 0,
            first_max_pops: 0,
            level_warps_per_sm: 0,
            level_entries: 0,
            level_team_lanes: 0,
            last_team_lanes: 0,
            level_max_rounds: 7,
            mid_team_lanes: 96,
            mid_teams_per_sm: 3,
            mid_entries: 5,
            occ_ldg: true,
            occ_same_block: true,
            occ_unroll: true,
            stack_interleave: true,
            compact_entry: true,
            entries_limit_exact: true,
            first_lockstep: true,
            heads_shared: true,
            interval_depth: 3,
            last_teams_percent: 1,
            level_min_blocks: 5,
            root_chain: false,
            root_order: true,
            occ_singleton: false,
            level_refill: false,
            last_refill: false,
            no_hit_budget: 7,
            occ_sectors: true,
            scratch_sets: 3,
            lane_interleave: true,
            exact_replay: true,
            proof_before_last: true,
            proof_extensions: 9,
            occ_prefetch: 2,
            occ_l1: 2,
            drop_at_push: false,
            gap_records: false,
            occ_pairs: 3,
            level_order: 2,
        };
        for (name, values) in InexactSwitches::DOMAINS {
            let v = values.iter().copied().find(|&v| {
                let mut t = InexactSwitches::default();
                t.set(&format!("{name}={v}")).unwrap();
                t == d
            });
            back.set(&format!("{name}={}", v.unwrap_or_else(|| panic!("default of {name} not in its domain"))))
                .unwrap();
        }
        assert_eq!(back, d);
        for (name, v) in d.values() {
            let mut t = InexactSwitches::default();
            t.set(&format!("{name}={v}")).unwrap();
            assert_eq!(t, d);
        }
        let mut s = d.clone();
        assert!(s.set("occ_ldg=2").is_err() && s.set("nope=1").is_err());
        assert_eq!(
            d.defines(64),
            [
                "-DINEXACT_BLOCK_W=64",
                "-DMAX_TEAM=64",
                "-Docc_ldg=0",
                "-Docc_same_block=0",
                "-Docc_unroll=1",
                "-Dstack_interleave=0",
                "-Dcompact_entry=1",
                "-Dentries_limit_exact=1",
                "-Dfirst_lockstep=0",
                "-Dheads_shared=0",
                "-Droot_chain=1",
                "-Docc_singleton=0",
                "-Docc_sectors=1",
                "-Docc_l1=3",
                "-Ddrop_at_push=1",
                "-Dgap_records=1",
                "-Dlevel_order=1"
            ]
        );
        let teams: Vec<u32> = d.modules().iter().map(|m| m.0).collect();
        assert_eq!(teams, [32, 1024], "pass 2's team kernel, then pass 3's");
        let middle = InexactSwitches { mid_team_lanes: 128, ..d.clone() };
        let teams: Vec<u32> = middle.modules().iter().map(|m| m.0).collect();
        assert_eq!(teams, [32, 128, 1024], "pass 2's, the middle pass's, the last's");
        assert!(middle.defines(128).contains(&"-DLEVEL_MIN_BLOCKS=4".to_string()));
        assert!(!middle.defines(1024).iter().any(|d| d.starts_with("-DLEVEL_MIN_BLOCKS")));
        for clash in [32, 1024, 48] {
            assert!(InexactSwitches { mid_team_lanes: clash, ..d.clone() }.illegal().is_some(), "{clash}");
        }
        assert!(InexactSwitches { mid_teams_per_sm: 32, ..middle.clone() }.illegal().is_some(), "4096 threads an SM");
        assert_eq!(
            InexactSwitches { last_team_lanes: 32, ..d.clone() }.modules().len(),
            1,
            "one size, one compilation"
        );
        let compact = InexactSwitches { compact_entry: true, ..d.clone() };
        assert_eq!(
            (
                compact.unfit_for((1 << 34) - 1),
                InexactSwitches { compact_entry: false, occ_sectors: false, ..d.clone() }.unfit_for(1 << 40)
            ),
            (None, None)
        );
        assert!(compact.unfit_for(1 << 34).is_some());
    }
}
