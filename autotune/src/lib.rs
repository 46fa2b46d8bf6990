//! Genetic improvement of CUDA kernel sources: a grammar derived from the source, patches
//! and switch settings as genomes, mutation and crossover, tabu lists, the k,l penalty
//! oracle, and the evolution loop around an [`evolution::Evaluator`] that the caller
//! provides (the `bcuda` binary compiles and runs variants on its GPU).

pub mod bounds;
pub mod evolution;
pub mod genome;
pub mod grammar;
pub mod patch;
pub mod penalty;
pub mod preprocess;
pub mod report;
