//! Volcano's scheduler plugins.

/// Every plugin name Volcano registers (`plugins/factory.go`).
pub const KNOWN: &[&str] = &[
    "drf", "gang", "deviceshare", "predicates", "priority", "nodeorder", "conformance", "binpack", "resource-strategy-fit", "tdm",
    "overcommit", "sla", "task-topology", "numa-aware", "cdp", "rescheduling", "usage", "pdb", "nodegroup", "network-topology-aware",
    "proportion", "capacity", "extender", "resourcequota",
];

/// The plugins Basalt implements.
pub const IMPLEMENTED: &[&str] = &["priority", "gang", "conformance", "overcommit", "drf", "proportion", "predicates", "nodeorder", "binpack"];
