//! prune-bound's tables: by d*, the stack peaks, the `-m` guard and the ladders.

use bcuda::sai::AlnHit;

use super::{Ladder, ReadResult, Run};
use crate::stack_profile::percentile;

/// The table by d*: reads, pops of both searches, and the reads whose hits differ.
pub(super) fn print_by_d_star(results: &[ReadResult]) {
    println!("d*\treads\tbwa pops\tbwa pops to 1st hit\tpruned pops\tpruned/bwa\treads with other hits");
    let labels = ["0", "1", "2", "3", ">=4", "no hit"];
    let mut all = (0, 0, 0, 0, 0);
    for (row, label) in labels.iter().enumerate() {
        let rows: Vec<&ReadResult> = results.iter().filter(|r| d_star_row(r.d_star) == row).collect();
        let bwa: usize = rows.iter().map(|r| r.bwa.pops).sum();
        let first: usize = rows.iter().map(|r| r.bwa.before_hit).sum();
        let pruned: usize = rows.iter().map(|r| r.pruned_or_bwa().pops).sum();
        let differ = rows.iter().filter(|r| r.differs()).count();
        println!("{label}\t{}\t{bwa}\t{first}\t{pruned}\t{:.3}\t{differ}", rows.len(), ratio(pruned, bwa));
        all = (all.0 + rows.len(), all.1 + bwa, all.2 + first, all.3 + pruned, all.4 + differ);
    }
    let (n, bwa, first, pruned, differ) = all;
    println!("all\t{n}\t{bwa}\t{first}\t{pruned}\t{:.3}\t{differ}", ratio(pruned, bwa));
    let with_hit: Vec<&ReadResult> = results.iter().filter(|r| r.d_star.is_some()).collect();
    let bwa: usize = with_hit.iter().map(|r| r.bwa.pops).sum();
    let pruned: usize = with_hit.iter().map(|r| r.pruned_or_bwa().pops).sum();
    println!("reads with a hit\t{}\t{bwa}\t\t{pruned}\t{:.3}", with_hit.len(), ratio(pruned, bwa));
}

/// The table's row of a read's d*: 0 to 3, 4 or more, no hit.
fn d_star_row(d_star: Option<i32>) -> usize {
    d_star.map_or(5, |d| d.clamp(0, 4) as usize)
}

fn ratio(a: usize, b: usize) -> f64 {
    a as f64 / b.max(1) as f64
}

/// The stack peaks of both searches (the pruned one's: bwa's for reads without a hit).
pub(super) fn print_peaks(results: &[ReadResult]) {
    println!("stack peak (entries, as -m counts)\tmax\tp99.9\tp99\treads > 2000000\treads > 222222\tstopped by -m");
    type Pick = fn(&ReadResult) -> &Run;
    let searches: [(&str, Pick); 2] = [("bwa", |r| &r.bwa), ("pruned", |r| r.pruned_or_bwa())];
    for (label, run) in searches {
        let mut peaks: Vec<usize> = results.iter().map(|r| run(r).peak).collect();
        peaks.sort_unstable();
        let over = |limit: usize| peaks.iter().filter(|&&p| p > limit).count();
        let by_m = results.iter().filter(|r| run(r).stopped_by_m).count();
        println!(
            "{label}\t{}\t{}\t{}\t{}\t{}\t{by_m}",
            percentile(&peaks, 1.0),
            percentile(&peaks, 0.999),
            percentile(&peaks, 0.99),
            over(2_000_000),
            over(222_222)
        );
    }
}

/// One row of a ladder's table: reads, bwa's pops, the ladder's, what it wasted, the reads a
/// guess answered and those it answered with other hits than bwa's.
fn print_ladder_row<'a>(label: &str, rows: impl Iterator<Item = &'a ReadResult>, i: usize) -> (usize, usize) {
    let (mut n, mut bwa, mut pops, mut wasted, mut by_guess, mut differ) = (0, 0, 0, 0, 0, 0);
    for r in rows {
        let c = &r.ladders[i];
        (n, bwa, pops, wasted) = (n + 1, bwa + r.bwa.pops, pops + c.pops, wasted + c.wasted);
        (by_guess, differ) = (by_guess + c.by_guess as usize, differ + c.differs as usize);
    }
    println!("{label}\t{n}\t{bwa}\t{pops}\t{:.3}\t{wasted}\t{by_guess}\t{differ}", ratio(pops, bwa));
    (n, differ)
}

/// Each `--ladder`'s cost by d*, on the reads of the `-m`-safe classes, and on the reads a
/// guess answered outside them.
pub(super) fn print_ladders(results: &[ReadResult], ladders: &[Ladder]) {
    for (i, ladder) in ladders.iter().enumerate() {
        println!("speculative ladder: {ladder} (-m ignored)");
        println!(
            "d*\treads\tbwa pops\tladder pops\tladder/bwa\twasted pops\tanswered by a guess\treads with other hits"
        );
        for (row, label) in ["0", "1", "2", "3", ">=4", "no hit"].iter().enumerate() {
            print_ladder_row(label, results.iter().filter(|r| d_star_row(r.d_star) == row), i);
        }
        let (_, differ) = print_ladder_row("all", results.iter(), i);
        let bwa: usize = results.iter().map(|r| r.bwa.pops).sum();
        for (label, guard) in [("where exact, -m-safe classes", false), ("where exact, with the -m guard", true)] {
            let pops = exact_ladder_pops(results.iter(), i, guard);
            println!("{label}\t{}\t{bwa}\t{pops}\t{:.3}", results.len(), ratio(pops, bwa));
        }
        print_ladder_row("-m-safe classes", results.iter().filter(|r| r.m_safe), i);
        let outside = |r: &&ReadResult| !r.m_safe && r.ladders[i].by_guess;
        print_ladder_row("answered by a guess, not -m-safe", results.iter().filter(outside), i);
        if differ > 0 {
            println!("MISMATCH: {differ} reads whose accepted guess found other hits than bwa's search");
        } else {
            println!("reads whose accepted guess found other hits than bwa's: 0");
        }
    }
}

/// The `-m` guard by d*: the reads it applies to and proves, their pops in both searches, the
/// bound's spread, and reads whose bwa stack passed the bound (the theory says none).
pub(super) fn print_guard(results: &[ReadResult]) {
    println!("-m guard on the pruned search (docs/gpu-search.md): bwa's stack at most 1 + 8 x pushing pops");
    println!("d*\treads\tbound applies\tbound <= -m\tbwa pops\tpruned pops\tpruned/bwa (reads under -m)\tbound p50\tp90\tp99\tmax\tbwa peak over the bound\tfloors alone <= -m\tp50\tp99\tbwa peak over it\tbwa's D arrays alone <= -m\tp50\tp99\tbwa peak over it\twith the bounded peak <= -m\tp50\tp99\tbwa peak over it");
    for (row, label) in ["0", "1", "2", "3", ">=4"].iter().enumerate() {
        let rows: Vec<&ReadResult> = results.iter().filter(|r| d_star_row(r.d_star) == row).collect();
        let bounds = sorted_bounds(&rows, ReadResult::guard_bound);
        let proved: Vec<&&ReadResult> = rows.iter().filter(|r| r.guard_ok).collect();
        let bwa: usize = proved.iter().map(|r| r.bwa.pops).sum();
        let pruned: usize = proved.iter().map(|r| r.pruned_or_bwa().pops).sum();
        let over = rows.iter().filter(|r| r.passed_guard()).count();
        let kernel = kernel_columns(&rows);
        println!(
            "{label}\t{}\t{}\t{}\t{bwa}\t{pruned}\t{:.3}\t{}\t{}\t{}\t{}\t{over}\t{kernel}",
            rows.len(),
            bounds.len(),
            proved.len(),
            ratio(pruned, bwa),
            percentile(&bounds, 0.5),
            percentile(&bounds, 0.9),
            percentile(&bounds, 0.99),
            percentile(&bounds, 1.0)
        );
    }
    let over = results.iter().filter(|r| r.passed_guard()).count();
    println!("reads whose bwa stack passed the guard's bound: {over}");
    let differ = results.iter().filter(|r| r.guard_ok && r.differs()).count();
    println!("reads the guard proves whose pruned hits differ from bwa's: {differ}");
    let further: Vec<u64> =
        results.iter().filter_map(|r| r.pruned.as_ref()).map(|p| p.guard_lookups).filter(|&l| l > 0).collect();
    println!(
        "reads whose guard took further D arrays: {}, with {} lookups",
        further.len(),
        further.iter().sum::<u64>()
    );
    let pruned = || results.iter().filter_map(|r| r.pruned.as_ref());
    let pops = pruned().map(|p| p.pops).sum::<usize>();
    let with = pruned().map(|p| p.pops_with_entry_points).sum::<usize>();
    let loads = pruned().map(|p| p.extension_loads).sum::<usize>();
    println!(
        "pops with entry points: {with} of the pruned searches' {pops} ({:.4}); where the pruned step ends before loading the pop's extensions (a lookup more for a kernel's count): {loads}",
        ratio(with, pops)
    );
}

/// The guard's table's columns for the forms of its bound a kernel could keep
/// ([`crate::m_guard::kernel_bounds`]): for each, the reads it proves, its p50 and p99, and
/// the reads whose bwa stack held more (the theory says none).
fn kernel_columns(rows: &[&ReadResult]) -> String {
    let forms: [fn(&ReadResult) -> Option<u64>; 3] =
        [|r| r.kernel_bounds().floors, |r| r.kernel_bounds().bwa_caps, |r| r.kernel_bounds().peak];
    let columns = forms.iter().map(|bound| {
        let bounds = sorted_bounds(rows, bound);
        let proved = rows.iter().filter(|r| bound(r).is_some_and(|b| b <= r.max_entries)).count();
        let over = rows.iter().filter(|r| bound(r).is_some_and(|b| r.bwa.peak as u64 > b)).count();
        format!("{proved}\t{}\t{}\t{over}", percentile(&bounds, 0.5), percentile(&bounds, 0.99))
    });
    columns.collect::<Vec<_>>().join("\t")
}

/// The bounds `bound` gives `rows` (where it applies), in order, for percentiles.
fn sorted_bounds(rows: &[&ReadResult], bound: impl Fn(&ReadResult) -> Option<u64>) -> Vec<usize> {
    let mut bounds: Vec<usize> =
        rows.iter().filter_map(|r| bound(r)).map(|b| b.min(usize::MAX as u64) as usize).collect();
    bounds.sort_unstable();
    bounds
}

/// A ladder's cost on one read where it is exact: an accepted guess counts where the read is
/// in an `-m`-safe class or the guard proves its guess (a guess of d* + 1); elsewhere bwa's full
/// search follows it.
fn exact_pops(r: &ReadResult, i: usize, with_guard: bool) -> usize {
    let c = &r.ladders[i];
    let proved = r.m_safe || (with_guard && r.guard_ok && Some(c.accepted_g) == r.d_star.map(|d| d + 1));
    if c.by_guess && !proved {
        c.pops + r.bwa.pops
    } else {
        c.pops
    }
}

fn exact_ladder_pops<'a>(rows: impl Iterator<Item = &'a ReadResult>, i: usize, with_guard: bool) -> usize {
    rows.map(|r| exact_pops(r, i, with_guard)).sum()
}

/// One line a read, in the reads' order (from 0): d*, both searches' pops, the guard's bound
/// and each ladder's pops where exact with the guard (NA: none).
pub(super) fn write_per_read(path: &std::path::Path, results: &[ReadResult], ladders: &[Ladder]) -> anyhow::Result<()> {
    use std::io::Write;
    let na = |v: Option<String>| v.unwrap_or_else(|| "NA".into());
    let mut out = bcuda_output::Output::file(path)?;
    write!(out, "read\td_star\tbwa_pops\tpruned_pops\tguard_bound\tbwa_d_arrays_bound")?;
    for i in 0..ladders.len() {
        write!(out, "\tladder{}_exact_pops", i + 1)?;
    }
    writeln!(out)?;
    for (n, r) in results.iter().enumerate() {
        let bound = r.guard_bound().map(|b| b.to_string());
        let kernel = r.kernel_bounds().bwa_caps.map(|b| b.to_string());
        let d_star = r.d_star.map(|d| d.to_string());
        let pops = (r.bwa.pops, r.pruned_or_bwa().pops);
        write!(out, "{n}\t{}\t{}\t{}\t{}\t{}", na(d_star), pops.0, pops.1, na(bound), na(kernel))?;
        for i in 0..ladders.len() {
            write!(out, "\t{}", exact_pops(r, i, true))?;
        }
        writeln!(out)?;
    }
    out.commit()?;
    Ok(())
}

pub(super) fn print_hits(label: &str, hits: &[AlnHit]) {
    println!("  {label}: {} hits", hits.len());
    for h in hits {
        println!(
            "    mm {} gapo {} gape {} ins {} del {} score {} [{}, {}]",
            h.n_mm, h.n_gapo, h.n_gape, h.n_ins, h.n_del, h.score, h.k, h.l
        );
    }
}
