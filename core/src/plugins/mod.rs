//! Volcano's scheduler plugins: each registers functions into the session, combined across
//! tiers by Volcano's rules ([`crate::framework::invoke`]), and [`REGISTRY`], the plugins
//! Basalt implements. The plugin trait and the registry type are the framework's
//! ([`crate::framework`]), re-exported here.
//!
//! A plugin implements [`Plugin`] through [`plugin_impl!`]: the functions it registers
//! ([`Plugin::fns`]) are its declared capability set, a constant `FNS` beside it, which
//! `core/tests/plugin_fns.rs` holds equal to the trait methods its impl block writes; the session
//! calls only those, and only when the plugin's enable flag for that function is on
//! (volcano-behaviour.md §1.2, §1.5). [`Registry`] names the plugins that can be built (and
//! where the session's GPU share mode comes from); the session is opened with one
//! ([`crate::framework::Session::open`]).

/// Implements [`Plugin`] for a plugin type from the trait methods written in the block:
/// [`Plugin::fns`] is the type's declared `FNS` constant, [`Plugin::implemented_fns`] the set
/// derived from the method names ([`Fn::registered_by`]), which a test holds equal, so a plugin
/// registers exactly the functions it implements. Write `plugin_impl! { impl<'a> for Type { fn name(..) .. } }`.
macro_rules! plugin_impl {
    (impl<$a:lifetime> for $ty:ty {
        $( $(#[$m:meta])* fn $f:ident ( $($args:tt)* ) $(-> $ret:ty)? $body:block )*
    }) => {
        impl<$a> $crate::framework::Plugin<$a> for $ty {
            fn fns(&self) -> u32 {
                <$ty>::FNS
            }
            fn implemented_fns(&self) -> u32 {
                $crate::framework::Fn::registered_by(&[$(stringify!($f)),*])
            }
            $( $(#[$m])* fn $f ( $($args)* ) $(-> $ret)? $body )*
        }
    };
}

pub mod binpack;
pub mod capacity;
mod capacity_attrs;
pub mod cdp;
pub(crate) mod check;
pub mod conformance;
pub mod deviceshare;
pub mod drf;
mod drf_hierarchy;
pub mod gang;
pub mod network_topology_aware;
pub mod nodegroup;
pub mod nodeorder;
pub mod numa_cpus;
pub mod numaaware;
pub mod overcommit;
pub mod pdb;
pub mod predicates;
pub mod priority;
pub mod proportion;
pub mod rescheduling;
pub mod resourcequota;
pub mod sla;
pub mod task_topology;

use crate::conf::{Flag, PluginOption};
pub use crate::framework::k8s;
pub use crate::framework::plugin::{Builder, Entry, EvictionKind, Fn, Invalid, Plugin, Registry, Verdict, Vote};
use crate::session::State;
pub use check::{Unhonoured, UnhonouredKind};

fn b_priority<'a>(_: &PluginOption, _: &State<'a>) -> Box<dyn Plugin<'a> + 'a> {
    Box::new(priority::Priority)
}
fn b_gang<'a>(_: &PluginOption, _: &State<'a>) -> Box<dyn Plugin<'a> + 'a> {
    Box::new(gang::Gang)
}
fn b_conformance<'a>(_: &PluginOption, _: &State<'a>) -> Box<dyn Plugin<'a> + 'a> {
    Box::new(conformance::Conformance)
}
fn b_overcommit<'a>(o: &PluginOption, s: &State<'a>) -> Box<dyn Plugin<'a> + 'a> {
    Box::new(overcommit::Overcommit::open(s, &o.arguments))
}
fn b_drf<'a>(o: &PluginOption, s: &State<'a>) -> Box<dyn Plugin<'a> + 'a> {
    Box::new(drf::Drf::open(s, o.flags.on(Flag::Hierarchy)))
}
fn b_proportion<'a>(_: &PluginOption, s: &State<'a>) -> Box<dyn Plugin<'a> + 'a> {
    Box::new(proportion::Proportion::open(s))
}
fn b_capacity<'a>(o: &PluginOption, s: &State<'a>) -> Box<dyn Plugin<'a> + 'a> {
    Box::new(capacity::Capacity::open(s, &o.arguments, o.flags.on(Flag::Hierarchy)))
}
fn b_predicates<'a>(o: &PluginOption, s: &State<'a>) -> Box<dyn Plugin<'a> + 'a> {
    Box::new(predicates::Predicates::open(s, &o.arguments))
}
fn b_nodeorder<'a>(o: &PluginOption, s: &State<'a>) -> Box<dyn Plugin<'a> + 'a> {
    Box::new(nodeorder::NodeOrder::open(s, &o.arguments))
}
fn b_rescheduling<'a>(o: &PluginOption, s: &State<'a>) -> Box<dyn Plugin<'a> + 'a> {
    Box::new(rescheduling::Rescheduling::open(s, &o.arguments))
}
fn b_pdb<'a>(_: &PluginOption, s: &State<'a>) -> Box<dyn Plugin<'a> + 'a> {
    Box::new(pdb::Pdb::open(s))
}
fn b_cdp<'a>(_: &PluginOption, _: &State<'a>) -> Box<dyn Plugin<'a> + 'a> {
    Box::new(cdp::Cdp)
}
fn b_resourcequota<'a>(_: &PluginOption, _: &State<'a>) -> Box<dyn Plugin<'a> + 'a> {
    Box::new(resourcequota::ResourceQuota::open())
}
fn b_binpack<'a>(o: &PluginOption, s: &State<'a>) -> Box<dyn Plugin<'a> + 'a> {
    Box::new(binpack::Binpack::open(s, &o.arguments))
}
fn b_sla<'a>(o: &PluginOption, _: &State<'a>) -> Box<dyn Plugin<'a> + 'a> {
    Box::new(sla::Sla::open(&o.arguments))
}
fn b_nodegroup<'a>(o: &PluginOption, s: &State<'a>) -> Box<dyn Plugin<'a> + 'a> {
    Box::new(nodegroup::NodeGroup::open(s, &o.arguments, o.flags.on(Flag::Hierarchy)))
}
fn b_task_topology<'a>(o: &PluginOption, s: &State<'a>) -> Box<dyn Plugin<'a> + 'a> {
    Box::new(task_topology::TaskTopology::open(s, &o.arguments))
}

fn b_deviceshare<'a>(_: &PluginOption, _: &State<'a>) -> Box<dyn Plugin<'a> + 'a> {
    Box::new(deviceshare::DeviceShare)
}

fn b_network_topology_aware<'a>(o: &PluginOption, s: &State<'a>) -> Box<dyn Plugin<'a> + 'a> {
    Box::new(network_topology_aware::NetworkTopologyAware::open(s, o))
}

fn b_numaaware<'a>(o: &PluginOption, s: &State<'a>) -> Box<dyn Plugin<'a> + 'a> {
    Box::new(numaaware::NumaAware::open(s, &o.arguments))
}

/// The plugins Basalt implements.
pub static REGISTRY: Registry = Registry {
    entries: &[
        Entry { name: "priority", build: b_priority, args: &[] },
        Entry { name: "gang", build: b_gang, args: &[] },
        Entry { name: "conformance", build: b_conformance, args: &[] },
        Entry { name: "overcommit", build: b_overcommit, args: overcommit::ARGS },
        Entry { name: "drf", build: b_drf, args: &[] },
        Entry { name: "proportion", build: b_proportion, args: &[] },
        Entry { name: "capacity", build: b_capacity, args: capacity::ARGS },
        Entry { name: "predicates", build: b_predicates, args: predicates::ARGS },
        Entry { name: "nodeorder", build: b_nodeorder, args: nodeorder::ARGS },
        Entry { name: "binpack", build: b_binpack, args: binpack::ARGS },
        Entry { name: "rescheduling", build: b_rescheduling, args: rescheduling::ARGS },
        Entry { name: "sla", build: b_sla, args: sla::ARGS },
        Entry { name: "nodegroup", build: b_nodegroup, args: nodegroup::ARGS },
        Entry { name: "task-topology", build: b_task_topology, args: task_topology::ARGS },
        Entry { name: network_topology_aware::NAME, build: b_network_topology_aware, args: network_topology_aware::ARGS },
        Entry { name: "pdb", build: b_pdb, args: &[] },
        Entry { name: "cdp", build: b_cdp, args: &[] },
        Entry { name: "resourcequota", build: b_resourcequota, args: &[] },
        Entry { name: deviceshare::NAME, build: b_deviceshare, args: deviceshare::ARGS },
        Entry { name: numaaware::NAME, build: b_numaaware, args: numaaware::ARGS },
    ],
    devices: Some(deviceshare::device_conf),
};
