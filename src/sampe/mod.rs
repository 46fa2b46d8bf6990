//! `bcuda sampe`: two .sai files of paired reads to SAM/BAM, as `bwa sampe` 0.7.17 writes it
//! (same records apart from the @PG line). Per batch of 0x40000 pairs, as bwa: each end's hit
//! is chosen and placed as in samse (`crate::sam`), the insert size is estimated
//! (`insert_size`), the ends are paired (`pairing`), unpaired mates are searched near their
//! mapped end (`mate_rescue`, with `local_sw`), and both ends are refined and printed.

mod cmath;
mod insert_size;
mod local_sw;
mod mate_rescue;
mod pairing;

use std::io::Read;
use std::path::{Path, PathBuf};

use anyhow::{bail, Result};
use bcuda_index::rand48::Rand48;
use bcuda_index::Index;
use rayon::prelude::*;

use crate::progress::{note, Progress};
use crate::reads::{ReadBatch, ReadBatchReader, ReadOptions, ReadRef};
use crate::sai::{AlnHit, GapOptions, SaiReader, MODE_IL13};
use crate::sam::format::Format;
use crate::sam::hits::{self, Placement};
use crate::sam::record::{self, Mate, FLAG_PAIRED, FLAG_READ1, FLAG_READ2};
use crate::sam::sink::{read_group, Sink};
use crate::sam::{program, refine};
use insert_size::{EndSummary, Failure, InsertSize};
use mate_rescue::RescueCounts;
use pairing::{End, PairingOptions};

#[derive(clap::Args, Debug)]
#[command(override_usage = "bcuda sampe [OPTIONS] [INDEX] <SAI1> <SAI2> <READS1> <READS2>")]
pub struct SampeArgs {
    /// [INDEX] SAI1 SAI2 READS1 READS2: the index prefix (the FASTA given to `index`; left
    /// out: the default index), the .sai of each end, and the reads of each end (the second
    /// file's reads in the same order as the first's).
    #[arg(value_name = "ARGS", num_args = 4..=5, required = true)]
    pub inputs: Vec<PathBuf>,
    /// Maximum insert size, used when none can be estimated.
    #[arg(short = 'a', default_value_t = 500, allow_negative_numbers = true, value_parser = crate::option_values::at_least_0)]
    pub max_isize: i32,
    /// bwa's -o INT: maximum occurrences of one end for pairing [100000]. A value that is not
    /// a number is an output file instead, as for samse (BAM when it ends in .bam, any case).
    #[arg(short = 'o', value_name = "INT|FILE", allow_negative_numbers = true)]
    pub o: Option<String>,
    /// Maximum hits to output for paired reads.
    #[arg(short = 'n', default_value_t = 3, allow_negative_numbers = true, value_parser = crate::option_values::count)]
    pub n_multi: usize,
    /// Maximum hits to output for discordant pairs.
    #[arg(short = 'N', default_value_t = 10, allow_negative_numbers = true, value_parser = crate::option_values::count)]
    pub n_multi_discordant: usize,
    /// Prior of chimeric rate (lower bound).
    #[arg(short = 'c', default_value_t = 1e-5, allow_hyphen_values = true, value_parser = crate::option_values::probability)]
    pub ap_prior: f64,
    /// Read group header line such as '@RG\tID:foo\tSM:bar'.
    #[arg(short = 'r')]
    pub read_group: Option<String>,
    /// Preload the index (accepted for bwa compatibility: the index is memory-mapped).
    #[arg(short = 'P')]
    pub preload: bool,
    /// Disable Smith-Waterman for the unmapped mate.
    #[arg(short = 's')]
    pub no_sw: bool,
    /// Disable insert size estimation (also disables Smith-Waterman).
    #[arg(short = 'A')]
    pub no_isize: bool,
    /// SAM output file (as bwa's -f) [stdout].
    #[arg(short = 'f')]
    pub sam_file: Option<PathBuf>,
    /// Threads [all cores; at most all cores].
    #[arg(short = 't', allow_negative_numbers = true, value_parser = crate::option_values::positive_count)]
    pub threads: Option<usize>,
    /// No progress on stderr.
    #[arg(long)]
    pub quiet: bool,
}

/// bwa's default -o.
const DEFAULT_MAX_OCC: i64 = 100_000;
/// Pairs per batch: bwa sampe's (0x40000).
const BATCH: usize = 0x40000;

/// `-o` split into bwa's max occurrences and an output file.
pub fn max_occ_and_output(args: &SampeArgs) -> Result<(i64, Option<PathBuf>)> {
    match &args.o {
        None => Ok((DEFAULT_MAX_OCC, args.sam_file.clone())),
        Some(v) => match v.parse::<i64>() {
            Ok(n) if n < 0 => bail!("-o {v}: the maximum occurrences for pairing must be an integer of at least 0"),
            Ok(n) => Ok((n, args.sam_file.clone())),
            Err(_) if args.sam_file.is_some() => bail!("-o {v} and -f: give one output file"),
            Err(_) => Ok((DEFAULT_MAX_OCC, Some(PathBuf::from(v)))),
        },
    }
}

fn read_options(opt: &GapOptions) -> ReadOptions {
    ReadOptions { trim_qual: opt.trim_qual, illumina13: opt.mode & MODE_IL13 != 0, sequence_only: false }
}

/// The two ends of a batch must be the same pairs: same names, same count (names first: a
/// file out of step shows there first).
fn check_mates(b0: &ReadBatch, b1: &ReadBatch, first: u64, reads_paths: [&Path; 2]) -> Result<()> {
    if let Some(i) = (0..b0.len().min(b1.len())).find(|&i| b0.get(i).name != b1.get(i).name) {
        bail!(
            "{} read {} ('{}') and {} read {} ('{}') have different names: the two files are not pairs",
            reads_paths[0].display(),
            first + i as u64,
            b0.get(i).name,
            reads_paths[1].display(),
            first + i as u64,
            b1.get(i).name
        );
    }
    if b0.len() != b1.len() {
        let (short, long, n) = if b0.len() < b1.len() {
            (reads_paths[0], reads_paths[1], b0.len())
        } else {
            (reads_paths[1], reads_paths[0], b1.len())
        };
        bail!(
            "{} ends after read {} but {} has more reads: the two files are not pairs",
            short.display(),
            first + n as u64 - 1,
            long.display()
        );
    }
    Ok(())
}

/// Why two files that were pairs may no longer be: records with an empty sequence, which
/// bwa skips in each file on its own (bwa sampe then pairs the wrong reads and stops at
/// their names), so a pair with one empty mate puts the files out of step.
fn empty_mates_note(readers: &[ReadBatchReader; 2], reads_paths: [&Path; 2]) -> Option<String> {
    let (j, empty) = (0..2).map(|j| (j, readers[j].empty_reads())).find(|(_, e)| e.count > 0)?;
    let (record, name) = empty.first.as_ref()?;
    let records = if empty.count == 1 { "1 record".to_string() } else { format!("{} records", empty.count) };
    Some(format!(
        "{}: {records} with an empty sequence skipped as bwa skips them, the first record {record} ('{name}'); a pair with one empty mate puts the two files out of step: drop such pairs from both files, e.g. with cutadapt --minimum-length 1",
        reads_paths[j].display()
    ))
}

fn failure_text(f: Failure) -> &'static str {
    match f {
        Failure::TooFewPairs => "too few good pairs",
        Failure::BoundsBelowReadLength => "upper bound is smaller than read length",
        Failure::WeirdPairing => "weird pairing",
    }
}

pub fn run(args: SampeArgs) -> Result<()> {
    match args.threads {
        Some(t) => rayon::ThreadPoolBuilder::new()
            .num_threads(crate::threads::capped("sampe", t, args.quiet))
            .build()?
            .install(|| run_in_pool(&args)),
        None => run_in_pool(&args),
    }
}

fn run_in_pool(args: &SampeArgs) -> Result<()> {
    let summary = crate::summary::Summary::start("sampe");
    let (max_occ, out_path) = max_occ_and_output(args)?;
    // `-f` is bwa's: SAM whatever the name.
    let format = match (&out_path, &args.sam_file) {
        (Some(path), None) => Format::from_name(path)?,
        _ => Format::Sam,
    };
    let (choice, inputs) =
        crate::default_index::split_positional("sampe", &args.inputs, &["a.sai", "b.sai", "a.fq", "b.fq"])?;
    choice.announce("sampe", args.quiet);
    crate::input::at_most_one_stdin(&[
        ("SAI1", &inputs[0]),
        ("SAI2", &inputs[1]),
        ("READS1", &inputs[2]),
        ("READS2", &inputs[3]),
    ])?;
    let index = Index::load(&choice.prefix, true)?;
    let mut sai = [crate::sai::open(&inputs[0])?, crate::sai::open(&inputs[1])?];
    let rg = args.read_group.as_deref().map(read_group).transpose()?;
    let mut sink = Sink::create(
        out_path.as_deref(),
        format,
        &index.refs,
        rg.as_ref().map(|(line, _)| line.as_str()),
        &program::pg_line(&choice),
    )?;
    let files = PairFiles { sai: [&inputs[0], &inputs[1]], reads: [&inputs[2], &inputs[3]] };
    let rg_id = rg.as_ref().map(|(_, id)| id.as_str());
    let pairs = write_records(args, max_occ, rg_id, &index, &mut sai, files, &mut sink)?;
    sink.commit()?;
    summary.print(Some(&choice.prefix), pairs, "pairs", args.quiet);
    Ok(())
}

/// The files of a paired run: each end's .sai (named in messages) and reads.
#[derive(Clone, Copy)]
pub struct PairFiles<'a> {
    pub sai: [&'a Path; 2],
    pub reads: [&'a Path; 2],
}

/// The SAM records of the pairs of `files` from their hits in `sai`, into `sink` (with
/// `args`'s pairing options but `max_occ` for its -o, and `rg_id` as their read group);
/// returns the pairs.
pub fn write_records<R: Read>(
    args: &SampeArgs,
    max_occ: i64,
    rg_id: Option<&str>,
    index: &Index,
    sai: &mut [SaiReader<R>; 2],
    files: PairFiles,
    sink: &mut Sink,
) -> Result<u64> {
    // Messages name `-` as standard input.
    let names = [files.sai[0], files.sai[1], files.reads[0], files.reads[1]].map(crate::input::display_name);
    let sai_paths = [names[0].as_path(), names[1].as_path()];
    let reads_paths = [names[2].as_path(), names[3].as_path()];
    // As bwa: each file is read with its own .sai's options; all else uses the second's.
    let opt = sai[1].options;
    let mut readers: [ReadBatchReader; 2] = [
        ReadBatchReader::open(files.reads[0], read_options(&sai[0].options))?,
        ReadBatchReader::open(files.reads[1], read_options(&opt))?,
    ];

    let popt = PairingOptions {
        max_isize: args.max_isize,
        max_occ,
        n_multi: args.n_multi,
        n_multi_discordant: args.n_multi_discordant,
        s_mm: opt.s_mm,
    };
    let mut rng = Rand48::new(index.refs.seed() as i64);
    let seq_len = index.bwt.seq_len();
    let l_pac = index.refs.l_pac();
    let mut last_ii = InsertSize::UNKNOWN;
    let mut totals = RescueCounts::default();
    let mut isize_notes = Vec::new();
    let progress = Progress::new("pairs", Some(readers[0].position().1), args.quiet);
    let (mut b0, mut b1) = (ReadBatch::default(), ReadBatch::default());
    loop {
        let first = readers[0].reads() + 1;
        let [r0, r1] = &mut readers;
        let (done0, done1) = rayon::join(|| r0.next_batch_into(&mut b0, BATCH), || r1.next_batch_into(&mut b1, BATCH));
        done0?;
        done1?;
        check_mates(&b0, &b1, first, reads_paths).map_err(|e| match empty_mates_note(&readers, reads_paths) {
            Some(note) => anyhow::anyhow!("{e:#} ({note})"),
            None => e,
        })?;
        if b0.is_empty() {
            break;
        }
        let batch = [&b0, &b1];

        // Hits and the random choice among the best, in bwa's order (read by read, end by end).
        let mut pair_hits: Vec<[Vec<AlnHit>; 2]> = Vec::with_capacity(b0.len());
        let mut places = Vec::with_capacity(b0.len());
        for (i, (read0, read1)) in b0.iter().zip(b1.iter()).enumerate() {
            let record = first + i as u64;
            let mut h: [Vec<AlnHit>; 2] = Default::default();
            for (j, read) in [read0, read1].into_iter().enumerate() {
                h[j] = hits::next_read_hits(&mut sai[j], sai_paths[j], &read, record, reads_paths[j], seq_len)?;
            }
            places.push([hits::choose(&h[0], &mut rng, 0), hits::choose(&h[1], &mut rng, 0)]);
            pair_hits.push(h);
        }
        let main_text_pos = place_ends(&mut places, batch, index, &opt);
        let ii = batch_insert_size(&places, batch, first, args, l_pac, last_ii, &mut isize_notes);
        let pairing = Pairing { index, ii: &ii, popt: &popt, opt: &opt, rg_id, sw: !args.no_sw && ii.is_known() };
        let ticker = progress.batch(b0.len(), readers[0].position().0);
        let (lines, counts): (Vec<String>, Vec<RescueCounts>) = places
            .into_par_iter()
            .zip(pair_hits.par_iter().zip(main_text_pos))
            .zip(b0.par_iter().zip(b1.par_iter()))
            .with_min_len(128)
            .map(|((pl, (h, tp)), (r0, r1))| {
                let paired = pairing.pair_and_format(pl, h, tp, [&r0, &r1]);
                ticker.tick();
                paired
            })
            .unzip();
        totals = counts.into_iter().fold(totals, |a, b| a + b);
        // Line by line: one string of the whole batch would be a fresh allocation (and page
        // faults) every batch.
        for text in &lines {
            sink.write_lines(text)?;
        }
        progress.advance(b0.len() as u64, Some(readers[0].position().0));
        last_ii = ii;
    }
    for j in 0..2 {
        hits::check_sai_end(&mut sai[j], sai_paths[j], readers[j].reads(), reads_paths[j])?;
    }
    progress.finish();
    if !args.quiet {
        for line in &isize_notes {
            note(&format!("[bcuda sampe] {line}"));
        }
        note(&format!(
            "[bcuda sampe] mate rescue: {} of {} singletons mated, {} of {} discordant pairs fixed",
            totals.rescued[1], totals.tried[1], totals.rescued[0], totals.tried[0]
        ));
    }
    Ok(readers[0].reads())
}

/// Places each end's chosen hit (flags, position, strand, mapping quality) as samse does;
/// returns the text positions of the chosen hits' SA rows (each lookup is kept for pairing).
fn place_ends(
    places: &mut [[Placement; 2]],
    batch: [&ReadBatch; 2],
    index: &Index,
    opt: &GapOptions,
) -> Vec<[Option<u64>; 2]> {
    let sa = index.sa.as_ref().expect("sampe loads the SA");
    let l_pac = index.refs.l_pac();
    places
        .par_iter_mut()
        .enumerate()
        .with_min_len(256)
        .map(|(i, pl)| {
            [0, 1].map(|j| {
                let p = &mut pl[j];
                p.flags = FLAG_PAIRED | if j == 0 { FLAG_READ1 } else { FLAG_READ2 };
                let text_pos = p.kind.is_mapped().then(|| sa.position(&index.bwt, p.sa));
                hits::place_main(p, |_| text_pos.expect("mapped"), l_pac, batch[j].get(i).len, opt.max_diff, opt.fnr);
                text_pos
            })
        })
        .collect()
}

/// The batch's insert size as bwa infers it from the placed ends (the last batch's when this
/// one gives none; none at all with `-s`); a batch without an estimate adds a note.
fn batch_insert_size(
    places: &[[Placement; 2]],
    batch: [&ReadBatch; 2],
    first: u64,
    args: &SampeArgs,
    l_pac: u64,
    last_ii: InsertSize,
    notes: &mut Vec<String>,
) -> InsertSize {
    let summaries = places.iter().enumerate().map(|(i, pl)| {
        [0, 1].map(|j| EndSummary { pos: pl[j].pos, len: batch[j].get(i).len as u64, mapq: pl[j].mapq })
    });
    let (mut ii, result) = insert_size::infer(summaries, args.ap_prior, l_pac as i64);
    if let Err(f) = result {
        notes.push(format!(
            "pairs {first}-{}: no insert size estimate ({})",
            first + batch[0].len() as u64 - 1,
            failure_text(f)
        ));
    }
    if ii.avg < 0.0 && last_ii.avg > 0.0 {
        ii = last_ii;
    }
    if args.no_isize {
        ii.low = 0;
        ii.high = 0;
        ii.avg = -1.0;
        ii.std = -1.0;
    }
    ii
}

/// What pairing the ends of a batch takes: the index, the batch's insert size, the options and
/// whether unpaired mates are searched for (mate rescue).
struct Pairing<'a> {
    index: &'a Index,
    ii: &'a InsertSize,
    popt: &'a PairingOptions,
    opt: &'a GapOptions,
    rg_id: Option<&'a str>,
    sw: bool,
}

impl Pairing<'_> {
    /// Pairs the two ends of one read pair, rescues an unpaired mate, refines both ends and
    /// formats their two records.
    fn pair_and_format(
        &self,
        pl: [Placement; 2],
        h: &[Vec<AlnHit>; 2],
        tp: [Option<u64>; 2],
        [r0, r1]: [&ReadRef<'_>; 2],
    ) -> (String, RescueCounts) {
        let (index, ii) = (self.index, self.ii);
        let sa = index.sa.as_ref().expect("sampe loads the SA");
        let (pac, l_pac) = (index.refs.pac(), index.refs.l_pac());
        let [p0, p1] = pl;
        let mut ends = [
            End { hits: &h[0], place: p0, main_text_pos: tp[0], len: r0.len, full_len: r0.codes.len() },
            End { hits: &h[1], place: p1, main_text_pos: tp[1], len: r1.len, full_len: r1.codes.len() },
        ];
        pairing::pair(&mut ends, ii, self.popt, &index.bwt, sa, l_pac);
        let [e0, e1] = ends;
        let mut pl = [e0.place, e1.place];
        let mut counts = RescueCounts::default();
        let [c0, c1] =
            if self.sw { mate_rescue::rescue(&mut pl, [r0, r1], ii, pac, l_pac, &mut counts) } else { [None, None] };
        let [p0, p1] = pl;
        let a0 = refine::refine(p0, c0, r0, pac, l_pac);
        let a1 = refine::refine(p1, c1, r1, pac, l_pac);
        let mut text = String::with_capacity(4 * (r0.codes.len() + r1.codes.len()) + 512);
        let (opt, rg_id) = (self.opt, self.rg_id);
        record::push_record(
            r0,
            &a0,
            Some(&Mate { aligned: &a1, full_len: r1.codes.len() }),
            &index.refs,
            opt,
            rg_id,
            &mut text,
        );
        record::push_record(
            r1,
            &a1,
            Some(&Mate { aligned: &a0, full_len: r0.codes.len() }),
            &index.refs,
            opt,
            rg_id,
            &mut text,
        );
        (text, counts)
    }
}
