//! cuda/candidates.cu's kernels built for the CPU (candidates_kernel/host.cpp: CUDA's keywords
//! become nothing, the threads run one after another) find the model's alignments
//! (`bcuda::search::pigeonhole::within`: the same set, each as often) at bwa's penalties (one or
//! two gaps or none) and at an edit each, with the model's lookups, and its no-hit proof's
//! answers (`any_within`). Skipped without a C++ compiler (`CXX`, else `c++`).

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use bcuda::search::no_hit::{base_interval, bounds, part_start, prepend, Bounds};
use bcuda::search::pigeonhole::{any_within, within, Alignment, Budget, Col};
use bcuda::search::seeded::{genome_with_repeats, indexed, read_with_edits, xorshift};
use bcuda_index::Bwt;

/// A read and what it may spend: its codes, its bounds, a budget and an edit limit.
struct Read {
    codes: Vec<u8>,
    bounds: Bounds,
    budget: u32,
    max_edits: u32,
}

/// Seeded reads of 20 to 99 bases from `text` (both strands): a fifth random, the rest with
/// edits and N; each with a budget from `budgets` and an edit limit from `edits`.
fn reads(
    bwt: &Bwt,
    text: &[u8],
    n: usize,
    (budgets, edits): (std::ops::RangeInclusive<u32>, std::ops::RangeInclusive<u32>),
    next: &mut impl FnMut() -> u64,
) -> Vec<Read> {
    let draw = |range: &std::ops::RangeInclusive<u32>, x: u64| {
        range.start() + (x % (range.end() - range.start() + 1) as u64) as u32
    };
    (0..n)
        .map(|r| {
            let len = 20 + (next() % 80) as usize;
            let codes = read_with_edits(text, len, r % 5 == 0, 4, next);
            let bounds = bounds(bwt, &codes, &mut 0);
            let (budget, max_edits) = (draw(&budgets, next()), draw(&edits, next()));
            Read { codes, bounds, budget, max_edits }
        })
        .collect()
}

/// The kernels' output for `reads` with `args` after the reads' file, as lines.
fn run_host(host: &Path, bwt_path: &Path, dir: &Path, reads: &[Read], args: &[String]) -> Vec<String> {
    let lines: String = reads
        .iter()
        .map(|r| {
            let codes: String = r.codes.iter().map(|&c| (b'0' + c) as char).collect();
            format!("{} {} {codes}\n", r.budget, r.max_edits)
        })
        .collect();
    let reads_path = dir.join("reads.txt");
    std::fs::write(&reads_path, lines).unwrap();
    let out = Command::new(host).arg(bwt_path).arg(&reads_path).args(args).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap().lines().map(str::to_string).collect()
}

/// A column as host.cpp writes it.
fn col(s: &str) -> Col {
    let base = || s[1..].parse::<u8>().unwrap();
    match &s[..1] {
        "B" => Col::Base(base()),
        "D" => Col::Del(base()),
        "I" => Col::Ins,
        _ => panic!("column {s}"),
    }
}

/// What a run of the kernels gave: each read's alignments (None: skipped, fewer bases than
/// parts) or its proof's answer and whether it went over the cap (None: skipped); the bounds'
/// lookups and the searches'.
struct HostOut {
    alignments: Vec<Option<Vec<Alignment>>>,
    proof: Vec<Option<(bool, bool)>>,
    bound_lookups: u64,
    round_lookups: u64,
}

fn parse(lines: &[String], n: usize) -> HostOut {
    let mut out =
        HostOut { alignments: vec![Some(Vec::new()); n], proof: vec![None; n], bound_lookups: 0, round_lookups: 0 };
    for line in lines {
        let fields: Vec<&str> = line.split_whitespace().collect();
        match fields[0] {
            "skip" => out.alignments[fields[1].parse::<usize>().unwrap()] = None,
            "lookups" => {
                (out.bound_lookups, out.round_lookups) = (fields[1].parse().unwrap(), fields[2].parse().unwrap())
            }
            "proof" => {
                let r: usize = fields[1].parse().unwrap();
                out.proof[r] = Some((fields[2] == "1", fields[3] == "1"));
            }
            _ => {
                let r: usize = fields[0].parse().unwrap();
                let a = fields[1..].iter().map(|s| col(s)).collect();
                out.alignments[r].as_mut().expect("an alignment of a skipped read").push(a);
            }
        }
    }
    out
}

/// The lookups of the reads' bounds.
fn bound_lookups(bwt: &Bwt, reads: &[Read]) -> u64 {
    let mut lookups = 0;
    for r in reads {
        bounds(bwt, &r.codes, &mut lookups);
    }
    lookups
}

/// The genome's BWT, its .bwt file and both strands' text, in `dir`.
fn genome(dir: &Path) -> (Bwt, PathBuf, Vec<u8>) {
    let mut next = xorshift(0x2545_f491_4f6c_dd1d);
    let genome = genome_with_repeats(12_000, 100..600, &[3000, 6000, 9000], &mut next);
    let (fa, bwt) = indexed(dir, &genome);
    let text = genome.iter().copied().chain(genome.iter().rev().map(|&c| 3 - c)).collect();
    (bwt, bcuda_index::with_ext(&fa, ".bwt"), text)
}

/// Penalties as host.cpp takes them: mismatch, gap open, gap extension, most gaps.
type Penalties = [u32; 4];

/// What a rung found over its reads: reads with alignments, those of them with an N,
/// alignments with a gap, and the second finds of an alignment.
#[derive(Debug, Default)]
struct Tally {
    reads: usize,
    with_n: usize,
    gapped: usize,
    again: usize,
}

/// The lookups the kernels spend on `read`'s exact parts beyond the model's: a part's chain
/// extends its interval before it meets an N, where the model stops before the lookup.
fn lookups_before_n(bwt: &Bwt, read: &[u8], parts: usize) -> u64 {
    let len = read.len();
    let before_n = |j: usize| {
        let (start, end) = (part_start(j, len, parts), part_start(j + 1, len, parts));
        let Some(mut ik) = (read[end - 1] < 4).then(|| base_interval(bwt, read[end - 1])) else { return 0 };
        for &c in read[start..end - 1].iter().rev() {
            if c > 3 {
                return 2;
            }
            let Some(next) = prepend(bwt, &ik, c, &mut 0) else { return 0 };
            ik = next;
        }
        0
    };
    (0..parts).map(before_n).sum()
}

/// The parts the searches cut a read into at `budget`: one more than the most edits it pays for.
fn parts(b: &Budget) -> usize {
    let cheapest = if b.max_gapo == 0 { b.s_mm } else { b.s_mm.min(b.s_gapo).min(b.s_gape) };
    (b.score / cheapest).min(b.max_edits) as usize + 1
}

/// An alignment as host.cpp writes it.
fn text(a: &Alignment) -> String {
    let col = |c: &Col| match *c {
        Col::Base(b) => format!("B{b}"),
        Col::Ins => "I".to_string(),
        Col::Del(b) => format!("D{b}"),
    };
    a.iter().map(col).collect::<Vec<_>>().join(" ")
}

/// How the kernels' alignments differ from the model's: those only one found ("+": the
/// kernels, "-": the model), then those both found but not as often; and how many of the
/// model's finds were of an alignment it had found already.
fn differences(kernel: &[Alignment], model: &[Alignment]) -> (Vec<String>, Vec<String>, usize) {
    let count = |found: &[Alignment]| {
        let mut n = BTreeMap::new();
        found.iter().for_each(|a| *n.entry(a.clone()).or_insert(0) += 1);
        n
    };
    let (k, m) = (count(kernel), count(model));
    let only = |a: &BTreeMap<Alignment, usize>, b: &BTreeMap<Alignment, usize>, sign: char| -> Vec<String> {
        a.keys().filter(|x| !b.contains_key(*x)).map(|x| format!("{sign} {}", text(x))).collect()
    };
    let sets = [only(&k, &m, '+'), only(&m, &k, '-')].concat();
    let counts = k.iter().filter_map(|(x, n)| m.get(x).filter(|&c| c != n).map(|c| format!("{n} {c}: {}", text(x))));
    (sets, counts.collect(), model.len() - m.len())
}

/// The kernels at `penalties` find each read's alignments as the model does, each as often,
/// with the model's lookups.
fn check_rung(host: &Path, dir: &Path, (bwt, bwt_path): (&Bwt, &Path), reads: &[Read], penalties: Penalties) -> Tally {
    let args: Vec<String> = std::iter::once("rung".to_string()).chain(penalties.iter().map(u32::to_string)).collect();
    let got = parse(&run_host(host, bwt_path, dir, reads, &args), reads.len());
    assert_eq!(got.bound_lookups, bound_lookups(bwt, reads), "the bounds' lookups, {penalties:?}");
    let [s_mm, s_gapo, s_gape, max_gapo] = penalties;
    let (mut tally, mut lookups) = (Tally::default(), 0);
    for (r, read) in reads.iter().enumerate() {
        let budget = Budget { score: read.budget, s_mm, s_gapo, s_gape, max_gapo, max_edits: read.max_edits };
        let want = within(bwt, &read.codes, budget, &read.bounds, 32).map(|(found, spent, _)| {
            lookups += spent + lookups_before_n(bwt, &read.codes, parts(&budget));
            found
        });
        let what = || format!("read {r} {:?}, {budget:?}", read.codes);
        assert_eq!(got.alignments[r].is_some(), want.is_some(), "{}: skipped", what());
        let (kernel, found) = (got.alignments[r].clone().unwrap_or_default(), want.unwrap_or_default());
        let (sets, counts, again) = differences(&kernel, &found);
        assert!(sets.is_empty(), "{}: alignments the kernels found (+) or missed (-):\n{}", what(), sets.join("\n"));
        // The model finds a deletion between two parts by both searches: so must the kernels.
        assert!(counts.is_empty(), "{}: found as often (kernels, model):\n{}", what(), counts.join("\n"));
        tally.reads += !found.is_empty() as usize;
        tally.with_n += (!found.is_empty() && read.codes.contains(&4)) as usize;
        tally.again += again;
        tally.gapped += found.iter().filter(|a| a.iter().any(|c| !matches!(c, Col::Base(_)))).count();
    }
    assert_eq!(got.round_lookups, lookups, "the searches' lookups, {penalties:?}");
    tally
}

/// The kernels' no-hit proof (an edit each, gaps unlimited, up to each read's edit limit,
/// `most_extensions` a read) answers as the model's wherever it finished; returns the reads
/// with an alignment, those without, and those over the cap.
fn check_proof(host: &Path, dir: &Path, at: (&Bwt, &Path), reads: &[Read], most_extensions: u32) -> [usize; 3] {
    let (bwt, bwt_path) = at;
    let lines = run_host(host, bwt_path, dir, reads, &["proof".to_string(), most_extensions.to_string()]);
    let got = parse(&lines, reads.len());
    let mut answers = [0; 3];
    for (r, read) in reads.iter().enumerate() {
        let (want, _) = any_within(bwt, &read.codes, Budget::edits(read.max_edits, true), &read.bounds, u64::MAX);
        let kernel = got.proof[r];
        assert_eq!(kernel.is_some(), want.is_some(), "read {r} {:?}: skipped", read.codes);
        let (Some((any, over)), Some(want)) = (kernel, want) else { continue };
        if over {
            answers[2] += 1;
            continue;
        }
        assert_eq!(any, want, "read {r} {:?}, {} edits", read.codes, read.max_edits);
        answers[!any as usize] += 1;
    }
    answers
}

#[test]
fn the_kernels_built_for_the_cpu_find_the_models_alignments() {
    let dir = tempfile::tempdir().unwrap();
    let Some(host) = common::build_cpu_kernels(dir.path(), "candidates_kernel/host.cpp", "candidates_host", &[]) else {
        eprintln!("skipped: no C++ compiler");
        return;
    };
    let (bwt, bwt_path, text) = genome(dir.path());
    let mut next = xorshift(0x9e37_79b9_7f4a_7c15);
    let at = (&bwt, bwt_path.as_path());
    // bwa's penalties with one gap, two and none, and an edit each with gaps unlimited.
    let rungs: [(Penalties, _); 4] = [
        ([3, 11, 4, 1], (3..=15, 2..=5)),
        ([3, 11, 4, 2], (3..=15, 2..=5)),
        ([3, 11, 4, 0], (3..=15, 2..=5)),
        ([1, 1, 1, 1 << 30], (0..=3, 0..=3)),
    ];
    let mut again = 0;
    for (penalties, limits) in rungs {
        let reads = reads(&bwt, &text, 300, limits, &mut next);
        let tally = check_rung(&host, dir.path(), at, &reads, penalties);
        let gapped_enough = penalties[3] == 0 || tally.gapped > 20;
        assert!(tally.reads > 100 && tally.with_n > 10 && gapped_enough, "{penalties:?}: {tally:?}");
        again += tally.again;
    }
    assert!(again > 10, "{again} alignments found again: how often each is found goes untested");
    // The proof's budget is its edit limit.
    let mut reads = reads(&bwt, &text, 300, (0..=0, 0..=4), &mut next);
    reads.iter_mut().for_each(|r| r.budget = r.max_edits);
    let [some, none, over] = check_proof(&host, dir.path(), at, &reads, u32::MAX);
    assert!(some > 50 && none > 50 && over == 0, "{some} reads with an alignment, {none} without, {over} over");
    let [some, none, over] = check_proof(&host, dir.path(), at, &reads, 100);
    assert!(
        some + none > 50 && over > 50,
        "{some} reads with an alignment, {none} without, {over} over 100 extensions"
    );
}
