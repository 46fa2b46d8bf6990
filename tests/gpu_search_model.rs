//! The GPU's inexact search, checked on the CPU: `bcuda-dev stack-profile` runs every read with
//! bwa's stack and with the GPU's algorithms in Rust (the bounded stack of pass 1, with a pop
//! budget, and the team's level search of passes 2 and 3), and fails if any of them finishes
//! with hits other than bwa's. Small stacks and pools force every give-up and drop path.

mod common;

use common::{bcuda, bcuda_dev, data, ecoli_index};

/// The stack-profile table's row for `size` under `heading`: its columns after the first.
fn row(report: &str, heading: &str, size: &str) -> Vec<u64> {
    let section = report.split(heading).nth(1).unwrap_or_else(|| panic!("no {heading:?} in:\n{report}"));
    let line = section
        .lines()
        .find(|l| l.split('\t').next() == Some(size))
        .unwrap_or_else(|| panic!("no row {size} in:\n{report}"));
    line.split('\t').skip(1).map(|x| x.split_whitespace().next().unwrap().parse().unwrap()).collect()
}

/// `bcuda-dev stack-profile` of the first 20,000 reads, bounded stacks of 16 and 256 entries (256
/// pops), the level search with these pools and lanes, and `extra` options.
fn profile(prefix: &str, reads: &str, level_capacities: &str, lanes: &str, extra: &[&str]) -> String {
    let mut args = vec![
        "stack-profile",
        "--capacity",
        "16,256",
        "--max-pops",
        "256",
        "--level-capacity",
        level_capacities,
        "--lanes",
        lanes,
        "--max-reads",
        "20000",
    ];
    args.extend(extra);
    args.extend([prefix, reads]);
    String::from_utf8(bcuda_dev(&args)).unwrap()
}

/// `profile` of E. coli's ART reads (E. coli indexed afresh) with these pools and lanes, once
/// per list of extra options.
fn ecoli_profiles(level_capacities: &str, lanes: &str, extras: &[&[&str]]) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let fasta = ecoli_index(&dir);
    let reads = data("ecoli536_art.fq");
    extras.iter().map(|extra| profile(&fasta, reads.to_str().unwrap(), level_capacities, lanes, extra)).collect()
}

/// A 12 Mbp human-like genome indexed in `dir` and 20,000 reads of it: the FASTA's and the
/// reads' paths.
fn human_like(dir: &tempfile::TempDir) -> (String, String) {
    let fasta = dir.path().join("hl.fa");
    std::fs::write(&fasta, bcuda_dev(&["synth-genome", "--size-mbp", "12", "--seed", "3", "--human-like"])).unwrap();
    bcuda(&["index", "-q", fasta.to_str().unwrap()]);
    let reads = dir.path().join("reads.fq");
    let sim = common::repo().join("scripts/sim-reads.py");
    let fq = common::run("python3", &[sim.to_str().unwrap(), fasta.to_str().unwrap(), "100", "20000", "5"]);
    std::fs::write(&reads, fq).unwrap();
    (fasta.to_str().unwrap().to_string(), reads.to_str().unwrap().to_string())
}

#[test]
fn gpu_searches_give_bwas_hits_on_ecoli() {
    let dir = tempfile::tempdir().unwrap();
    let fasta = ecoli_index(&dir);
    let report = profile(&fasta, data("ecoli536_art.fq").to_str().unwrap(), "4800,65536", "32", &[]);
    assert!(report.contains("every bounded search that finished gave bwa's hits"), "{report}");
    // With 16 entries most reads give up, with 256 some (256 pops also end some); with a
    // 4800-entry pool (75 chunks, about what one group reserves) some do.
    assert!(row(&report, "bounded entries", "16")[0] > 1000, "{report}");
    let r256 = row(&report, "bounded entries", "256")[0];
    assert!(r256 > 0 && r256 < 20000, "{report}");
    assert!(row(&report, "level search", "4800")[0] > 0, "{report}");
}

/// The team passes' root chain on all lanes at once (`--root-chain`, the kernels' `root_chain`):
/// bwa's hits (the model also checks every matching child against the chain's precomputed
/// entry), on a far shorter critical path; with the interval table its entries hold strings,
/// and with a small `-m` the search takes the chain pop by pop as before.
#[test]
fn the_root_chain_on_all_lanes_gives_bwas_hits() {
    let extras: [&[&str]; 4] = [
        &[],
        &["--root-chain"],
        &["--root-chain", "--interval-depth", "8"],
        &["--root-chain", "-m", "300", "--exact-entries-limit"],
    ];
    let reports = ecoli_profiles("4800,65536", "32", &extras);
    for (extra, report) in extras.iter().zip(&reports).skip(1) {
        assert!(report.contains("every bounded search that finished gave bwa's hits"), "{extra:?}: {report}");
    }
    let critical = |report: &str| row(report, "level search", "65536")[3];
    let (plain, root) = (critical(&reports[0]), critical(&reports[1]));
    assert!(root * 2 < plain, "critical path {root} against {plain}");
}

/// Pushes above the pool's cap counted as dropped at the push (`--drop-at-push`, the kernels'
/// `drop_at_push`): bwa's hits with a pool small enough to drop scores and hand reads on, and
/// with `-m 300`, where groups near `-m` store every push; and, as the commit makes room only
/// for the pushes it keeps, no more reads handed on than without. The same with gap records
/// (`--gap-records`, a model of a kernel not built yet).
#[test]
fn pushes_counted_at_the_push_give_bwas_hits() {
    let extras: [&[&str]; 5] = [
        &["--root-chain"],
        &["--root-chain", "--drop-at-push"],
        &["--root-chain", "--drop-at-push", "-m", "300", "--exact-entries-limit"],
        &["--root-chain", "--drop-at-push", "--gap-records"],
        &["--root-chain", "--drop-at-push", "--gap-records", "-m", "300", "--exact-entries-limit"],
    ];
    let reports = ecoli_profiles("4800,65536", "32", &extras);
    for (extra, report) in extras.iter().zip(&reports) {
        assert!(report.contains("every bounded search that finished gave bwa's hits"), "{extra:?}: {report}");
    }
    let handed_on = |report: &str| row(report, "level search", "4800")[0];
    assert!(handed_on(&reports[1]) <= handed_on(&reports[0]), "{}\n{}", reports[0], reports[1]);
    // A record holds a pop's gap children in one item, so the small pool hands on fewer reads
    // still (E. coli's reads here: 359 without either, 290 with drop_at_push, 1 with records).
    assert!(reports[3].contains("gap records stored"), "{}", reports[3]);
    assert!(handed_on(&reports[3]) < handed_on(&reports[1]), "{}\n{}", reports[1], reports[3]);
}

#[test]
fn gpu_searches_give_bwas_hits_on_a_human_like_genome() {
    let dir = tempfile::tempdir().unwrap();
    let (fasta, reads) = human_like(&dir);
    // Pass 3's teams are larger than a warp (last_team_lanes): more chains per group, and more
    // run again after a hit.
    let report = profile(&fasta, &reads, "4800,65536,2000000", "128", &["--root-chain"]);
    assert!(report.contains("every bounded search that finished gave bwa's hits"), "{report}");
    // Repeat families make some searches outgrow pass 2's pool; pass 3's (as large as bwa's
    // -m lets a search grow) holds every read.
    assert!(row(&report, "level search", "65536")[0] > 0, "{report}");
    assert_eq!(row(&report, "level search", "2000000")[0], 0, "{report}");
    // Pass 2's `level_max_rounds`: a smaller limit hands on at least as many reads, and some
    // searches take more than 64 groups of chains here.
    let handed_on = |rounds: &str| row(&report, "level_max_rounds", rounds)[0];
    assert!(handed_on("64") > 0, "{report}");
    assert!(handed_on("64") >= handed_on("256") && handed_on("256") >= handed_on("4096"), "{report}");
}

/// bwa's -m inside a group of chains: with a small -m many searches reach it; the level
/// search gives those reads up unless it walks the group pop by pop
/// (`--exact-entries-limit`, the kernels' `entries_limit_exact`), and then it gives bwa's
/// hits for every read.
#[test]
fn the_level_search_stops_where_bwas_max_entries_does() {
    let reports = ecoli_profiles("65536", "128", &[&["-m", "300"], &["-m", "300", "--exact-entries-limit"]]);
    let (inexact, exact) = (&reports[0], &reports[1]);
    assert!(exact.contains("every bounded search that finished gave bwa's hits"), "{exact}");
    assert!(row(inexact, "level search", "65536")[1] > 0, "some reads reach -m 300 inside a group:\n{inexact}");
    assert_eq!(row(exact, "level search", "65536")[1], 0, "{exact}");
}

/// The GPU's searches with the interval table (`interval_depth`): an entry that has matched
/// fewer bases than the table's depth holds its string instead of `k`, and its extensions come
/// from the table. Bounded stacks and the level search so run give bwa's hits (the oracle has
/// no table) on E. coli at depths 4 and 12 (gaps open only beyond 5 bases from the ends) and
/// with `-m 300`, and on a human-like genome.
#[test]
fn gpu_searches_with_the_interval_table_give_bwas_hits() {
    let dir = tempfile::tempdir().unwrap();
    let fasta = ecoli_index(&dir);
    let reads = data("ecoli536_art.fq");
    for extra in [
        &["--interval-depth", "4"][..],
        &["--interval-depth", "12"],
        &["--interval-depth", "10", "-m", "300", "--exact-entries-limit"],
    ] {
        let report = profile(&fasta, reads.to_str().unwrap(), "4800,65536", "32", extra);
        assert!(report.contains("every bounded search that finished gave bwa's hits"), "{extra:?}: {report}");
    }
    let (hl, hl_reads) = human_like(&dir);
    let report = profile(&hl, &hl_reads, "65536", "32", &["--interval-depth", "11"]);
    assert!(report.contains("every bounded search that finished gave bwa's hits"), "{report}");
}

/// The team's segments of chains (`--refill SEED`, the kernels' `level_refill`): wherever the
/// seeds end them (at a drawn cap, at a hit, at a full push buffer, all seen here), every
/// search that finishes gives bwa's hits, on E. coli and on the human-like genome, with pools
/// small enough that scores are dropped and with and without the root's chain. Near `-m`,
/// levels go on in groups instead of segments: at `-m 300` from their start (a segment of 32
/// lanes might push 32 x 9 x 101 entries), the groups finding where `-m` stops or giving the
/// read up as `--exact-entries-limit` says; at `-m 30000` after segments.
#[test]
fn segments_of_chains_give_bwas_hits_wherever_they_end() {
    let extras: [&[&str]; 5] = [
        &["--refill", "1"],
        &["--refill", "2", "--root-chain"],
        &["--refill", "3", "-m", "300"],
        &["--refill", "6", "-m", "300", "--exact-entries-limit"],
        &["--refill", "7", "-m", "30000"],
    ];
    let reports = ecoli_profiles("4800,65536", "32", &extras);
    for (extra, report) in extras.iter().zip(&reports) {
        assert!(report.contains("every bounded search that finished gave bwa's hits"), "{extra:?}: {report}");
    }
    for report in [&reports[0], &reports[1], &reports[4]] {
        let ends = row(report, "level_refill segments", "65536");
        assert!(ends[..3].iter().all(|&n| n > 0), "segments end each way:\n{report}");
        assert_eq!(row(report, "level search", "65536")[1], 0, "{report}");
    }
    for report in &reports[2..] {
        assert!(row(report, "level_refill segments", "65536")[3] > 0, "levels go on in groups near -m:\n{report}");
    }
    assert!(row(&reports[0], "level search", "4800")[0] > 0, "the small pool drops scores:\n{}", reports[0]);
    assert!(row(&reports[2], "level search", "65536")[1] > 0, "groups give up near -m 300:\n{}", reports[2]);
    assert_eq!(row(&reports[3], "level search", "65536")[1], 0, "groups find -m's stop:\n{}", reports[3]);
    let dir = tempfile::tempdir().unwrap();
    let (fasta, reads) = human_like(&dir);
    for extra in [&["--refill", "4", "--root-chain"][..], &["--refill", "5"]] {
        let report = profile(&fasta, &reads, "4800,65536,2000000", "128", extra);
        assert!(report.contains("every bounded search that finished gave bwa's hits"), "{extra:?}: {report}");
        assert!(row(&report, "level_refill segments", "2000000")[..3].iter().all(|&n| n > 0), "{extra:?}: {report}");
        assert!(row(&report, "level search", "65536")[0] > 0, "{extra:?}: {report}");
    }
}

/// bwa pops every entry in the order its ancestry alone gives (dev/src/pop_order.rs;
/// docs/gpu-search.md, "A way to bwa's order without bwa's search"), and the read's candidate
/// paths replayed in that order give bwa's hits (dev/src/replay.rs): with bwa's defaults and
/// with ancient DNA's options.
#[test]
fn bwa_pops_every_entry_in_the_order_its_ancestry_gives() {
    let checks = ["--check-pop-order", "--check-replay"];
    let adna: &[&str] = &[checks[0], checks[1], "-l", "1024", "-n", "0.01", "-o", "2"];
    for report in ecoli_profiles("65536", "32", &[&checks, adna]) {
        assert!(report.contains("pop order: 0 of bwa's pops out of the order their ancestries give"), "{report}");
        let replay = report.split("replay: ").nth(1).unwrap_or_else(|| panic!("no replay line in:\n{report}"));
        assert!(replay.starts_with("20000 reads gave bwa's hits, 0 did not, 0 not replayed"), "{report}");
    }
}

/// Each read's alignments within a score budget (src/search/pigeonhole.rs), their paths replayed
/// in bwa's order (dev/src/replay.rs), give bwa's hits on every read they answer (`bcuda-dev
/// candidates` fails on any other): with bwa's defaults and ancient DNA's options, mismatches
/// only with and without a first pass of bwa's search, and with gaps. The tool also fails where
/// bwa's search filtered by the paths' tree (src/search/replay.rs, the GPU's form) steps other
/// entries or finds other hits than the sorted replay.
#[test]
fn candidate_strings_replayed_in_bwas_order_give_bwas_hits() {
    let dir = tempfile::tempdir().unwrap();
    let fasta = ecoli_index(&dir);
    let reads = data("ecoli536_art.fq");
    let adna: &[&str] = &["-l", "1024", "-n", "0.01", "-o", "2"];
    for options in [&[][..], adna] {
        for (first_pops, gaps) in [("0", &[][..]), ("64", &[]), ("0", &["--gaps", "--most-score", "15"])] {
            let mut args = vec!["candidates", "--max-reads", "20000", "--first-pops", first_pops];
            args.extend(gaps);
            args.extend(options);
            args.extend([fasta.as_str(), reads.to_str().unwrap()]);
            let report = String::from_utf8(bcuda_dev(&args)).unwrap();
            assert!(report.contains("every read the candidates answered has bwa's hits (0 not compared"), "{report}");
            let all = report.lines().find(|l| l.starts_with("all\t")).unwrap_or_else(|| panic!("{report}"));
            // reads, bwa's pops, bwa's search alone, answered by candidates
            let count = |c: usize| all.split('\t').nth(c).unwrap().parse::<u64>().unwrap();
            assert_eq!(count(1), 20000, "{report}");
            assert!(
                count(4) > 1000,
                "{options:?} {first_pops} {gaps:?}: the candidates answered {} reads:\n{report}",
                count(4)
            );
        }
    }
}

/// bwa's search started with the difference bound its first hit sets (`g = min(d* + 1,
/// max_diff)`) pops a subsequence of bwa's pops and finds bwa's hits, in bwa's order (`bcuda-dev
/// prune-bound`; docs/gpu-search.md, "Bounded from the start by the first hit"): with bwa's
/// defaults and with ancient DNA's options, on E. coli's ART reads. So does a speculative ladder
/// (g = 1 for reads that occur whole, else 2, then 3, then bwa's full search) wherever it
/// accepts a guess. The `-m` guard's bound (src/search/m_guard.rs) holds bwa's stack on every
/// read, and every read it proves has bwa's hits.
#[test]
fn the_first_hits_bound_from_the_start_gives_bwas_hits() {
    let dir = tempfile::tempdir().unwrap();
    let fasta = ecoli_index(&dir);
    let reads = data("ecoli536_art.fq");
    // With a small -m the guard must still never let bwa's stack pass its bound.
    for extra in [&[][..], &["-l", "1024", "-n", "0.01", "-o", "2"][..], &["-m", "2000"][..]] {
        let mut args =
            vec!["prune-bound", "--check-order", "--max-reads", "20000", "--ladder", "2,3", "--ladder", "2,3,4"];
        args.extend(extra);
        args.extend([fasta.as_str(), reads.to_str().unwrap()]);
        let report = String::from_utf8(bcuda_dev(&args)).unwrap();
        assert!(report.contains("reads whose hits differ: 0"), "{report}");
        assert!(report.contains("not a subsequence of bwa's pops: 0"), "{report}");
        assert!(report.contains("accepted guess found other hits than bwa's: 0"), "{report}");
        assert!(report.contains("reads whose bwa stack passed the guard's bound: 0"), "{report}");
        assert!(report.contains("the guard proves whose pruned hits differ from bwa's: 0"), "{report}");
        let all = report.lines().find(|l| l.starts_with("all\t")).unwrap_or_else(|| panic!("no totals in:\n{report}"));
        let pops: Vec<u64> = all.split('\t').skip(2).take(3).map(|x| x.parse().unwrap()).collect();
        assert!(pops[2] < pops[0], "the bound spares no pops:\n{report}");
    }
}
