//! `bcuda-dev candidates-gpu`: the candidates' enumeration on a GPU (src/gpu/candidates.rs),
//! timed over a FASTQ in batches, with what it decided per read; `--check N` first compares the
//! alignments one rung finds on the first N reads with the CPU model's
//! (`bcuda::search::pigeonhole::within`).
//!
//! The ladder here stops a read where the best alignment found plus a mismatch fits the budget.
//! bwa's first hit can score more than the best alignment (its indel and seed rules), so the
//! full form, which replays the alignments in bwa's order, takes that rung or one more.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{bail, Result};
use bcuda::aln_options::{cal_maxdiff, AVG_ERR};
use bcuda::gpu::candidates::{self, CandidateBatch, CandidateSearch, LadderOutcome, Limits, Penalties, RungStats};
use bcuda::reads::{ReadBatchReader, ReadOptions};
use bcuda::sai::{GapOptions, MODE_NONSTOP};
use bcuda::search::no_hit::{bounds, edit_limit};
use bcuda::search::pigeonhole::{within, Alignment, Budget, Col};
use bcuda_index::Bwt;

use crate::aln_flags::AlnFlags;

#[derive(clap::Args, Debug)]
pub struct CandidatesGpuArgs {
    pub prefix: PathBuf,
    pub reads: PathBuf,
    #[command(flatten)]
    pub aln: AlnFlags,
    /// Reads per batch.
    #[arg(long, default_value_t = 262_144)]
    pub batch: usize,
    /// Blocks of 256 threads for each round (0: 16 an SM).
    #[arg(long, default_value_t = 0)]
    pub blocks: u32,
    /// The ladder's last score budget.
    #[arg(long, default_value_t = 15)]
    pub most_score: i32,
    /// Extensions a read may take in one rung, and in the no-hit proof.
    #[arg(long, default_value_t = 60_000)]
    pub rung_extensions: u32,
    #[arg(long, default_value_t = 60_000)]
    pub proof_extensions: u32,
    /// Compare one rung's alignments with the CPU model's on this many reads first.
    #[arg(long, default_value_t = 0)]
    pub check: usize,
    #[arg(long)]
    pub max_reads: Option<usize>,
    /// Count from bwa's array instead of the occurrence sectors.
    #[arg(long)]
    pub bwa_array: bool,
    /// Blocks of the round kernel an SM must hold at once (0: as its registers allow).
    #[arg(long, default_value_t = 0)]
    pub min_blocks: u32,
    /// Reads that occur whole go up the ladder too (from one mismatch), not to bwa's search.
    #[arg(long)]
    pub exact_too: bool,
    /// Write the reads left to bwa's search (exact, or left by the ladder) to this FASTQ, to
    /// time the passes on them alone.
    #[arg(long)]
    pub write_rest: Option<PathBuf>,
    /// Time each round of the first batch (waiting for each), printed per rung.
    #[arg(long)]
    pub round_times: bool,
}

/// The search sequence bwa's search takes (the read's reverse complement, N as 4) and its edit
/// limit, or the state the read starts the ladder in.
fn prepared(read: &[u8], opt: &GapOptions) -> (Vec<u8>, u8, u8) {
    let seq: Vec<u8> = read.iter().rev().map(|&c| if c > 3 { 4 } else { 3 - c }).collect();
    let max_diff = if opt.fnr > 0.0 { cal_maxdiff(read.len() as i32, AVG_ERR, opt.fnr as f64) } else { opt.max_diff };
    let limit = edit_limit(max_diff, opt).clamp(0, 31) as u8;
    let ns = seq.iter().filter(|&&c| c > 3).count() as i32;
    let status = if seq.is_empty() || seq.len() > 512 || max_diff < 1 || opt.mode & MODE_NONSTOP != 0 {
        candidates::LEFT
    } else if ns > max_diff {
        candidates::NO_ALIGNMENT
    } else {
        candidates::PENDING
    };
    (seq, limit, status)
}

pub fn run(args: CandidatesGpuArgs) -> Result<()> {
    let bwt = Bwt::load(&bcuda_index::with_ext(&args.prefix, ".bwt"))?;
    let opt = args.aln.gap_options()?;
    let (name, cc) = bcuda::gpu::gpu_model(0)?;
    let ctx = cudarc::driver::CudaContext::new(0)?;
    let sms = ctx.attribute(cudarc::driver::sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)? as u32;
    let arch = bcuda::gpu::arch_for(cc);
    let usage = bcuda::gpu::resource_usage(
        candidates::CANDIDATES_CU,
        &CandidateSearch::defines(!args.bwa_array, args.min_blocks),
        arch,
    )?;
    for line in usage.lines().filter(|l| l.contains("Used") || l.contains("spill") || l.contains("Compiling")) {
        eprintln!("ptxas: {}", line.trim());
    }
    let mut search = CandidateSearch::new(&ctx, arch, &bwt, (!args.bwa_array, args.min_blocks))?;
    search.round_times = args.round_times;
    let counts_from = if args.bwa_array { "bwa's array" } else { "the occurrence sectors" };
    eprintln!("candidates-gpu on {name} ({sms} SMs), counting from {counts_from}");
    let limits = Limits {
        most_score: args.most_score,
        rung_extensions: args.rung_extensions,
        proof_extensions: args.proof_extensions,
        exact_too: args.exact_too,
        ..Limits::default()
    };
    let blocks = if args.blocks > 0 { args.blocks } else { 16 * sms };
    let mut reader = ReadBatchReader::open(&args.reads, ReadOptions::default())?;
    let mut totals = Totals::default();
    let mut checked = false;
    let mut rest = args.write_rest.as_ref().map(std::fs::File::create).transpose()?.map(std::io::BufWriter::new);
    let limit = args.max_reads.unwrap_or(usize::MAX);
    while totals.reads < limit {
        let reads = reader.next_batch(args.batch.min(limit - totals.reads))?;
        if reads.is_empty() {
            break;
        }
        let mut batch = CandidateBatch::default();
        for r in reads.iter() {
            let (seq, limit, status) = prepared(r.aligned(), &opt);
            batch.push(&seq, limit, status);
        }
        if args.check > 0 && !checked {
            check(&search, &bwt, &batch, &opt, args.check)?;
            checked = true;
        }
        let t = Instant::now();
        let outs = ladder_in_parts(&search, &batch, Penalties::of(&opt), limits, blocks)?;
        totals.seconds += t.elapsed().as_secs_f64();
        for out in &outs {
            if search.round_times {
                print_round_times(out);
                search.round_times = false;
            }
            totals.add_outcome(out);
        }
        if let Some(w) = rest.as_mut() {
            let status: Vec<u8> = outs.iter().flat_map(|o| o.status.iter().copied()).collect();
            write_rest(w, reads.iter().map(|r| r.aligned()).zip(status), totals.reads)?;
        }
    }
    totals.print();
    Ok(())
}

/// The ladder over `batch`, over halves of it (recursively) where a rung outgrows a buffer.
fn ladder_in_parts(
    search: &CandidateSearch,
    batch: &CandidateBatch,
    p: Penalties,
    limits: Limits,
    blocks: u32,
) -> Result<Vec<LadderOutcome>> {
    if let Some(out) = search.ladder(batch, p, limits, blocks)? {
        return Ok(vec![out]);
    }
    let n = batch.len();
    if n < 2 {
        bail!("one read outgrew the ladder's buffers: {limits:?}");
    }
    eprintln!("a batch of {n} reads outgrew the ladder's buffers: in halves");
    let mut outs = ladder_in_parts(search, &batch.part(0..n / 2), p, limits, blocks)?;
    outs.extend(ladder_in_parts(search, &batch.part(n / 2..n), p, limits, blocks)?);
    Ok(outs)
}

/// Sums over the batches.
#[derive(Default)]
struct Totals {
    reads: usize,
    states: BTreeMap<u8, usize>,
    seconds: f64,
    bounds_ms: f64,
    bounds_lookups: u64,
    rungs: Vec<RungStats>,
    proof: RungStats,
}

fn add_stats(a: &mut RungStats, b: &RungStats) {
    a.reads += b.reads;
    a.ms += b.ms;
    a.rounds += b.rounds;
    a.lookups += b.lookups;
    a.nodes += b.nodes;
    a.found += b.found;
}

impl Totals {
    fn add_outcome(&mut self, out: &LadderOutcome) {
        self.reads += out.status.len();
        for &s in &out.status {
            *self.states.entry(s).or_default() += 1;
        }
        self.bounds_ms += out.bounds_ms;
        self.bounds_lookups += out.bounds_lookups;
        for (i, r) in out.rungs.iter().enumerate() {
            if self.rungs.len() <= i {
                self.rungs.push(RungStats::default());
            }
            add_stats(&mut self.rungs[i], r);
        }
        add_stats(&mut self.proof, &out.proof);
    }

    fn print(&self) {
        let names = [
            "pending",
            "answered",
            "left to bwa's search (options, length)",
            "exact (bwa's search)",
            "proof",
            "no alignment",
            "left: over a rung's extensions",
            "left: over the last budget",
            "left: the proof found an alignment",
            "left: over the proof's extensions",
        ];
        println!(
            "{} reads in {:.3} s ({:.0} reads/s, the whole ladder with its copies)",
            self.reads,
            self.seconds,
            self.reads as f64 / self.seconds
        );
        for (s, n) in &self.states {
            println!("  {}: {n} ({:.2} %)", names[*s as usize], 100.0 * *n as f64 / self.reads.max(1) as f64);
        }
        let rate = |lookups: u64, ms: f64| lookups as f64 / (ms * 1e6).max(1e-9);
        println!(
            "bounds: {:.1} ms, {:.3} G lookups ({:.2} G/s)",
            self.bounds_ms,
            self.bounds_lookups as f64 / 1e9,
            rate(self.bounds_lookups, self.bounds_ms)
        );
        println!("step\treads\tms\trounds\tG lookups\tG lookups/s\tnodes\talignments");
        let rows = self.rungs.iter().enumerate().map(|(i, r)| (format!("rung {}", i + 1), r));
        for (name, r) in rows.chain([("proof".to_string(), &self.proof)]) {
            println!(
                "{name}\t{}\t{:.1}\t{}\t{:.3}\t{:.2}\t{}\t{}",
                r.reads,
                r.ms,
                r.rounds,
                r.lookups as f64 / 1e9,
                rate(r.lookups, r.ms),
                r.nodes,
                r.found
            );
        }
        let ms: f64 = self.bounds_ms + self.rungs.iter().map(|r| r.ms).sum::<f64>() + self.proof.ms;
        println!("kernels and their waits: {ms:.1} ms ({:.0} reads/s of all reads)", self.reads as f64 / (ms / 1e3));
    }
}

/// One rung at each read's first budget on the first `n` reads: the GPU's alignments against
/// the model's, as sets (the model may find one twice: a deletion between two parts).
fn check(search: &CandidateSearch, bwt: &Bwt, batch: &CandidateBatch, opt: &GapOptions, n: usize) -> Result<()> {
    let mut sub = CandidateBatch::default();
    let mut budgets = Vec::new();
    let mut expected = Vec::new();
    let cheapest = Penalties::of(opt).cheapest();
    for r in 0..n.min(batch.len()) {
        let (start, len) = (batch.starts[r] as usize, batch.lens[r] as usize);
        let seq = &batch.codes[start..start + len];
        let mut lookups = 0;
        let b = bounds(bwt, seq, &mut lookups);
        let fewest = b.after[0].max(b.before[len]) as i32;
        let budget = budget_of(opt, fewest * cheapest + opt.s_mm, batch.max_edits[r]);
        let mut found: Vec<Alignment> = within(bwt, seq, budget, &b, 32).map(|x| x.0).unwrap_or_default();
        found.sort();
        found.dedup();
        expected.push(found);
        budgets.push(budget.score as u16);
        sub.push(seq, batch.max_edits[r], candidates::PENDING);
    }
    let got = search.one_rung(&sub, &budgets, Penalties::of(opt), Limits::default())?;
    let mut by_read: Vec<Vec<Alignment>> = vec![Vec::new(); sub.len()];
    for f in &got.found {
        let r = f[0] as usize;
        let (start, len) = (sub.starts[r] as usize, sub.lens[r] as usize);
        let parts = (budgets[r] as i32 / cheapest).min(sub.max_edits[r] as i32) as usize + 1;
        by_read[r].push(alignment(&sub.codes[start..start + len], parts, f, &got.nodes));
    }
    let mut alignments = 0;
    for (r, (mut g, e)) in by_read.into_iter().zip(expected).enumerate() {
        g.sort();
        g.dedup();
        if g != e {
            bail!("read {r}: the GPU found {} alignments, the model {}: {g:?} vs {e:?}", g.len(), e.len());
        }
        alignments += e.len();
    }
    eprintln!("check: {} reads, {alignments} alignments, the GPU's = the model's", sub.len());
    Ok(())
}

fn budget_of(opt: &GapOptions, score: i32, max_edits: u8) -> Budget {
    Budget {
        score: score as u32,
        s_mm: opt.s_mm as u32,
        s_gapo: opt.s_gapo as u32,
        s_gape: opt.s_gape as u32,
        max_gapo: opt.max_gapo.max(0) as u32,
        max_edits: max_edits as u32,
    }
}

/// The alignment a found record ends: its nodes' columns walked back, around the exact part.
fn alignment(seq: &[u8], parts: usize, f: &[u32; 4], nodes: &[u64]) -> Alignment {
    let (mut left, mut right) = (Vec::new(), Vec::new());
    let mut node = f[1];
    while node != u32::MAX {
        let rec = nodes[node as usize];
        let col = (rec >> 32) as u8;
        let c = match col & 15 {
            b @ 0..=3 => Col::Base(b),
            4 => Col::Ins,
            d => Col::Del(d - 5),
        };
        if col & 16 != 0 {
            left.push(c)
        } else {
            right.push(c)
        }
        node = rec as u32;
    }
    let j = f[2] as usize;
    let start = j * seq.len() / parts;
    let end = if j + 1 < parts { (j + 1) * seq.len() / parts } else { seq.len() };
    right.reverse();
    let exact = seq[start..end].iter().map(|&b| Col::Base(b));
    left.into_iter().chain(exact).chain(right).collect()
}

/// Each rung's rounds of one batch: branches and time, and what a round costs beyond its floor.
fn print_round_times(out: &LadderOutcome) {
    let rungs = out.rungs.iter().enumerate().map(|(i, r)| (format!("rung {}", i + 1), r));
    for (name, r) in rungs.chain([("proof".to_string(), &out.proof)]) {
        let line: Vec<String> = r.round_times.iter().map(|(b, us)| format!("{b}:{us:.0}")).collect();
        println!("round times, {name} (branches:microseconds): {}", line.join(" "));
    }
}

/// The reads of a batch that bwa's search answers (exact, or left by the ladder), as FASTQ
/// named by their number in the input (the batch ends at read `end`).
fn write_rest<'a>(
    w: &mut impl std::io::Write,
    reads: impl ExactSizeIterator<Item = (&'a [u8], u8)>,
    end: usize,
) -> Result<()> {
    let first = end - reads.len();
    for (i, (codes, status)) in reads.enumerate() {
        if candidates::left_to_bwa(status) {
            let seq: String = codes.iter().map(|&c| b"ACGTN"[c.min(4) as usize] as char).collect();
            writeln!(w, "@r{}\n{seq}\n+\n{}", first + i, "I".repeat(seq.len()))?;
        }
    }
    Ok(())
}
