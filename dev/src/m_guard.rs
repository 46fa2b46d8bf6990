//! The `-m` guard of [`crate::prune_bound`]: a bound on bwa's stack from the search bounded
//! from the start. It lives in the library ([`bcuda::search::m_guard`]); its GPU port, taken
//! out as slower than bwa's search, was checked against it there (f4825f2 holds both).

pub use bcuda::search::m_guard::{kernel_bounds, stack_bound, GuardWatch, KernelBounds};
