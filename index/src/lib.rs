//! BWA 0.7 compatible FM-index: building the five index files and loading them.
//!
//! - [`build::build_index`]: FASTA -> `.pac .ann .amb .bwt .sa`, byte-identical to `bwa index`.
//! - [`Index::load`]: memory-maps an index (ours or bwa's) and checks that its files agree.

pub mod build;
pub mod bwt;
pub mod bwt_check;
pub mod chunk_sort;
pub mod difference_cover;
pub mod error;
pub mod fasta;
pub mod interval_table;
pub mod rand48;
pub mod refseqs;
pub mod sa;
pub mod suffix_sort;
pub mod text;

use std::path::Path;

pub use build::{build_index, BuildOptions};
pub use bwt::Bwt;
pub use error::{with_ext, IndexError, Result};
pub use interval_table::IntervalTable;
pub use refseqs::{Hole, RefSeq, RefSeqs};
pub use sa::SuffixArray;

/// A loaded index: the BWT, optionally the suffix-array samples, and the reference sequences.
pub struct Index {
    pub bwt: Bwt,
    pub sa: Option<SuffixArray>,
    pub refs: RefSeqs,
}

impl Index {
    /// Loads `prefix.{bwt,ann,amb,pac}` and, with `with_sa`, `prefix.sa`; rejects files that
    /// are truncated or do not belong together (e.g. a `.bwt` of another genome).
    pub fn load(prefix: &Path, with_sa: bool) -> Result<Index> {
        let bwt_path = with_ext(prefix, ".bwt");
        let bwt = Bwt::load(&bwt_path)?;
        let refs = RefSeqs::load(prefix)?;
        if bwt.seq_len() != 2 * refs.l_pac() {
            return Err(IndexError::mismatch(
                &bwt_path,
                format!(
                    "BWT length {} is not twice the reference length {} of the .ann/.pac",
                    bwt.seq_len(),
                    refs.l_pac()
                ),
            ));
        }
        let sa = if with_sa { Some(SuffixArray::load(&with_ext(prefix, ".sa"), &bwt)?) } else { None };
        Ok(Index { bwt, sa, refs })
    }
}
