//! The framework layer (Volcano `pkg/scheduler/framework`): the plugin interface
//! ([`plugin`]: [`Plugin`], the function set [`Fn`], votes and verdicts, the [`Registry`] type),
//! the per-task pod context of the kube-scheduler plugins ([`k8s::PodCtx`]), the plugins of a
//! session by tier and Volcano's rules for combining them ([`invoke`]), and the [`Session`]
//! actions work on. It sits above the session tables and below the concrete plugins
//! ([`crate::plugins`]), which it never names.

pub mod fingerprint;
pub mod invoke;
pub mod k8s;
pub mod plugin;
mod session;

pub use invoke::Plugins;
pub use plugin::{Builder, Entry, EvictionKind, Fn, Invalid, Plugin, Registry, Verdict, Vote};
pub use session::Session;
