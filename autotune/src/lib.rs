//! Genetic improvement of CUDA kernel sources: a grammar derived from the source, patches
//! and switch settings as genomes, mutation and crossover, tabu lists, the k,l penalty
//! oracle (exact_match) and the hit-level oracle (the inexact kernels), the evolution loop
//! around an [`evolution::Evaluator`] that the caller provides (the `bcuda` binary compiles
//! and runs variants on its GPU), restarts, and the budget's sizing.

pub mod bounds;
pub mod evolution;
pub mod genome;
pub mod grammar;
pub mod hit_oracle;
pub mod patch;
pub mod penalty;
pub mod preprocess;
pub mod report;
pub mod restarts;
pub mod sizing;
