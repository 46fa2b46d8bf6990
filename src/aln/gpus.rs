//! The GPUs `bcuda aln` aligns on: which ones (`--gpus`), opening them while the index loads,
//! and a GPU as one of the [`dealer`](super::dealer)'s devices.

use std::thread::JoinHandle;

use anyhow::{anyhow, bail, Context, Result};

use super::dealer::{AsyncAligner, Share};
use super::{AlnArgs, Parsed};
use crate::gpu::{driver_present, GpuAligner, InFlight, OpenGpu, Switches};
use crate::sai::AlnHit;

/// `--gpus`: the first N visible GPUs, or a list of ordinals.
#[derive(Clone, Debug, PartialEq)]
pub enum GpuChoice {
    First(usize),
    Ordinals(Vec<usize>),
}

impl std::str::FromStr for GpuChoice {
    type Err = String;

    /// `N` (a count) or `0,2` (ordinals; one ordinal alone: `1,`).
    fn from_str(s: &str) -> Result<GpuChoice, String> {
        if !s.contains(',') {
            return match s.trim().parse::<usize>() {
                Ok(0) => Err("0 GPUs: use --cpu to align without a GPU".into()),
                Ok(n) => Ok(GpuChoice::First(n)),
                Err(_) => Err(format!("{s:?}: expected a number of GPUs (2) or a list of ordinals (0,2 or 1,)")),
            };
        }
        let mut ordinals = Vec::new();
        for o in s.split(',').map(str::trim).filter(|o| !o.is_empty()) {
            let o: usize = o.parse().map_err(|_| format!("{o:?} is not a GPU ordinal"))?;
            if ordinals.contains(&o) {
                return Err(format!("GPU {o} is listed twice"));
            }
            ordinals.push(o);
        }
        if ordinals.is_empty() {
            return Err("no GPU ordinal given".into());
        }
        Ok(GpuChoice::Ordinals(ordinals))
    }
}

impl GpuChoice {
    /// The ordinals chosen among `visible` GPUs (all of them when nothing was chosen).
    pub fn ordinals(choice: Option<&GpuChoice>, visible: usize) -> Result<Vec<usize>> {
        match choice {
            None => Ok((0..visible).collect()),
            Some(GpuChoice::First(n)) if *n > visible => bail!("--gpus {n}: only {visible} GPU(s) visible"),
            Some(GpuChoice::First(n)) => Ok((0..*n).collect()),
            Some(GpuChoice::Ordinals(list)) => match list.iter().find(|&&o| o >= visible) {
                Some(o) => bail!("--gpus: there is no GPU {o} ({visible} visible, numbered from 0)"),
                None => Ok(list.clone()),
            },
        }
    }
}

/// How many GPUs `aln` expects to open, known before CUDA is asked (which takes a while):
/// the `--gpus` choice, else the entries of `CUDA_VISIBLE_DEVICES`, else the GPUs the NVIDIA
/// driver lists in /proc, else one. It sizes only how many batches are read ahead while the
/// GPUs open.
pub fn expected_count(args: &AlnArgs) -> usize {
    let listed = || std::fs::read_dir("/proc/driver/nvidia/gpus").ok().map(|d| d.count());
    expected_from(args.gpus.as_ref(), std::env::var("CUDA_VISIBLE_DEVICES").ok().as_deref(), listed)
}

fn expected_from(
    choice: Option<&GpuChoice>,
    visible_devices: Option<&str>,
    listed: impl FnOnce() -> Option<usize>,
) -> usize {
    let n = match (choice, visible_devices) {
        (Some(GpuChoice::First(n)), _) => *n,
        (Some(GpuChoice::Ordinals(list)), _) => list.len(),
        (None, Some(v)) => v.split(',').filter(|d| !d.trim().is_empty()).count(),
        (None, None) => listed().unwrap_or(1),
    };
    n.max(1)
}

/// What became of each GPU, by ordinal.
type ByOrdinal<T> = Vec<(usize, Result<T>)>;

/// The GPUs being opened (context, kernels), each on its own thread, while the index loads.
/// Dropped unjoined (aln stopped by an error first), it waits for them: a process that exits
/// while a thread is inside CUDA or NVRTC can crash in their teardown.
pub struct Opening(Option<JoinHandle<Result<ByOrdinal<OpenGpu>>>>);

impl Opening {
    fn join(mut self) -> Result<ByOrdinal<OpenGpu>> {
        let thread = self.0.take().expect("joined once");
        thread.join().map_err(|_| anyhow!("opening the GPUs panicked")).and_then(|r| r)
    }
}

impl Drop for Opening {
    fn drop(&mut self) {
        if let Some(thread) = self.0.take() {
            let _ = thread.join();
        }
    }
}

/// Starts opening the chosen GPUs when GPUs are wanted; `None`: align on the CPU.
pub fn start_opening(args: &AlnArgs) -> Option<Opening> {
    if args.cpu || (!args.gpu && args.gpus.is_none() && !driver_present()) {
        return None;
    }
    // The GPU's team passes rely on every difference costing something: then each child but
    // the matching one scores more than its parent (src/search/level_search.rs).
    if args.s_mm <= 0 || args.s_gapo <= 0 || args.s_gape <= 0 {
        if !args.quiet {
            eprintln!("[bcuda aln] a penalty (-M, -O or -E) of 0 or less: aligning on the CPU (the GPU's search needs every difference to cost something)");
        }
        return None;
    }
    let choice = args.gpus.clone();
    Some(Opening(Some(std::thread::spawn(move || {
        if !driver_present() {
            bail!("no CUDA driver found (libcuda could not be loaded)");
        }
        // CUDA counts only the GPUs of CUDA_VISIBLE_DEVICES, numbered from 0.
        let visible = cudarc::driver::CudaContext::device_count().map_err(|e| anyhow!("counting the GPUs: {e:?}"))?;
        super::timeline::mark_run("CUDA initialised");
        let ordinals = GpuChoice::ordinals(choice.as_ref(), visible.max(0) as usize)?;
        if ordinals.is_empty() {
            bail!("no GPU visible");
        }
        let open = |o: usize| {
            let gpu = OpenGpu::open(o, Switches::default());
            super::timeline::mark_run(format!("GPU {o} opened (context, kernels)"));
            gpu
        };
        let opening: Vec<_> = ordinals.into_iter().map(|o| (o, std::thread::spawn(move || open(o)))).collect();
        Ok(opening
            .into_iter()
            .map(|(o, h)| (o, h.join().unwrap_or_else(|_| Err(anyhow!("opening GPU {o} panicked")))))
            .collect())
    }))))
}

/// The opened GPUs with the BWT copied to each and each one's tuned kernel (all at once), in
/// the order chosen; empty: align on the CPU. A GPU that cannot be used is left out; none
/// usable is an error with `--gpu` or `--gpus`.
pub fn open_aligners(args: &AlnArgs, bwt: &bcuda_index::Bwt, opening: Option<Opening>) -> Result<Vec<GpuAligner>> {
    let Some(opening) = opening else { return Ok(Vec::new()) };
    let required = args.gpu || args.gpus.is_some();
    let opened = match opening.join() {
        Ok(opened) => opened,
        Err(e) if required => return Err(e.context("aln: no usable GPU")),
        Err(e) => {
            if !args.quiet {
                eprintln!("[bcuda aln] GPU not usable ({e:#}); aligning on the CPU");
            }
            return Ok(Vec::new());
        }
    };
    let several = opened.len() > 1;
    let ready: ByOrdinal<(GpuAligner, Vec<String>)> = std::thread::scope(|s| {
        let load = move |o: usize, gpu: Result<OpenGpu>| {
            let gpu = gpu.and_then(|g| GpuAligner::on(g, bwt)).and_then(|mut g| {
                g.adapt_first_pass()?;
                if crate::test_hooks::first_pass_to_teams()? {
                    g.first_pass_to_teams()?;
                }
                if let Some(guesses) = crate::test_hooks::ladder()? {
                    g.ladder_in_passes(guesses)?;
                }
                Ok(g)
            });
            super::timeline::mark_run(format!("GPU {o} holds the BWT"));
            gpu.map(|g| with_tuned_kernel(g, args, several))
        };
        let loading: Vec<_> = opened.into_iter().map(|(o, gpu)| (o, s.spawn(move || load(o, gpu)))).collect();
        loading
            .into_iter()
            .map(|(o, h)| (o, h.join().unwrap_or_else(|_| Err(anyhow!("loading GPU {o} panicked")))))
            .collect()
    });
    let mut gpus = Vec::new();
    let mut first_error = None;
    for (o, gpu) in ready {
        match gpu {
            Ok((gpu, notes)) => {
                if !args.quiet {
                    notes.iter().for_each(|n| eprintln!("{n}"));
                }
                gpus.push(gpu);
            }
            Err(e) => {
                if !args.quiet || required {
                    eprintln!("[bcuda aln] GPU {o} not usable ({e:#})");
                }
                first_error.get_or_insert(e);
            }
        }
    }
    match first_error {
        Some(e) if gpus.is_empty() && required => Err(e.context("aln: no usable GPU")),
        Some(_) if gpus.is_empty() => {
            if !args.quiet {
                eprintln!("[bcuda aln] aligning on the CPU");
            }
            Ok(gpus)
        }
        _ => Ok(gpus),
    }
}

/// The GPU with the exact_match kernel tuned for its model (unless `--no-tuned`), and the
/// lines to print about it.
fn with_tuned_kernel(mut gpu: GpuAligner, args: &AlnArgs, several: bool) -> (GpuAligner, Vec<String>) {
    let (name, cc) = (&gpu.device_name, gpu.compute_capability);
    let which = if several { format!("GPU {}, ", gpu.ordinal()) } else { String::new() };
    let mut notes = vec![format!("[bcuda aln] aligning on {which}{name} (compute {}.{})", cc.0, cc.1)];
    if !args.no_tuned {
        match crate::gpu::tuned::use_tuned(&mut gpu) {
            Ok(Some((speedup, inexact))) => {
                let what =
                    if inexact { "the kernels (exact_match and the inexact search)" } else { "the exact_match kernel" };
                notes
                    .push(format!("[bcuda aln] using {what} tuned for this GPU ({speedup:.2}x on its held-out reads)"));
            }
            Ok(None) => {}
            Err(e) => notes.push(format!("[bcuda aln] ignoring the tuned kernel for this GPU ({e:#})")),
        }
    }
    (gpu, notes)
}

impl AsyncAligner for GpuAligner {
    type Batch = Parsed;
    type Flight = InFlight;
    /// Per read, the GPU's hits (`None`: the CPU aligns the read).
    type Answer = Vec<Option<Vec<AlnHit>>>;

    fn submit(&mut self, batch: &mut Parsed) -> Result<InFlight> {
        let mut input = batch.gpu_input.take().context("a batch not packed for the GPU")?;
        input.repack_for(&batch.reads, self.switches().sequence_stride);
        GpuAligner::submit(self, input)
    }

    fn collect(&mut self, flight: InFlight) -> Result<Self::Answer> {
        GpuAligner::collect(self, flight).map(|(_, hits)| hits)
    }

    /// The search's stacks are sized again with half the memory.
    fn recover(&mut self, error: &anyhow::Error) {
        self.shrink_after_failure();
        crate::progress::note(&format!(
            "[bcuda aln] GPU batch failed on GPU {} ({error:#}); aligning it on the CPU",
            self.ordinal()
        ));
    }

    fn depth(&self) -> usize {
        GpuAligner::depth(self)
    }

    fn collected_note(&self) -> String {
        let spans = self.kernel_spans.last().map(|spans| kernel_spans(spans)).unwrap_or_default();
        format!(" ({}{spans})", self.last_kernels)
    }
}

/// A batch's kernels on the GPU's clock, from the event before the first batch's kernels,
/// e.g. "; on the GPU: exact_match 0.012-0.020 s, D arrays 0.020-0.024 s, pass 1 ...". A span
/// runs from when the batch's stream reached the kernel (the kernels before it on the stream
/// ended, the scratch set it waits for was free) to the kernel's end.
fn kernel_spans(spans: &[crate::gpu::overlap::Span]) -> String {
    let named: Vec<String> =
        spans.iter().enumerate().map(|(k, (start, end))| format!("{} {start:.3}-{end:.3} s", kernel_name(k))).collect();
    format!("; on the GPU: {}", named.join(", "))
}

/// The kernel of a batch's span `k`: exact_match, the D arrays, then the passes.
fn kernel_name(k: usize) -> String {
    match k {
        0 => "exact_match".to_string(),
        1 => "D arrays".to_string(),
        k => format!("pass {}", k - 1),
    }
}

/// One summary line per GPU: its share of the batches and reads, and its busy and kernel time.
pub fn share_lines(gpus: &[GpuAligner], shares: &[Share]) -> Vec<String> {
    let all_reads: usize = shares.iter().map(|s| s.reads).sum::<usize>().max(1);
    gpus.iter()
        .zip(shares)
        .map(|(gpu, s)| {
            let kernels_s = (gpu.totals.exact_ms + gpu.totals.inexact_ms()) as f64 / 1000.0;
            let mut line = format!(
                "[bcuda aln] GPU {} ({}): {} batches, {} reads ({:.1} %), busy {:.2} s, kernels {:.2} s",
                gpu.ordinal(),
                gpu.device_name,
                s.batches,
                s.reads,
                100.0 * s.reads as f64 / all_reads as f64,
                s.busy.as_secs_f64(),
                kernels_s
            );
            line += &sm_shares(gpu, s.busy.as_secs_f64());
            line += &batches_at_once(gpu);
            line += &host_times(gpu);
            if s.failed > 0 {
                line += &format!("; {} failed batches aligned on the CPU", s.failed);
            }
            if s.given_up {
                line += &format!("; given up after {} failed batches in a row", super::dealer::MAX_FAILURES_IN_ROW);
            }
            line
        })
        .collect()
}

/// What the thread that feeds the GPU spent on its batches (see
/// [`crate::gpu::BatchTimes::host`]), e.g. "; host: queueing 0.31 s (uploads 0.12 s,
/// page-locking 0.05 s: 40 copies, 48 MB), waiting 3.40 s, answers 0.52 s".
fn host_times(gpu: &GpuAligner) -> String {
    let (h, pinned) = (gpu.totals.host, gpu.pinned());
    format!(
        "; host: queueing {:.2} s (uploads {:.2} s, page-locking {:.2} s: {} copies, {} MB), waiting {:.2} s, answers {:.2} s",
        h.queue_s,
        gpu.upload_s(),
        pinned.secs,
        pinned.count,
        pinned.bytes >> 20,
        h.wait_s,
        h.answers_s
    )
}

/// What the D arrays and each pass of the inexact search held of the GPU's SMs over its busy
/// time (the blocks' time on their SMs, see [`crate::gpu::BatchTimes::pass_sm_s`]), e.g. "; SMs
/// held: D arrays 5 %, pass 1 3 %, pass 2 61 %, pass 3 24 %, by no pass 7 %".
fn sm_shares(gpu: &GpuAligner, busy_s: f64) -> String {
    let (capacity, passes) = (gpu.sms() as f64 * busy_s, gpu.passes().len());
    if capacity <= 0.0 || passes == 0 {
        return String::new();
    }
    let share = |p: usize| 100.0 * gpu.totals.pass_sm_s[p] / capacity;
    let shares: Vec<String> = (0..passes).map(|p| format!("pass {} {:.0} %", p + 1, share(p))).collect();
    let widths = 100.0 * gpu.totals.widths_sm_s / capacity;
    // The rest: exact_match and the order (not timed per block), the hand-over between
    // passes, and the GPU idle.
    let rest = (100.0 - (0..passes).map(share).sum::<f64>() - widths).max(0.0);
    format!("; SMs held: D arrays {widths:.0} %, {}, by no pass {rest:.0} %{}", shares.join(", "), launch_fill(gpu))
}

/// How many batches ran kernels at once (see [`crate::gpu::overlap`]), e.g. "; batches
/// running kernels: none 2 %, one 15 % (start and drain 9 %, pass 3 alone 5 %, pass 2 alone
/// 1 %), more 83 % of the kernels' span".
fn batches_at_once(gpu: &GpuAligner) -> String {
    let Some(o) = crate::gpu::overlap::batches_at_once(&gpu.kernel_spans) else {
        return String::new();
    };
    let mut alone: Vec<(usize, f64)> =
        o.one_by_kernel.iter().copied().enumerate().filter(|(_, s)| *s >= 0.005).collect();
    alone.sort_by(|a, b| b.1.total_cmp(&a.1));
    let alone: String = alone.iter().map(|&(k, s)| format!(", {} alone {:.0} %", kernel_name(k), 100.0 * s)).collect();
    format!(
        "; batches running kernels: none {:.0} %, one {:.0} % (start and drain {:.0} %{alone}), more {:.0} % of the kernels' span",
        100.0 * o.none,
        100.0 * o.one,
        100.0 * o.one_at_ends,
        100.0 * o.more
    )
}

/// What each pass's launches held of the SMs over their spans (first block's start to last
/// block's end), e.g. "; over their launches' spans: pass 1 80 %, pass 2 45 %, pass 3 90 %":
/// under 100 % where the blocks that drew the longest reads run on after the rest have ended.
fn launch_fill(gpu: &GpuAligner) -> String {
    let t = &gpu.totals;
    let fills: Vec<String> = (0..gpu.passes().len())
        .filter(|&p| t.pass_span_s[p] > 0.0)
        .map(|p| format!("pass {} {:.0} %", p + 1, 100.0 * t.pass_sm_s[p] / (gpu.sms() as f64 * t.pass_span_s[p])))
        .collect();
    if fills.is_empty() {
        return String::new();
    }
    format!("; over their launches' spans: {}", fills.join(", "))
}

/// Releases each GPU's memory and context on a thread of its own: one after another, several
/// GPUs would each add their release (0.15-0.18 s for one H100: its page-locked batch buffers,
/// then its kernels and context; the timeline has the parts) to the run.
pub fn release_all(gpus: Vec<GpuAligner>) {
    if gpus.is_empty() {
        return;
    }
    std::thread::scope(|s| {
        gpus.into_iter().for_each(|gpu| {
            s.spawn(move || {
                let ordinal = gpu.ordinal();
                let parts: Vec<String> =
                    gpu.release().iter().map(|(what, secs)| format!("{what} {secs:.3} s")).collect();
                super::timeline::mark_run(format!("GPU {ordinal} released: {}", parts.join(", ")));
            });
        })
    });
    super::timeline::mark_run("GPUs released");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_spans_are_named_in_queue_order() {
        let line = kernel_spans(&[(0.0125, 0.02), (0.02, 0.024), (0.024, 0.1), (0.1, 0.5), (0.5, 0.75)]);
        assert_eq!(
            line,
            "; on the GPU: exact_match 0.013-0.020 s, D arrays 0.020-0.024 s, pass 1 0.024-0.100 s, \
             pass 2 0.100-0.500 s, pass 3 0.500-0.750 s"
        );
    }

    #[test]
    fn gpus_option() {
        let parse = |s: &str| s.parse::<GpuChoice>();
        assert_eq!(parse("2"), Ok(GpuChoice::First(2)));
        assert_eq!(parse("0,2"), Ok(GpuChoice::Ordinals(vec![0, 2])));
        assert_eq!(parse("1,"), Ok(GpuChoice::Ordinals(vec![1])));
        assert!(
            parse("0").is_err()
                && parse("x").is_err()
                && parse(",").is_err()
                && parse("1,1").is_err()
                && parse("0,a").is_err()
        );
        let pick = |c: Option<GpuChoice>, n| GpuChoice::ordinals(c.as_ref(), n).map_err(|e| e.to_string());
        assert_eq!(pick(None, 3), Ok(vec![0, 1, 2]));
        assert_eq!(pick(Some(GpuChoice::First(2)), 3), Ok(vec![0, 1]));
        assert_eq!(pick(Some(GpuChoice::First(4)), 2), Err("--gpus 4: only 2 GPU(s) visible".into()));
        assert_eq!(pick(Some(GpuChoice::Ordinals(vec![2, 0])), 3), Ok(vec![2, 0]));
        assert!(pick(Some(GpuChoice::Ordinals(vec![0, 2])), 2).is_err());
    }

    #[test]
    fn gpus_expected_before_cuda_is_asked() {
        let none = || None;
        assert_eq!(expected_from(Some(&GpuChoice::First(3)), Some("0"), none), 3);
        assert_eq!(expected_from(Some(&GpuChoice::Ordinals(vec![1, 0])), None, none), 2);
        assert_eq!(expected_from(None, Some("0,1"), || Some(8)), 2);
        assert_eq!(expected_from(None, Some("GPU-f535a73d"), none), 1);
        assert_eq!(expected_from(None, None, || Some(4)), 4);
        // No GPU listed, or none visible: one, as the hint is only for reading ahead.
        assert_eq!(expected_from(None, None, none), 1);
        assert_eq!(expected_from(None, Some(""), none), 1);
    }
}
