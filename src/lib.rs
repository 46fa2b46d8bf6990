//! bcuda: a GPU port of BWA 0.7.17's `aln` path (via BarraCUDA), with self-tuned kernels.

pub mod cli;
pub mod default_index;
pub mod input;
pub mod option_values;
pub mod progress;
pub mod reads;
mod decompress;
pub mod sai;
pub mod summary;
pub mod threads;

pub mod index_cmd;
pub mod aln;
pub mod sam;
pub mod samse;
pub mod split_reads;
pub mod merge_sai;
pub mod sampe;
pub mod gpu;
pub mod autotune_cmd;
pub mod synth_genome;
