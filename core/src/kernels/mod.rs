//! Pure kernels of the hot path: the max-tree that picks the best node without scanning every
//! node for every task. They name no session type; the class cache over them is in
//! [`crate::select::class_cache`].

pub mod bits;
pub mod holders;
pub mod masked_max;
pub mod maxtree;
pub mod prefetch;
