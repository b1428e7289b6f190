//! Kernels of the hot path: incremental per-class node feasibility and scores, and the
//! max-tree that picks the best node without scanning every node for every task.

pub mod class_cache;
pub mod maxtree;
