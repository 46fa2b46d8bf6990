//! The `-m` guard of [`crate::prune_bound`]: a bound on bwa's stack from the search bounded
//! from the start. It lives in the library ([`bcuda::search::m_guard`]); the rungs' GPU form of
//! its bound (cuda/m_guard.cuh) is checked against it by tests/m_guard_kernel.rs.

pub use bcuda::search::m_guard::{kernel_bounds, stack_bound, GuardWatch, KernelBounds};
