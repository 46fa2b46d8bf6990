//! The inexact kernels (cuda/inexact_match.cu) as loaded on a GPU: compiled once per team size
//! of the team passes, because the team kernel's launch bounds (`MAX_TEAM`) set its registers:
//! pass 3's teams of 1024 threads leave 64 registers to a thread, which slows pass 2's lanes by
//! half (measured on the H100, bench/results/h100-80gb-hbm3-16c/human-like-h100.log), so
//! pass 2 gets its own compilation.

use std::collections::HashMap;
use std::sync::Arc;

use anyhow::{anyhow, Result};
use cudarc::driver::{CudaContext, CudaFunction};

use super::nvrtc::{compile_cached, is_cached, Image};
use super::switches::InexactSwitches;

/// The D arrays, pass 1's kernel, the queue orders, the replay, and the team kernel for each team size.
#[derive(Clone)]
pub struct InexactKernels {
    pub widths: CudaFunction,
    pub search: CudaFunction,
    pub order: CudaFunction,
    /// A team pass's queue heaviest first (`level_order`).
    pub order_by_weight: CudaFunction,
    /// bwa's search kept to the candidates' trees (the reads that occur whole, `exact_replay`).
    pub replay: CudaFunction,
    level: HashMap<u32, CudaFunction>,
}

/// The PTX of each compilation `switches` needs ([`InexactSwitches::modules`]), from the cache
/// or NVRTC (at once: NVRTC takes seconds for these kernels).
pub fn compile(source: &str, switches: &InexactSwitches, arch: &'static str) -> Result<Vec<(u32, Image)>> {
    std::thread::scope(|s| {
        let jobs: Vec<_> = switches
            .modules()
            .into_iter()
            .map(|(team, defines)| s.spawn(move || compile_cached(source, &defines, arch).map(|ptx| (team, ptx))))
            .collect();
        jobs.into_iter().map(|j| j.join().map_err(|_| anyhow!("NVRTC panicked"))?).collect()
    })
}

/// Whether every compilation `switches` needs is in the kernel cache.
pub fn cached(source: &str, switches: &InexactSwitches, arch: &'static str) -> bool {
    switches.modules().iter().all(|(_, defines)| is_cached(source, defines, arch))
}

impl InexactKernels {
    /// Loads compiled modules ([`compile`]): pass 1's kernel from the first.
    pub fn load(ctx: &Arc<CudaContext>, images: Vec<(u32, Image)>) -> Result<InexactKernels> {
        let mut kernels: Option<InexactKernels> = None;
        for (team, image) in images {
            let module = image.load(ctx)?;
            let level = module.load_function("inexact_level")?;
            match &mut kernels {
                None => {
                    kernels = Some(InexactKernels {
                        widths: module.load_function("read_widths")?,
                        search: module.load_function("inexact_search")?,
                        order: module.load_function("inexact_order")?,
                        order_by_weight: module.load_function("order_by_weight")?,
                        replay: module.load_function("inexact_replay")?,
                        level: HashMap::from([(team, level)]),
                    })
                }
                Some(k) => {
                    k.level.insert(team, level);
                }
            }
        }
        kernels.ok_or_else(|| anyhow!("no inexact kernels compiled"))
    }

    /// The team kernel compiled for teams of `team` threads.
    pub fn level(&self, team: u32) -> Result<&CudaFunction> {
        self.level.get(&team).ok_or_else(|| anyhow!("no team kernel compiled for teams of {team} threads"))
    }
}
