//! bcuda: a GPU port of BWA 0.7.17's `aln` path (via BarraCUDA), with self-tuned kernels.

pub mod aln_options;
pub mod cli;
pub mod default_index;
pub mod input;
pub mod option_values;
pub mod progress;
pub mod reads;
pub mod sai;
pub mod summary;
mod test_hooks;
pub mod threads;

pub mod aln;
pub mod autotune_cmd;
pub mod gpu;
pub mod index_cmd;
pub mod map;
pub mod merge_sai;
pub mod sam;
pub mod sampe;
pub mod samse;
pub mod search;
pub mod split_reads;
