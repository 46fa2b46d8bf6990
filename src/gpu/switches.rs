//! The 15 tuning switches of the exact_match kernel (BarraCUDA's names), passed to NVRTC as
//! `-D` defines. Defaults are BarraCUDA's.

use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Switches {
    /// Threads per block.
    pub block_w: u32,
    /// Lanes loading BWT blocks together (None = unset; else a power of 2, 1..=32).
    pub cache_threads: Option<u32>,
    pub kl_par: bool,
    pub occ_par: bool,
    pub many_blocks: bool,
    pub direct_sequence: bool,
    pub direct_index: bool,
    pub sequence_global: bool,
    pub sequence_shift81: bool,
    pub sequence_stride: bool,
    pub mycache4: bool,
    pub mycache2: bool,
    pub direct_global_bwt: bool,
    pub cache_global_bwt: bool,
    pub scache_global_bwt: bool,
}

impl Default for Switches {
    fn default() -> Self {
        Switches {
            block_w: 64,
            cache_threads: None,
            kl_par: false,
            occ_par: false,
            many_blocks: false,
            direct_sequence: true,
            direct_index: true,
            sequence_global: true,
            sequence_shift81: true,
            sequence_stride: true,
            mycache4: true,
            mycache2: false,
            direct_global_bwt: false,
            cache_global_bwt: true,
            scache_global_bwt: false,
        }
    }
}

impl Switches {
    /// Why this combination cannot run, if it cannot.
    pub fn illegal(&self) -> Option<&'static str> {
        if self.block_w == 0 || self.block_w % 32 != 0 || self.block_w > 1024 {
            return Some("BLOCK_W must be a multiple of 32 up to 1024");
        }
        if let Some(t) = self.cache_threads {
            if !(1..=32).contains(&t) || !t.is_power_of_two() {
                return Some("cache_threads must be a power of 2 in 1..=32");
            }
            if self.block_w > 512 {
                return Some("cache_threads keeps 64 bytes of shared memory per thread: BLOCK_W at most 512");
            }
            if self.kl_par {
                return Some("kl_par and cache_threads both pair up lanes: use one");
            }
        } else if self.occ_par {
            return Some("occ_par needs cache_threads");
        }
        if self.mycache4 && self.mycache2 {
            return Some("mycache4 and mycache2 are exclusive");
        }
        None
    }

    /// Sets one switch from `name=value` (BarraCUDA's names; booleans as 0/1, cache_threads
    /// also `unset`).
    pub fn set(&mut self, assignment: &str) -> Result<(), String> {
        let (name, value) = assignment.split_once('=').ok_or_else(|| format!("'{assignment}': expected name=value"))?;
        let flag = || match value {
            "0" => Ok(false),
            "1" => Ok(true),
            _ => Err(format!("{name}={value}: expected 0 or 1")),
        };
        match name {
            "BLOCK_W" => self.block_w = value.parse().map_err(|_| format!("BLOCK_W={value}: not a number"))?,
            "cache_threads" => {
                self.cache_threads = if value == "unset" { None } else { Some(value.parse().map_err(|_| format!("cache_threads={value}: not a number"))?) }
            }
            "kl_par" => self.kl_par = flag()?,
            "occ_par" => self.occ_par = flag()?,
            "many_blocks" => self.many_blocks = flag()?,
            "direct_sequence" => self.direct_sequence = flag()?,
            "direct_index" => self.direct_index = flag()?,
            "sequence_global" => self.sequence_global = flag()?,
            "sequence_shift81" => self.sequence_shift81 = flag()?,
            "sequence_stride" => self.sequence_stride = flag()?,
            "mycache4" => self.mycache4 = flag()?,
            "mycache2" => self.mycache2 = flag()?,
            "direct_global_bwt" => self.direct_global_bwt = flag()?,
            "cache_global_bwt" => self.cache_global_bwt = flag()?,
            "scache_global_bwt" => self.scache_global_bwt = flag()?,
            _ => return Err(format!("unknown switch '{name}'")),
        }
        Ok(())
    }

    /// The `-D` options for NVRTC.
    pub fn defines(&self) -> Vec<String> {
        let flag = |name: &str, on: bool| format!("-D{name}={}", on as u8);
        let mut d = vec![format!("-DBLOCK_W={}", self.block_w)];
        if let Some(t) = self.cache_threads {
            d.push(format!("-Dcache_threads={t}"));
        }
        d.extend([
            flag("kl_par", self.kl_par),
            flag("occ_par", self.occ_par),
            flag("many_blocks", self.many_blocks),
            flag("direct_sequence", self.direct_sequence),
            flag("direct_index", self.direct_index),
            flag("sequence_global", self.sequence_global),
            flag("sequence_shift81", self.sequence_shift81),
            flag("sequence_stride", self.sequence_stride),
            flag("mycache4", self.mycache4),
            flag("mycache2", self.mycache2),
            flag("direct_global_bwt", self.direct_global_bwt),
            flag("cache_global_bwt", self.cache_global_bwt),
            flag("scache_global_bwt", self.scache_global_bwt),
        ]);
        d
    }
}
