//! Node selection for one task (Volcano `PredicateHelper`, `PrioritizeNodes`,
//! `SelectBestNode`): the plain node scans ([`nodes`]) and the class cache that answers them
//! without a scan for tasks alike ([`class_cache`], over the pure [`crate::kernels`]). Above the
//! framework (it asks the session's plugins), below the actions that use it.

pub mod class_cache;
pub mod nodes;
