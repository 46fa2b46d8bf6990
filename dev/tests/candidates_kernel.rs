//! cuda/candidates.cu's kernels built for the CPU (candidates_kernel/host.cpp: CUDA's keywords
//! become nothing, the threads run one after another) find the model's alignments
//! (`bcuda::search::pigeonhole::within`: the same set, each as often) at bwa's penalties (one or
//! two gaps or none) and at an edit each, with the model's lookups, and its no-hit proof's
//! answers (`any_within`), also as the proof before the last pass runs it (src/gpu/proof_pass.rs:
//! the queue's reads it proves dropped, the others kept); and the trees candidate_tree builds from
//! a rung's alignments, replayed through bwa's search (`bcuda::search::replay`), give bwa's hits.
//! Skipped without a C++ compiler (`CXX`, else `c++`).

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use bcuda::aln_options::batch_options;
use bcuda::sai::{AlnHit, GapOptions};
use bcuda::search::no_hit::{base_interval, bounds, part_start, prepend, Bounds};
use bcuda::search::pigeonhole::{any_within, within, Alignment, Budget, Col};
use bcuda::search::replay::{reach, replay, CandidateTree, Link, Reached};
use bcuda::search::seeded::{both_strands, genome_with_repeats, indexed, read_with_edits, xorshift};
use bcuda::search::stack::GapStack;
use bcuda::search::{align_read_with, prepare_read, ReadBuffers, Search};
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
    let text = both_strands(&genome);
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

/// A read bwa's search (the CPU oracle) finds hits for: the hits, and the read as that search
/// sees it (its own options, its D arrays and search sequence, the reverse complement).
struct BwaRead {
    hits: Vec<AlnHit>,
    local: GapOptions,
    use_seed: bool,
    buffers: ReadBuffers,
}

/// `read`'s hits by bwa's search at `options`; None where it finds none.
fn bwa_read(bwt: &Bwt, read: &[u8], options: &GapOptions) -> Option<BwaRead> {
    let opt = batch_options(options, read.len());
    let mut buffers = ReadBuffers::default();
    let hits = align_read_with(bwt, None, read, &opt, &mut GapStack::default(), &mut buffers).unwrap();
    if hits.is_empty() {
        return None;
    }
    let (local, use_seed) = prepare_read(bwt, read, &opt, &mut buffers);
    Some(BwaRead { hits, local, use_seed, buffers })
}

/// The rung that holds every path bwa's search pops for `b`: its best score plus a mismatch
/// (bwa pops nothing above it), at the read's edit limit.
fn bwa_budget(b: &BwaRead) -> Budget {
    let l = &b.local;
    Budget {
        score: b.hits[0].score + l.s_mm as u32,
        s_mm: l.s_mm as u32,
        s_gapo: l.s_gapo as u32,
        s_gape: l.s_gape as u32,
        max_gapo: l.max_gapo as u32,
        max_edits: l.max_diff.max(0) as u32,
    }
}

/// A node's link as candidate_tree packs it: read position | gap state << 16 | string base << 18
/// (4: none, an insertion's).
fn link(packed: u32) -> Link {
    let base = (packed >> 18) as u8;
    Link { i: (packed & 0xffff) as i32, state: (packed >> 16 & 3) as u8, base: (base < 4).then_some(base) }
}

/// A tree's nodes as candidate_tree writes them: packed link, first child, next sibling.
type Nodes = Vec<[u32; 3]>;

/// Each read's tree from host.cpp's "tree" lines, or the status candidate_tree left it with.
fn parse_trees(lines: &[String], n: usize) -> Vec<Result<Nodes, u8>> {
    let mut trees: Vec<Option<Result<Nodes, u8>>> = vec![None; n];
    for line in lines {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let r: usize = fields[1].parse().unwrap();
        let node = |x: &&str| {
            let v: Vec<u32> = x.split(',').map(|v| v.parse().unwrap()).collect();
            [v[0], v[1], v[2]]
        };
        trees[r] = Some(match fields[0] {
            "status" => Err(fields[2].parse().unwrap()),
            "tree" => Ok(fields[2..].iter().map(node).collect()),
            _ => panic!("line {line}"),
        });
    }
    trees.into_iter().enumerate().map(|(r, t)| t.unwrap_or_else(|| panic!("no line for read {r}"))).collect()
}

/// A path from a tree's root: its nodes' links as (read position, gap state, string base).
type Walk = Vec<(i32, u8, Option<u8>)>;

/// The paths from the root to each node of the model's tree of `alignments` (each once), walked
/// as bwa's search walks them (`reach`).
fn model_paths(seq: &[u8], alignments: &[Alignment]) -> BTreeSet<Walk> {
    let mut paths = BTreeSet::new();
    for a in alignments {
        let (mut at, mut path) = (Reached { i: seq.len(), ..Reached::default() }, Walk::new());
        for &col in a.iter().rev() {
            let (next, l, _) = reach(seq, at, col);
            at = next;
            path.push((l.i, l.state, l.base));
            paths.insert(path.clone());
        }
    }
    paths
}

/// The paths from the root to each node of the kernel's tree reached from it: as many as its
/// nodes less the root, all different, where every node is linked once and no two siblings
/// share a link.
fn kernel_paths(nodes: &Nodes) -> Vec<Walk> {
    let (mut paths, mut todo) = (Vec::new(), vec![(0, Walk::new())]);
    while let Some((n, path)) = todo.pop() {
        let mut c = nodes[n][1];
        while c != u32::MAX {
            let (l, mut p) = (link(nodes[c as usize][0]), path.clone());
            p.push((l.i, l.state, l.base));
            paths.push(p.clone());
            todo.push((c as usize, p));
            c = nodes[c as usize][2];
        }
    }
    paths
}

/// How the kernel's tree of `seq` differs from the model's tree of `alignments`: its root, nodes
/// not reached once from it, siblings with the same link, then the paths only the kernel's
/// tree (+) or the model's (-) has. Compared as sets of paths, as the node order may differ.
fn path_differences(seq: &[u8], nodes: &Nodes, alignments: &[Alignment]) -> Vec<String> {
    let root = Link { i: seq.len() as i32, state: 0, base: None };
    if link(nodes[0][0]) != root {
        return vec![format!("root {:?}", link(nodes[0][0]))];
    }
    let paths = kernel_paths(nodes);
    if paths.len() + 1 != nodes.len() {
        return vec![format!("{} nodes, {} reached from the root", nodes.len(), paths.len())];
    }
    let (kernel, model) = (paths.iter().cloned().collect::<BTreeSet<_>>(), model_paths(seq, alignments));
    if kernel.len() != paths.len() {
        return vec![format!("{} paths, {} different: siblings with the same link", paths.len(), kernel.len())];
    }
    let only = |a: &BTreeSet<Walk>, b: &BTreeSet<Walk>, sign| {
        a.difference(b).map(|p| format!("{sign} {p:?}")).collect::<Vec<String>>()
    };
    [only(&kernel, &model, '+'), only(&model, &kernel, '-')].concat()
}

/// The kernel's tree as the replay takes it.
fn candidate_tree(nodes: &Nodes) -> CandidateTree {
    let column = |j: usize| nodes.iter().map(|x| x[j]).collect();
    CandidateTree::from_arrays(nodes.iter().map(|x| link(x[0])).collect(), column(1), column(2))
}

/// What the trees were checked on: reads with bwa's hits, those of them inexact and gapped,
/// and those the rung left (fewer bases than parts).
#[derive(Debug, Default)]
struct TreeTally {
    reads: usize,
    inexact: usize,
    gapped: usize,
    left: usize,
}

/// The kernels' tree of `b` (the kernels' read `k`) holds the paths of the model's alignments,
/// each once (as many nodes as the model's tree: node order may differ), and replays to bwa's
/// hits; false where the rung left the read.
fn check_tree(bwt: &Bwt, b: &BwaRead, k: &Read, nodes: &Result<Nodes, u8>) -> bool {
    let seq = &b.buffers.seq;
    let what = || format!("{seq:?}, {:?}", bwa_budget(b));
    let Some((alignments, _, _)) = within(bwt, seq, bwa_budget(b), &k.bounds, 32) else {
        // Fewer bases than parts: rung_end leaves it to bwa's search over its extensions.
        assert_eq!(nodes.as_ref().err(), Some(&6), "{}: a read the rung leaves", what());
        return false;
    };
    let nodes = nodes.as_ref().unwrap_or_else(|s| panic!("{}: left with status {s}", what()));
    let differ = path_differences(seq, nodes, &alignments);
    assert!(differ.is_empty(), "{}: the tree's paths:\n{}", what(), differ.join("\n"));
    let tree = candidate_tree(nodes);
    assert_eq!(tree.len(), CandidateTree::new(seq, &alignments).len(), "{}: the tree's nodes", what());
    let ReadBuffers { width, seed_width, .. } = &b.buffers;
    let seed_width = b.use_seed.then_some(&seed_width[..]);
    let search = Search { bwt, seq, seed_width, opt: &b.local, intervals: None };
    assert_eq!(replay(&search, width, &b.local, &tree, &mut 0), b.hits, "{}: the replay's hits", what());
    true
}

/// candidate_tree (after a rung at bwa's best score plus a mismatch, and candidate_rung_end)
/// gives each of `reads` that bwa finds hits for a tree that replays to those hits.
fn check_trees(host: &Path, dir: &Path, at: (&Bwt, &Path), reads: &[Vec<u8>], options: &GapOptions) -> TreeTally {
    let (bwt, bwt_path) = at;
    let bwa: Vec<BwaRead> = reads.iter().filter_map(|r| bwa_read(bwt, r, options)).collect();
    let penalties = [options.s_mm, options.s_gapo, options.s_gape, options.max_gapo].map(|x| x as u32);
    let kernel_reads: Vec<Read> = bwa
        .iter()
        .map(|b| {
            let budget = bwa_budget(b);
            // The rung runs at the batch's penalties: a read's own must be the same.
            let own = [budget.s_mm, budget.s_gapo, budget.s_gape, budget.max_gapo];
            assert_eq!(own, penalties, "a read's penalties");
            let codes = b.buffers.seq.clone();
            let bounds = bounds(bwt, &codes, &mut 0);
            Read { codes, bounds, budget: budget.score, max_edits: budget.max_edits }
        })
        .collect();
    let args: Vec<String> = std::iter::once("tree".to_string()).chain(penalties.iter().map(u32::to_string)).collect();
    let trees = parse_trees(&run_host(host, bwt_path, dir, &kernel_reads, &args), bwa.len());
    let mut tally = TreeTally::default();
    for ((b, k), tree) in bwa.iter().zip(&kernel_reads).zip(&trees) {
        if !check_tree(bwt, b, k, tree) {
            tally.left += 1;
            continue;
        }
        tally.reads += 1;
        tally.inexact += (b.hits[0].score > 0) as usize;
        tally.gapped += b.hits.iter().any(|h| h.n_gapo > 0) as usize;
    }
    tally
}

#[test]
fn the_kernels_trees_replay_to_bwas_hits() {
    let dir = tempfile::tempdir().unwrap();
    let Some(host) = common::build_cpu_kernels(dir.path(), "candidates_kernel/host.cpp", "candidates_host", &[]) else {
        eprintln!("skipped: no C++ compiler");
        return;
    };
    let (bwt, bwt_path, text) = genome(dir.path());
    let mut next = xorshift(0x7e91_a5ed_0c4d_2b13);
    // bwa's default gap options, and two gap opens (ancient DNA's -o 2).
    for max_gapo in [1, 2] {
        let options = GapOptions { max_gapo, ..GapOptions::default() };
        let reads: Vec<Vec<u8>> = (0..300)
            .map(|r| {
                let len = 25 + (next() % 60) as usize;
                read_with_edits(&text, len, r % 7 == 0, 4, &mut next)
            })
            .collect();
        let tally = check_trees(&host, dir.path(), (&bwt, &bwt_path), &reads, &options);
        eprintln!("max_gapo {max_gapo}: {tally:?}");
        assert!(tally.reads > 100 && tally.inexact > 50 && tally.gapped > 20, "max_gapo {max_gapo}: {tally:?}");
    }
}

/// A read's state as the kernels leave it: none (0xff: the proof never took it), occurring whole,
/// no alignment within its edit limit, an alignment found, over its extensions (or outgrown).
const NO_STATE: u8 = 0xff;
const EXACT: u8 = 3;
const NO_ALIGNMENT: u8 = 5;
const LEFT_ALIGNS: u8 = 8;
const LEFT_PROOF_EXTENSIONS: u8 = 9;

/// A read of the batch the last pass takes: its codes as read (N as 4; the kernels search its
/// reverse complement), its edit limit before the extra edits, and its hit count before the
/// proof (each read's own, so that a mixed-up read shows).
struct LastPassRead {
    codes: Vec<u8>,
    max_diff: i32,
    n_hits: i32,
}

/// Seeded reads of 20 to 99 bases from `text`, a third random, with edits and N; limits of 0 to
/// 4 edits, with some of -1 and of 32 (outside the proof's 0..=31 with `extra` edits or not)
/// and some short ones at 31 (the proof takes them, and leaves them: fewer bases than parts).
fn last_pass_reads(text: &[u8], n: usize, extra: i32, next: &mut impl FnMut() -> u64) -> Vec<LastPassRead> {
    (0..n)
        .map(|r| {
            let len = 20 + (next() % 80) as usize;
            let codes = read_with_edits(text, len, r % 3 == 0, 4, next);
            let max_diff = match r % 23 {
                0 => -1,
                1 => 32 - extra,
                2 if codes.len() < 32 => 31 - extra,
                _ => (next() % 5) as i32,
            };
            LastPassRead { codes, max_diff, n_hits: 1000 + r as i32 }
        })
        .collect()
}

/// The last pass's queue: every read but every eighth, shuffled (the proof takes the reads in
/// the queue's order, and must leave the others alone).
fn last_pass_queue(n: usize, next: &mut impl FnMut() -> u64) -> Vec<u32> {
    let mut queue: Vec<u32> = (0..n as u32).filter(|r| r % 8 != 5).collect();
    for k in (1..queue.len()).rev() {
        queue.swap(k, (next() % (k as u64 + 1)) as usize);
    }
    queue
}

/// What the model makes of a read of the queue: untouched (its length or limit outside the
/// proof's), occurring whole, an alignment within its limit, none (and the extensions its
/// proof takes), or fewer bases than parts.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Expect {
    Untouched,
    Exact,
    Aligns,
    NoAlignment(u64),
    Skipped,
}

/// The sequence bwa searches for a read: its reverse complement, N as 4.
fn search_seq(codes: &[u8]) -> Vec<u8> {
    codes.iter().rev().map(|&c| if c > 3 { 4 } else { 3 - c }).collect()
}

/// The model's answer for `read` at `extra` edits over its limit and reads of at most `max_len`
/// bases: the proof searches its reverse complement (bwa's search sequence) at an edit each.
fn expect(bwt: &Bwt, read: &LastPassRead, extra: i32, max_len: usize) -> Expect {
    let limit = read.max_diff + extra;
    if read.codes.len() > max_len || !(0..=31).contains(&limit) {
        return Expect::Untouched;
    }
    let seq = search_seq(&read.codes);
    let bounds = bounds(bwt, &seq, &mut 0);
    if bounds.after[0] == 0 {
        return Expect::Exact;
    }
    let budget = Budget::edits(limit as u32, true);
    match any_within(bwt, &seq, budget, &bounds, u64::MAX) {
        (None, _) => Expect::Skipped,
        (Some(true), _) => Expect::Aligns,
        // Two lookups an extension, the kernels' extensions of an exact part up to an N too.
        (Some(false), spent) => Expect::NoAlignment((spent + lookups_before_n(bwt, &seq, parts(&budget))) / 2),
    }
}

/// What host.cpp's "last" mode left: each read's status, extensions and hit count, the bounds of
/// those the proof took (after, then before), the queue, the kept and proved counts, and whether
/// the rung outgrew its buffers.
#[derive(Default)]
struct LastPassOut {
    status: Vec<u8>,
    extensions: Vec<u32>,
    n_hits: Vec<i32>,
    bounds: BTreeMap<usize, Vec<u8>>,
    queue: Vec<u32>,
    queue_count: usize,
    kept: usize,
    proved: usize,
    overflow: bool,
}

fn parse_last_pass(lines: &[String]) -> LastPassOut {
    let mut out = LastPassOut::default();
    for line in lines {
        let f: Vec<&str> = line.split_whitespace().collect();
        match f[0] {
            "read" => {
                out.status.push(f[2].parse().unwrap());
                out.extensions.push(f[3].parse().unwrap());
                out.n_hits.push(f[4].parse().unwrap());
            }
            "bounds" => {
                _ = out.bounds.insert(f[1].parse().unwrap(), f[2..].iter().map(|x| x.parse().unwrap()).collect())
            }
            "queue" => {
                out.queue_count = f[1].parse().unwrap();
                out.queue = f[2..].iter().map(|x| x.parse().unwrap()).collect();
            }
            "counts" => (out.kept, out.proved) = (f[1].parse().unwrap(), f[2].parse().unwrap()),
            "overflow" => out.overflow = f[1] != "0",
            _ => panic!("line {line}"),
        }
    }
    out
}

/// How the proof is run: the extra edits, the longest read it takes, the most extensions a read
/// and the branches a round.
#[derive(Clone, Copy, Debug)]
struct LastPassRun {
    extra: i32,
    max_len: usize,
    most_extensions: u32,
    capacity: u32,
}

/// host.cpp's "last" mode over `reads` and `queue`.
fn run_last_pass(
    host: &Path,
    at: (&Path, &Path),
    reads: &[LastPassRead],
    queue: &[u32],
    run: LastPassRun,
) -> LastPassOut {
    let (bwt_path, dir) = at;
    let line = |r: &LastPassRead| {
        let codes: String = r.codes.iter().map(|&c| (b'0' + c) as char).collect();
        format!("{} {} {codes}\n", r.max_diff, r.n_hits)
    };
    let (reads_path, queue_path) = (dir.join("last_pass.txt"), dir.join("queue.txt"));
    std::fs::write(&reads_path, reads.iter().map(line).collect::<String>()).unwrap();
    std::fs::write(&queue_path, queue.iter().map(|j| format!("{j}\n")).collect::<String>()).unwrap();
    let args =
        [run.extra.to_string(), run.max_len.to_string(), run.most_extensions.to_string(), run.capacity.to_string()];
    let out =
        Command::new(host).arg(bwt_path).arg(&reads_path).arg("last").arg(&queue_path).args(args).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let lines: Vec<String> = String::from_utf8(out.stdout).unwrap().lines().map(str::to_string).collect();
    parse_last_pass(&lines)
}

/// The statuses a read the model expects `e` of may end with after a run that did or did not
/// (`overflow`) outgrow its buffers, `most` extensions a read: a read that lost a child to a full
/// buffer may have lost the branch of an alignment, so it is left; an alignment may come after a
/// read's extensions ran out.
fn statuses(e: Expect, overflow: bool, most: u32) -> Vec<u8> {
    match e {
        Expect::Untouched => vec![NO_STATE],
        Expect::Exact => vec![EXACT],
        Expect::Aligns if !overflow && most == u32::MAX => vec![LEFT_ALIGNS],
        Expect::Aligns => vec![LEFT_ALIGNS, LEFT_PROOF_EXTENSIONS],
        Expect::NoAlignment(e) if !overflow && e < most as u64 => vec![NO_ALIGNMENT],
        Expect::NoAlignment(e) if e < most as u64 => vec![NO_ALIGNMENT, LEFT_PROOF_EXTENSIONS],
        Expect::NoAlignment(_) | Expect::Skipped => vec![LEFT_PROOF_EXTENSIONS],
    }
}

/// What a proof run was checked on: reads proved (dropped) and those of them with an N, kept
/// with an alignment, occurring whole, left over their extensions, left with fewer bases than
/// parts, and the queue's reads the proof did not take.
#[derive(Debug, Default)]
struct LastPassTally {
    proved: usize,
    proved_with_n: usize,
    aligns: usize,
    exact: usize,
    left_extensions: usize,
    skipped: usize,
    untouched: usize,
}

/// The kernels' proof over `queue` drops exactly the reads the model proves (no alignment within
/// their limit, within `run`'s extensions, the rung within its buffers: `overflow` says whether
/// it must outgrow them), each with 0 hits; keeps the others in the queue; touches no read
/// outside it. A read's extensions are the model's wherever its proof ran whole.
fn check_last_pass(
    host: &Path,
    at: (&Bwt, &Path, &Path),
    reads: &[LastPassRead],
    queue: &[u32],
    run: LastPassRun,
    overflow: bool,
) -> LastPassTally {
    let (bwt, bwt_path, dir) = at;
    let got = run_last_pass(host, (bwt_path, dir), reads, queue, run);
    assert_eq!(got.overflow, overflow, "{run:?}: the rung outgrew its buffers");
    assert_eq!(got.status.len(), reads.len(), "{run:?}: a line a read");
    let mut expected = vec![None; reads.len()];
    queue.iter().for_each(|&j| expected[j as usize] = Some(expect(bwt, &reads[j as usize], run.extra, run.max_len)));
    let mut tally = LastPassTally::default();
    for (r, read) in reads.iter().enumerate() {
        let what = || format!("{run:?}, read {r} {:?} max_diff {}: {:?}", read.codes, read.max_diff, expected[r]);
        let (status, extensions) = (got.status[r], got.extensions[r]);
        let Some(e) = expected[r] else {
            assert_eq!((status, got.n_hits[r]), (NO_STATE, read.n_hits), "{}: outside the queue", what());
            continue;
        };
        assert!(statuses(e, overflow, run.most_extensions).contains(&status), "{}: status {status}", what());
        // Its bounds are its search sequence's, where candidate_queued_reads placed them.
        let model = (e != Expect::Untouched).then(|| bounds(bwt, &search_seq(&read.codes), &mut 0));
        let model = model.map(|b| [b.after, b.before].concat());
        assert_eq!(got.bounds.get(&r), model.as_ref(), "{}: its bounds", what());
        let n_hits = if status == NO_ALIGNMENT { 0 } else { read.n_hits };
        assert_eq!(got.n_hits[r], n_hits, "{}: its hits", what());
        match e {
            // The proof ran whole, or to the cap; a read proved in a rung that outgrew its
            // buffers ran whole.
            Expect::NoAlignment(want) if !overflow => {
                assert_eq!(extensions as u64, want.min(run.most_extensions as u64), "{}: extensions", what())
            }
            Expect::NoAlignment(want) if status == NO_ALIGNMENT => {
                assert_eq!(extensions as u64, want, "{}: extensions of a read proved", what())
            }
            Expect::Skipped => assert_eq!(extensions, u32::MAX, "{}: fewer bases than parts", what()),
            Expect::Aligns if status == LEFT_PROOF_EXTENSIONS && !overflow => {
                assert!(extensions >= run.most_extensions, "{}: left at {extensions} extensions", what())
            }
            _ => {}
        }
        tally.proved += (status == NO_ALIGNMENT) as usize;
        tally.proved_with_n += (status == NO_ALIGNMENT && read.codes.contains(&4)) as usize;
        tally.aligns += (status == LEFT_ALIGNS) as usize;
        tally.exact += (status == EXACT) as usize;
        tally.left_extensions += (e != Expect::Skipped && status == LEFT_PROOF_EXTENSIONS) as usize;
        tally.skipped += (e == Expect::Skipped) as usize;
        tally.untouched += (status == NO_STATE) as usize;
    }
    // The queue keeps the reads not proved (in any order), and counts them.
    let mut kept: Vec<u32> = queue.iter().copied().filter(|&j| got.status[j as usize] != NO_ALIGNMENT).collect();
    let mut left = got.queue.clone();
    kept.sort();
    left.sort();
    assert_eq!(left, kept, "{run:?}: the queue after the proof");
    assert_eq!((got.queue_count, got.kept, got.proved), (kept.len(), kept.len(), tally.proved), "{run:?}: the counts");
    tally
}

#[test]
fn the_proof_before_the_last_pass_drops_the_reads_the_model_proves() {
    let dir = tempfile::tempdir().unwrap();
    let Some(host) = common::build_cpu_kernels(dir.path(), "candidates_kernel/host.cpp", "candidates_host", &[]) else {
        eprintln!("skipped: no C++ compiler");
        return;
    };
    let (bwt, bwt_path, text) = genome(dir.path());
    let mut next = xorshift(0x5851_f42d_4c95_7f2d);
    let at = (&bwt, bwt_path.as_path(), dir.path());
    // bwa's default (gap extensions count against the limit) and -e 2.
    for extra in [0, 2] {
        let reads = last_pass_reads(&text, 300, extra, &mut next);
        let queue = last_pass_queue(reads.len(), &mut next);
        // The longest read the proof takes is one of the queue's: the kernel's test at its edge.
        let max_len = queue.iter().map(|&j| reads[j as usize].codes.len()).filter(|&l| l <= 90).max().unwrap();
        // Room for every branch, no cap on extensions: the model's answers.
        let whole = LastPassRun { extra, max_len, most_extensions: u32::MAX, capacity: 1 << 21 };
        let t = check_last_pass(&host, at, &reads, &queue, whole, false);
        eprintln!("extra {extra}: {t:?}");
        let enough = t.proved >= 30 && t.proved_with_n >= 5 && t.aligns >= 30 && t.exact >= 5;
        assert!(enough && t.skipped >= 1 && t.untouched >= 10, "extra {extra}: {t:?}");
        // Few extensions a read: those of a read that ran out are kept.
        let capped = LastPassRun { most_extensions: 200, ..whole };
        let t = check_last_pass(&host, at, &reads, &queue, capped, false);
        eprintln!("extra {extra}, at most 200 extensions: {t:?}");
        assert!(t.proved >= 10 && t.left_extensions >= 10, "extra {extra}, 200 extensions: {t:?}");
        // Room for 10 or 3,000 branches a round: the rung outgrows it, the reads that lost a
        // branch are left, and the others' proofs ran whole (check_last_pass).
        let t = check_last_pass(&host, at, &reads, &queue, LastPassRun { capacity: 10, ..whole }, true);
        assert!(t.proved <= 5 && t.left_extensions >= 150, "extra {extra}, 10 branches: {t:?}");
        let t = check_last_pass(&host, at, &reads, &queue, LastPassRun { capacity: 3000, ..whole }, true);
        eprintln!("extra {extra}, 3,000 branches: {t:?}");
        assert!(t.proved >= 4 && t.left_extensions >= 80, "extra {extra}, 3,000 branches: {t:?}");
    }
}
