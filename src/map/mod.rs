//! `bcuda map`: reads to SAM or BAM in one command, `aln` of each end then `samse` or `sampe`,
//! the .sai passed in memory (`pipe`) while it is written, so that the SAM work overlaps the
//! alignment. The records are those of `bwa aln` + `bwa samse`/`sampe` with the same
//! options (`--aln`, `--samse`, `--sampe` pass them through), or with `--sort`, those of
//! `samtools sort` of them.

mod options;
mod pipe;

use std::io::{self, BufReader, Read, Write};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use bcuda_index::Index;
use bcuda_output::Output;

use crate::default_index::IndexChoice;
use crate::sai::SaiReader;
use crate::sam::format::Format;
use crate::sam::program;
use crate::sam::sink::{read_group, Sink};
use pipe::{PipeReader, PipeWriter};

#[derive(clap::Args, Debug)]
#[command(override_usage = "bcuda map [OPTIONS] [INDEX] <READS> [READS2]")]
pub struct MapArgs {
    /// [INDEX] READS [READS2]: the index prefix (left out: the default index), the reads
    /// (FASTQ or FASTA, plain or gzip), and for pairs the second end's reads.
    #[arg(value_name = "ARGS", num_args = 1..=3, required = true)]
    pub inputs: Vec<PathBuf>,
    /// Output file: BAM when it ends in .bam (any case), else SAM [stdout, SAM]; written whole
    /// or not at all.
    #[arg(short = 'o')]
    pub output: Option<PathBuf>,
    /// Read group header line such as '@RG\tID:foo\tSM:bar' (bwa's -r).
    #[arg(short = 'R', value_name = "LINE")]
    pub read_group: Option<String>,
    /// Coordinate order, as samtools sort, with the index beside the BAM (NAME.bam.bai, or
    /// .csi for references over 2^29 bases); needs -o NAME.bam.
    #[arg(long)]
    pub sort: bool,
    /// MiB of records held in memory while sorting; beyond, sorted runs go to temporary
    /// files (in TMPDIR) and are merged.
    #[arg(long, value_name = "MIB", default_value_t = 768, value_parser = crate::option_values::positive_count)]
    pub sort_memory: usize,
    /// Also write the .sai: PREFIX.sai, or PREFIX_1.sai and PREFIX_2.sai for pairs.
    #[arg(long, value_name = "PREFIX")]
    pub sai: Option<PathBuf>,
    /// Threads for aln's CPU work, samse/sampe and BAM compression [all cores] (aln's own
    /// -t in --aln wins for aln).
    #[arg(short = 't', value_parser = crate::option_values::positive_count)]
    pub threads: Option<usize>,
    /// aln's options, as one argument: --aln '-l 1024 -n 0.01 -o 2' (and --cpu, --gpus).
    #[arg(long, value_name = "OPTIONS", allow_hyphen_values = true, default_value = "")]
    pub aln: String,
    /// samse's options for single reads, as one argument: --samse '-n 5'.
    #[arg(long, value_name = "OPTIONS", allow_hyphen_values = true, default_value = "")]
    pub samse: String,
    /// sampe's options for pairs, as one argument: --sampe '-a 600 -o 1000'.
    #[arg(long, value_name = "OPTIONS", allow_hyphen_values = true, default_value = "")]
    pub sampe: String,
    /// No progress nor summary on stderr.
    #[arg(long)]
    pub quiet: bool,
}

/// `[INDEX] READS [READS2]`: with two arguments, the first is the index when it has index files.
fn split_inputs(args: &[PathBuf]) -> Result<(IndexChoice, Vec<PathBuf>)> {
    let pairs = args.len() == 3 || (args.len() == 2 && !crate::default_index::is_index(&args[0]));
    let names: &[&str] = if pairs { &["reads_1.fq", "reads_2.fq"] } else { &["reads.fq"] };
    crate::default_index::split_positional("map", args, names)
}

pub fn run(args: MapArgs) -> Result<()> {
    let summary = crate::summary::Summary::start("map");
    let (choice, reads) = split_inputs(&args.inputs)?;
    choice.announce("map", args.quiet);
    if let Some(stdin) = reads.iter().find(|r| crate::input::is_stdin(r)) {
        bail!(
            "map: reads from standard input ('{}') are not supported: both aln and samse/sampe read them; give a file",
            stdin.display()
        );
    }
    let format = match (&args.output, args.sort) {
        (None, true) => bail!("--sort needs an output file: -o NAME.bam"),
        (Some(path), true) if Format::from_name(path)? != Format::Bam => {
            bail!("--sort writes BAM: -o {} should end in .bam", path.display())
        }
        (Some(path), _) => Format::from_name(path)?,
        (None, false) => Format::Sam,
    };
    let threads = crate::threads::capped(
        "map",
        args.threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())),
        args.quiet,
    );
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build()?;
    let count = pool.install(|| map(&args, &choice, &reads, format))?;
    summary.print(Some(&choice.prefix), count, if reads.len() == 2 { "pairs" } else { "reads" }, args.quiet);
    Ok(())
}

/// Aligns, writes the records and commits every file; returns the reads (or pairs).
fn map(args: &MapArgs, choice: &IndexChoice, reads: &[PathBuf], format: Format) -> Result<u64> {
    let aln = options::aln(args, choice, reads)?;
    let rg = args.read_group.as_deref().map(read_group).transpose()?;
    let index = Index::load(&choice.prefix, true)?;
    let rg_line = rg.as_ref().map(|(line, _)| line.as_str());
    let pg = program::pg_line(choice);
    let mut sink = match args.sort {
        true => Sink::create_sorted(
            args.output.as_deref().expect("checked"),
            &index.refs,
            rg_line,
            &pg,
            args.sort_memory << 20,
        )?,
        false => Sink::create(args.output.as_deref(), format, &index.refs, rg_line, &pg)?,
    };
    let (mut outs, mut ins) = (Vec::new(), Vec::new());
    for (end, path) in sai_paths(args.sai.as_deref(), reads.len()).into_iter().enumerate() {
        let (writer, reader) = pipe::pipe();
        let file =
            path.map(|p| Output::create(Some(&p)).with_context(|| format!("--sai: {}", p.display()))).transpose()?;
        outs.push(SaiOut { pipe: Some(writer), file });
        ins.push((reader, format!("the .sai of {} (in memory)", reads[end].display())));
    }
    let rg_id = rg.as_ref().map(|(_, id)| id.as_str());
    let (aligned, written) = std::thread::scope(|s| {
        let aligner = s.spawn(|| -> Result<Vec<Option<Output>>> {
            let ends: Vec<Vec<PathBuf>> = reads.iter().map(|end| vec![end.clone()]).collect();
            let (outs, _) = crate::aln::align(&aln, &choice.prefix, &ends, outs)?;
            // The pipes close here: the SAM side sees the .sai end.
            Ok(outs.into_iter().map(SaiOut::into_file).collect())
        });
        let written = write_records(args, rg_id, &index, ins, reads, &mut sink);
        (aligner.join().map_err(|_| anyhow::anyhow!("the aligner panicked")).and_then(|r| r), written)
    });
    // When the SAM side stops first, the aligner's error is only that it could not pass on
    // its .sai; otherwise the aligner's error explains the SAM side's (a .sai cut short).
    let (sai_files, count) = match (aligned, written) {
        (Err(e), Err(sam)) if is_broken_pipe(&e) => return Err(sam),
        (Err(e), _) => return Err(e),
        (Ok(_), Err(sam)) => return Err(sam),
        (Ok(files), Ok(count)) => (files, count),
    };
    for file in sai_files.into_iter().flatten() {
        file.commit().context("writing the .sai")?;
    }
    sink.commit()?;
    Ok(count)
}

/// The SAM side: samse for one reads file, sampe for two; returns the reads (or pairs).
fn write_records(
    args: &MapArgs,
    rg_id: Option<&str>,
    index: &Index,
    ins: Vec<(PipeReader, String)>,
    reads: &[PathBuf],
    sink: &mut Sink,
) -> Result<u64> {
    let names: Vec<PathBuf> = ins.iter().map(|(_, name)| PathBuf::from(name)).collect();
    let mut sai = ins
        .into_iter()
        .map(|(reader, name)| {
            let input: Box<dyn Read + Send> = Box::new(reader);
            SaiReader::new(BufReader::with_capacity(1 << 20, input)).map_err(|e| anyhow::anyhow!("{name}: {e}"))
        })
        .collect::<Result<Vec<_>>>()?;
    if let [single] = sai.as_mut_slice() {
        let samse = options::samse(args)?;
        return crate::samse::write_records(samse.max_xa, rg_id, index, single, &names[0], &reads[0], sink, args.quiet);
    }
    let sampe = options::sampe(args)?;
    let [s0, s1]: [SaiReader<_>; 2] = sai.try_into().map_err(|_| anyhow::anyhow!("two .sai for a pair"))?;
    let files = crate::sampe::PairFiles { sai: [&names[0], &names[1]], reads: [&reads[0], &reads[1]] };
    crate::sampe::write_records(&sampe.args, sampe.max_occ, rg_id, index, &mut [s0, s1], files, sink)
}

/// The .sai files `--sai PREFIX` asks for, one per reads file (`None` each without it).
fn sai_paths(prefix: Option<&Path>, ends: usize) -> Vec<Option<PathBuf>> {
    let named = |suffix: &str| {
        prefix.map(|p| {
            let mut name = p.as_os_str().to_owned();
            name.push(suffix);
            PathBuf::from(name)
        })
    };
    match ends {
        1 => vec![named(".sai")],
        _ => vec![named("_1.sai"), named("_2.sai")],
    }
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| c.downcast_ref::<io::Error>().is_some_and(|io| io.kind() == io::ErrorKind::BrokenPipe))
}

/// One end's .sai: into memory for the SAM side, and into a file with `--sai`.
struct SaiOut {
    pipe: Option<PipeWriter>,
    file: Option<Output>,
}

impl SaiOut {
    /// Closes the pipe; the file is left to commit.
    fn into_file(mut self) -> Option<Output> {
        self.pipe.take();
        self.file.take()
    }
}

impl Write for SaiOut {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        if let Some(pipe) = &mut self.pipe {
            pipe.write_all(data)?;
        }
        if let Some(file) = &mut self.file {
            file.write_all(data)?;
        }
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.pipe.as_mut().map_or(Ok(()), |p| p.flush())?;
        self.file.as_mut().map_or(Ok(()), |f| f.flush())
    }
}
