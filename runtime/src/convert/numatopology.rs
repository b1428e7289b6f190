//! Volcano `Numatopology` → [`NumatopologySpec`], and what the `numa-aware` plugin reads of a
//! pod ([`pod_numa`]). Errors name the object and field: a CPU list that is not a Linux CPU
//! list (`numares.cpu.allocatable`, as Kubernetes `cpuset.Parse`), a `cpuDetail` key that is not
//! a CPU id, a negative NUMA node, socket or core, a `resReserved.cpu` that is not a quantity.
//! Volcano logs such values and goes on with an empty set; Basalt refuses the object (the
//! scheduler reports it once and the node is checked as one without a Numatopology).

use super::{required_name, ConvertError, ObjRef};
use crate::crd;
use basalt_core::model::{
    NumaContainer, NumaCpu, NumaPodAllocation, NumatopologySpec, PodNuma, CPU_MANAGER_POLICY, NUMA_POLICY,
    TOPOLOGY_MANAGER_POLICY,
};
use k8s_openapi::api::core::v1 as k8s;

/// Converts a Numatopology.
pub fn convert_numatopology(t: &crd::Numatopology) -> Result<NumatopologySpec, ConvertError> {
    let name = required_name("Numatopology", &t.metadata)?;
    let obj = ObjRef { kind: "Numatopology", name: &name };
    let spec = &t.spec;
    let policy = |k: &str| spec.policies.as_ref().and_then(|p| p.get(k)).cloned().unwrap_or_default();
    let cpu_res = spec.numa_res_map.as_ref().and_then(|m| m.get("cpu"));
    let cpu_allocatable = match cpu_res {
        None => None,
        Some(r) => Some(
            parse_cpu_list(r.allocatable.as_deref().unwrap_or("")).map_err(|m| obj.error("spec.numares.cpu.allocatable", m))?,
        ),
    };
    let mut cpus = Vec::new();
    for (key, info) in spec.cpu_detail.iter().flatten() {
        let field = format!("spec.cpuDetail[{key}]");
        let id = key.parse::<u32>().map_err(|_| obj.error(&field, format!("key {key:?} is not a CPU id")))?;
        let id_of = |v: Option<i64>, what: &str| -> Result<u32, ConvertError> {
            u32::try_from(v.unwrap_or(0)).map_err(|_| obj.error(format!("{field}.{what}"), format!("{:?} is not >= 0", v)))
        };
        cpus.push(NumaCpu {
            id,
            numa: id_of(info.numa, "numa")?,
            socket: id_of(info.socket, "socket")?,
            core: id_of(info.core, "core")?,
        });
    }
    cpus.sort_by_key(|c| c.id);
    if let Some(w) = cpus.windows(2).find(|w| w[0].id == w[1].id) {
        return Err(obj.error("spec.cpuDetail", format!("CPU {} is listed twice", w[0].id)));
    }
    let reserved_cpu_milli = match spec.res_reserved.as_ref().and_then(|r| r.get("cpu")) {
        None => 0,
        Some(q) => super::quantity::to_milli(q)
            .ok()
            .filter(|&m| m >= 0)
            .ok_or_else(|| obj.error("spec.resReserved.cpu", format!("invalid quantity {q:?}")))?,
    };
    let pod_allocations = spec
        .pod_allocations
        .iter()
        .flatten()
        .map(|a| NumaPodAllocation {
            uid: a.uid.clone().unwrap_or_default(),
            namespace: a.namespace.clone().unwrap_or_default(),
            name: a.name.clone().unwrap_or_default(),
        })
        .collect();
    Ok(NumatopologySpec {
        topology_manager_policy: policy(TOPOLOGY_MANAGER_POLICY),
        cpu_manager_policy: policy(CPU_MANAGER_POLICY),
        cpu_allocatable,
        cpu_capacity: cpu_res.and_then(|r| r.capacity).unwrap_or(0),
        cpus,
        reserved_cpu_milli,
        pod_allocations,
        name,
    })
}

/// A Linux CPU list (`0-3,8,10-11`; empty = no CPU) as CPU ids, ascending, no repeats
/// (Kubernetes `cpuset.Parse`). Errors say which part is wrong.
pub fn parse_cpu_list(s: &str) -> Result<Vec<u32>, String> {
    let mut out = Vec::new();
    if s.is_empty() {
        return Ok(out);
    }
    for part in s.split(',') {
        let bad = || format!("{s:?} is not a CPU list (part {part:?})");
        match part.split_once('-') {
            None => out.push(part.parse::<u32>().map_err(|_| bad())?),
            Some((a, b)) => {
                let (a, b) = (a.parse::<u32>().map_err(|_| bad())?, b.parse::<u32>().map_err(|_| bad())?);
                if a > b || b - a > 65_535 {
                    return Err(bad());
                }
                out.extend(a..=b);
            }
        }
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// What the `numa-aware` plugin reads of a pod: the [`NUMA_POLICY`] annotation, whether its
/// QoS class is Guaranteed (Kubernetes `GetPodQOS` over CPU and memory of every container and
/// init container, requests defaulted from limits as the API server does), and each
/// container's whole-CPU request. Quantities that do not parse count as absent: the pod's own
/// conversion ([`super::convert_pod`]) refuses them first.
pub fn pod_numa(pod: &k8s::Pod) -> PodNuma {
    let policy = pod.metadata.annotations.as_ref().and_then(|a| a.get(NUMA_POLICY)).cloned().unwrap_or_default();
    let Some(spec) = pod.spec.as_ref() else { return PodNuma { policy, ..Default::default() } };
    let milli = |q: Option<&k8s_openapi::apimachinery::pkg::api::resource::Quantity>| {
        q.and_then(|q| super::quantity::to_milli(&q.0).ok()).filter(|&v| v > 0)
    };
    // GetPodQOS: sums of positive requests and limits of cpu and memory; every container
    // needs both limits; Guaranteed when the sums match.
    let mut guaranteed = true;
    let (mut req, mut lim) = ([0i64; 2], [0i64; 2]);
    let (mut any_req, mut any_lim) = ([false; 2], [false; 2]);
    for c in spec.containers.iter().chain(spec.init_containers.iter().flatten()) {
        let r = c.resources.as_ref();
        for (k, name) in ["cpu", "memory"].into_iter().enumerate() {
            let l = milli(r.and_then(|r| r.limits.as_ref()).and_then(|m| m.get(name)));
            let q = milli(r.and_then(|r| r.requests.as_ref()).and_then(|m| m.get(name))).or(l);
            if let Some(q) = q {
                req[k] = req[k].saturating_add(q);
                any_req[k] = true;
            }
            match l {
                Some(l) => {
                    lim[k] = lim[k].saturating_add(l);
                    any_lim[k] = true;
                }
                None => guaranteed = false,
            }
        }
    }
    let best_effort = !any_req.iter().chain(&any_lim).any(|&x| x);
    guaranteed = guaranteed && !best_effort && (0..2).all(|k| any_req[k] == any_lim[k] && req[k] == lim[k]);
    let containers = spec
        .containers
        .iter()
        .map(|c| {
            let r = c.resources.as_ref();
            let cpu = r
                .and_then(|r| r.requests.as_ref())
                .and_then(|m| m.get("cpu"))
                .or_else(|| r.and_then(|r| r.limits.as_ref()).and_then(|m| m.get("cpu")));
            let m = cpu.and_then(|q| super::quantity::to_milli(&q.0).ok()).unwrap_or(0);
            let cpus = if m > 0 && m % 1000 == 0 { u32::try_from(m / 1000).unwrap_or(0) } else { 0 };
            NumaContainer { name: c.name.clone(), cpus }
        })
        .collect();
    PodNuma { policy, guaranteed, containers }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn topo(yaml: &str) -> Result<NumatopologySpec, ConvertError> {
        convert_numatopology(&serde_yaml::from_str(yaml).unwrap())
    }

    #[test]
    fn reads_policies_cpus_and_the_free_list() {
        let t = topo(
            "metadata: {name: n1}\nspec:\n  policies: {CPUManagerPolicy: static, TopologyManagerPolicy: single-numa-node}\n  resReserved: {cpu: 1500m}\n  numares: {cpu: {allocatable: '1-3,5', capacity: 4}}\n  cpuDetail: {'0': {numa: 0, socket: 0, core: 0}, '1': {numa: 0, socket: 0, core: 1}, '2': {numa: 1, socket: 1, core: 0}, '3': {numa: 1, socket: 1, core: 1}, '5': {numa: 1, socket: 1, core: 2}}\n  podAllocations: [{uid: u1, name: p, namespace: ns}]\n",
        )
        .unwrap();
        assert_eq!(t.name, "n1");
        assert_eq!((t.cpu_manager_policy.as_str(), t.topology_manager_policy.as_str()), ("static", "single-numa-node"));
        assert_eq!(t.cpu_allocatable, Some(vec![1, 2, 3, 5]));
        assert_eq!(t.cpu_capacity, 4);
        assert_eq!(t.reserved_cpu_milli, 1500);
        assert_eq!(t.cpus.iter().map(|c| c.id).collect::<Vec<_>>(), [0, 1, 2, 3, 5]);
        assert_eq!(t.numa_nodes(), [0, 1]);
        assert_eq!(t.pod_allocations[0].uid, "u1");
        let none = topo("metadata: {name: n2}\nspec: {policies: {CPUManagerPolicy: none}}\n").unwrap();
        assert_eq!(none.cpu_allocatable, None, "no cpu entry in numares");
    }

    #[test]
    fn refuses_malformed_fields_naming_them() {
        let e = topo("metadata: {name: n1}\nspec: {numares: {cpu: {allocatable: '0-x'}}}\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "Numatopology n1: field spec.numares.cpu.allocatable: \"0-x\" is not a CPU list (part \"0-x\")"
        );
        let e = topo("metadata: {name: n1}\nspec: {cpuDetail: {abc: {numa: 0}}}\n").unwrap_err();
        assert_eq!(e.to_string(), "Numatopology n1: field spec.cpuDetail[abc]: key \"abc\" is not a CPU id");
        let e = topo("metadata: {name: n1}\nspec: {cpuDetail: {'0': {numa: -1}}}\n").unwrap_err();
        assert_eq!(e.to_string(), "Numatopology n1: field spec.cpuDetail[0].numa: Some(-1) is not >= 0");
        let e = topo("metadata: {name: n1}\nspec: {resReserved: {cpu: lots}}\n").unwrap_err();
        assert_eq!(e.to_string(), "Numatopology n1: field spec.resReserved.cpu: invalid quantity \"lots\"");
        assert_eq!(parse_cpu_list("3-1").unwrap_err(), "\"3-1\" is not a CPU list (part \"3-1\")");
        assert_eq!(parse_cpu_list("").unwrap(), Vec::<u32>::new());
    }

    fn pod(yaml: &str) -> PodNuma {
        pod_numa(&serde_yaml::from_str(yaml).unwrap())
    }

    #[test]
    fn pod_qos_and_whole_cpus_as_kubernetes_reads_them() {
        let g = pod("metadata: {name: p, annotations: {volcano.sh/numa-topology-policy: single-numa-node}}\nspec: {containers: [{name: a, resources: {limits: {cpu: '2', memory: 1Gi}}}, {name: b, resources: {requests: {cpu: 500m, memory: 1Gi}, limits: {cpu: 500m, memory: 1Gi}}}]}\n");
        assert!(g.guaranteed);
        assert_eq!(g.policy, "single-numa-node");
        assert_eq!(g.containers.iter().map(|c| (c.name.as_str(), c.cpus)).collect::<Vec<_>>(), [("a", 2), ("b", 0)]);
        let burstable = pod("metadata: {name: p}\nspec: {containers: [{name: a, resources: {requests: {cpu: '1', memory: 1Gi}, limits: {cpu: '2', memory: 1Gi}}}]}\n");
        assert!(!burstable.guaranteed && !burstable.relevant());
        let no_memory_limit = pod("metadata: {name: p}\nspec: {containers: [{name: a, resources: {limits: {cpu: '2'}}}]}\n");
        assert!(!no_memory_limit.guaranteed);
        let init_burstable = pod("metadata: {name: p}\nspec: {initContainers: [{name: i, resources: {requests: {cpu: '1'}}}], containers: [{name: a, resources: {limits: {cpu: '2', memory: 1Gi}}}]}\n");
        assert!(!init_burstable.guaranteed, "an init container without limits makes the pod Burstable");
        assert!(!pod("metadata: {name: p}\nspec: {containers: [{name: a}]}\n").guaranteed, "BestEffort");
    }
}
