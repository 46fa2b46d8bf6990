//! Times `aln`'s reader alone (`ReadBatchReader`, batches of bwa's 262,144 reads, names and
//! qualities not kept): `cargo run --release --example read_speed -- reads.fq[.gz]`.
use std::path::Path;
use std::time::Instant;

use bcuda::reads::{ReadBatch, ReadBatchReader, ReadOptions};

fn main() -> anyhow::Result<()> {
    let path = std::env::args().nth(1).ok_or_else(|| anyhow::anyhow!("usage: read_speed READS"))?;
    let started = Instant::now();
    let mut reader =
        ReadBatchReader::open(Path::new(&path), ReadOptions { trim_qual: 0, illumina13: false, sequence_only: true })?;
    let (mut reads, mut batch) = (0, ReadBatch::default());
    loop {
        reader.next_batch_into(&mut batch, 262_144)?;
        if batch.is_empty() {
            break;
        }
        reads += batch.len();
    }
    let secs = started.elapsed().as_secs_f64();
    println!("{path}: {reads} reads in {secs:.3} s ({:.0} reads/s)", reads as f64 / secs);
    Ok(())
}
