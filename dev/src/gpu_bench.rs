//! `bcuda-dev gpu-bench`: times the exact_match kernel alone (GPU events) on real reads and checks
//! every interval against the CPU's backward search.

use std::path::PathBuf;

use anyhow::{bail, Result};

use bcuda::reads::{ReadBatch, ReadBatchReader, ReadOptions};

#[derive(clap::Args, Debug)]
pub struct GpuBenchArgs {
    pub prefix: PathBuf,
    pub reads: PathBuf,
    /// Reads per launch.
    #[arg(long, default_value_t = 159_744)]
    pub batch_size: usize,
    /// Timed repeats of each launch (after one warm-up).
    #[arg(long, default_value_t = 5)]
    pub repeats: usize,
    /// A kernel switch, `name=value` (repeatable), e.g. `--switch cache_threads=4`.
    #[arg(long = "switch")]
    pub switches: Vec<String>,
    /// The GPU to run on (its CUDA ordinal).
    #[arg(long, default_value_t = 0)]
    pub gpu_id: usize,
}

/// The kernel's contract on the CPU: backward search of the read's reverse complement, from
/// the read's first base; `(0, 0)` if it reaches an N, `None` if the interval empties first.
pub(crate) fn exact_search(bwt: &bcuda_index::Bwt, read: &[u8]) -> Option<(u64, u64)> {
    let l2 = bwt.l2();
    let (mut k, mut l) = (0u64, bwt.seq_len());
    for &b in read {
        if b > 3 {
            return Some((0, 0));
        }
        let c = 3 - b;
        let (ok, ol) = bwt.occ_pair(k.wrapping_sub(1), l, c);
        k = l2[c as usize] + ok + 1;
        l = l2[c as usize] + ol;
        if k > l {
            return None;
        }
    }
    Some((k, l))
}

pub fn run(args: GpuBenchArgs) -> Result<()> {
    let bwt = bcuda_index::Bwt::load(&bcuda_index::with_ext(&args.prefix, ".bwt"))?;
    let mut switches = bcuda::gpu::Switches::default();
    for s in &args.switches {
        switches.set(s).map_err(|e| anyhow::anyhow!("--switch {e}"))?;
    }
    let mut gpu = bcuda::gpu::GpuAligner::new(&bwt, switches.clone(), args.gpu_id)?;
    let mut reader = ReadBatchReader::open(&args.reads, ReadOptions::default())?;
    let (mut reads_timed, mut ms_total, mut mismatches, mut exact) = (0u64, 0f64, 0u64, 0u64);
    // Reads that match exactly walk all their bases: the kernel's worst case, timed apart.
    let mut matching = ReadBatch::default();
    loop {
        let batch = reader.next_batch(args.batch_size)?;
        if batch.is_empty() {
            break;
        }
        let (k, l, _) = gpu.exact_match(&batch)?;
        for (i, read) in batch.iter().enumerate() {
            let cpu = exact_search(&bwt, read.aligned());
            let gpu_kl = (k[i], l[i]);
            let same = match cpu {
                Some(kl) => kl == gpu_kl,
                None => gpu_kl.0 > gpu_kl.1,
            };
            mismatches += !same as u64;
            let matches = matches!(cpu, Some((a, b)) if a <= b && !(a == 0 && b == 0));
            exact += matches as u64;
            if matches {
                matching.extend_from(&batch, i..i + 1);
            }
        }
        for _ in 0..args.repeats {
            let (_, _, ms) = gpu.exact_match(&batch)?;
            ms_total += ms as f64;
            reads_timed += batch.len() as u64;
        }
    }
    let (mut matching_timed, mut matching_ms) = (0u64, 0f64);
    for first in (0..matching.len()).step_by(args.batch_size.max(1)) {
        let mut chunk = ReadBatch::default();
        chunk.extend_from(&matching, first..matching.len().min(first + args.batch_size));
        gpu.exact_match(&chunk)?;
        for _ in 0..args.repeats {
            matching_ms += gpu.exact_match(&chunk)?.2 as f64;
            matching_timed += chunk.len() as u64;
        }
    }
    println!("device\t{}", gpu.device_name);
    println!("switches\t{}", if args.switches.is_empty() { "defaults".to_string() } else { args.switches.join(" ") });
    println!("exact_match reads/s (kernel, GPU events)\t{:.0}", reads_timed as f64 / (ms_total / 1000.0));
    println!("reads matching exactly\t{exact}");
    if matching_timed > 0 {
        println!(
            "exact_match reads/s, exactly matching reads only\t{:.0}",
            matching_timed as f64 / (matching_ms / 1000.0)
        );
    }
    println!("intervals differing from the CPU\t{mismatches}");
    if mismatches > 0 {
        bail!("{mismatches} exact_match intervals differ from the CPU");
    }
    Ok(())
}
