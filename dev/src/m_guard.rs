//! The `-m` guard of [`crate::prune_bound`]: a bound on bwa's stack from the search bounded
//! from the start. It lives in the library ([`bcuda::search::m_guard`]) so that
//! dev/tests/m_guard_kernel.rs can drive it and check cuda/m_guard.cuh, its GPU port, against it.

pub use bcuda::search::m_guard::{stack_bound, GuardWatch};
