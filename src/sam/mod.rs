//! From `.sai` hits to SAM records: what `samse` and `sampe` share (bwase.c). The hit choice
//! and positions (`hits`), gapped CIGARs and MD (`refine`, with `ksw`'s banded global
//! alignment), the line format (`record`), the output file (`sink`), its format (`format`) and its
//! @PG line (`program`).

pub mod format;
pub mod hits;
pub mod ksw;
pub mod program;
pub mod record;
pub mod refine;
pub mod sink;
pub mod sort;
