//! `bcuda samse`: .sai to SAM/BAM, as `bwa samse` 0.7.17 writes it (same records apart from
//! the @PG line). SAM text is formatted here, field for field as bwa prints it; BAM is that
//! text parsed and encoded by noodles. The shared pieces are in `crate::sam`.

use std::io::Read;
use std::path::{Path, PathBuf};

use anyhow::Result;
use bcuda_index::rand48::Rand48;
use bcuda_index::Index;
use rayon::prelude::*;

use crate::progress::Progress;
use crate::reads::{ReadBatch, ReadBatchReader, ReadOptions};
use crate::sai::{SaiReader, MODE_IL13};
use crate::sam::format::Format;
use crate::sam::sink::{read_group, Sink};
use crate::sam::{hits, program, record, refine};

#[derive(clap::Args, Debug)]
#[command(override_usage = "bcuda samse [OPTIONS] [INDEX] <SAI> <READS>")]
pub struct SamseArgs {
    /// [INDEX] SAI READS: the index prefix (the FASTA given to `index`; left out: the default
    /// index), the .sai written by `aln` for these reads, and the reads given to `aln`.
    #[arg(value_name = "ARGS", num_args = 2..=3, required = true)]
    pub inputs: Vec<PathBuf>,
    /// Maximum hits to output in XA for a read.
    #[arg(short = 'n', default_value_t = 3, allow_negative_numbers = true, value_parser = crate::option_values::count)]
    pub max_xa: usize,
    /// Read group header line such as '@RG\tID:foo\tSM:bar'.
    #[arg(short = 'r')]
    pub read_group: Option<String>,
    /// SAM output file (as bwa's -f) [stdout].
    #[arg(short = 'f')]
    pub sam_file: Option<PathBuf>,
    /// Output file: BAM when it ends in .bam (any case), else SAM; written whole or not at all.
    #[arg(short = 'o', conflicts_with = "sam_file")]
    pub output: Option<PathBuf>,
    /// No progress on stderr.
    #[arg(long)]
    pub quiet: bool,
}

/// Reads per batch: bwa samse's (0x40000).
const BATCH: usize = 0x40000;

pub fn run(args: SamseArgs) -> Result<()> {
    let summary = crate::summary::Summary::start("samse");
    let (choice, inputs) = crate::default_index::split_positional("samse", &args.inputs, &["reads.sai", "reads.fq"])?;
    choice.announce("samse", args.quiet);
    crate::input::at_most_one_stdin(&[("SAI", &inputs[0]), ("READS", &inputs[1])])?;
    let (sai_path, reads_path) = (&inputs[0], &inputs[1]);
    // `-f` is bwa's: SAM whatever the name.
    let (out_path, format) = match (&args.output, &args.sam_file) {
        (Some(path), _) => (Some(path.as_path()), Format::from_name(path)?),
        (None, path) => (path.as_deref(), Format::Sam),
    };
    let index = Index::load(&choice.prefix, true)?;
    let mut sai = crate::sai::open(sai_path)?;
    let rg = args.read_group.as_deref().map(read_group).transpose()?;
    let mut sink = Sink::create(
        out_path,
        format,
        &index.refs,
        rg.as_ref().map(|(line, _)| line.as_str()),
        &program::pg_line(&choice),
    )?;
    let reads = write_records(
        args.max_xa,
        rg.as_ref().map(|(_, id)| id.as_str()),
        &index,
        &mut sai,
        sai_path,
        reads_path,
        &mut sink,
        args.quiet,
    )?;
    sink.commit()?;
    summary.print(Some(&choice.prefix), reads, "reads", args.quiet);
    Ok(())
}

/// The SAM records of the reads at `reads_path` from their hits in `sai`, into `sink`, with
/// `rg_id` as their read group and up to `max_xa` hits in XA; returns the reads.
#[allow(clippy::too_many_arguments)] // samse's options, its inputs and their paths (for errors), the sink: each used once
pub fn write_records<R: Read>(
    max_xa: usize,
    rg_id: Option<&str>,
    index: &Index,
    sai: &mut SaiReader<R>,
    sai_path: &Path,
    reads_path: &Path,
    sink: &mut Sink,
    quiet: bool,
) -> Result<u64> {
    let sa = index.sa.as_ref().expect("samse loads the SA");
    // Messages name `-` as standard input.
    let (sai_name, reads_name) = (crate::input::display_name(sai_path), crate::input::display_name(reads_path));
    let opt = sai.options;
    let read_opts =
        ReadOptions { trim_qual: opt.trim_qual, illumina13: opt.mode & MODE_IL13 != 0, sequence_only: false };
    let mut reader = ReadBatchReader::open(reads_path, read_opts)?;
    let mut rng = Rand48::new(index.refs.seed() as i64);
    let seq_len = index.bwt.seq_len();
    let (pac, l_pac) = (index.refs.pac(), index.refs.l_pac());
    let progress = Progress::new("reads", Some(reader.position().1), quiet);
    let mut batch = ReadBatch::default();
    loop {
        reader.next_batch_into(&mut batch, BATCH)?;
        if batch.is_empty() {
            break;
        }
        let mut chosen = Vec::with_capacity(batch.len());
        for (i, read) in batch.iter().enumerate() {
            let record = reader.reads() - batch.len() as u64 + i as u64 + 1;
            let hits = hits::next_read_hits(sai, &sai_name, &read, record, &reads_name, seq_len)?;
            chosen.push(hits::choose(&hits, &mut rng, max_xa));
        }
        let ticker = progress.batch(batch.len(), reader.position().0);
        let lines: Vec<String> = chosen
            .into_par_iter()
            .zip(batch.par_iter())
            .with_min_len(256)
            .map(|(mut place, read)| {
                hits::place_main(
                    &mut place,
                    |row| sa.position(&index.bwt, row),
                    l_pac,
                    read.len,
                    opt.max_diff,
                    opt.fnr,
                );
                hits::place_others(&mut place, |row| sa.position(&index.bwt, row), l_pac, read.len);
                let aligned = refine::refine(place, None, &read, pac, l_pac);
                let mut line = String::with_capacity(2 * read.codes.len() + 128);
                record::push_record(&read, &aligned, None, &index.refs, &opt, rg_id, &mut line);
                ticker.tick();
                line
            })
            .collect();
        // Line by line: one string of the whole batch would be a fresh allocation (and page
        // faults) every batch.
        for text in &lines {
            sink.write_lines(text)?;
        }
        progress.advance(batch.len() as u64, Some(reader.position().0));
    }
    hits::check_sai_end(sai, &sai_name, reader.reads(), &reads_name)?;
    progress.finish();
    Ok(reader.reads())
}
