//! The `svc` job plugin (Volcano's `plugins/svc`, volcano-behaviour.md §5.1 "Job plugins"):
//! pods of a job reach each other by name.
//! * `OnJobAdd`: ConfigMap `<job>-svc` with, per task, `<task>.host` (its pods' DNS names, one a
//!   line), `VC_<TASK>_HOSTS` (comma-separated) and `VC_<TASK>_NUM` (their count); a headless
//!   Service `<job>` (`clusterIP: None`, selector `volcano.sh/job-name` + `volcano.sh/job-namespace`,
//!   Volcano's placeholder port `placeholder-volcano` 1/TCP); a NetworkPolicy `<job>` letting in
//!   only the job's own pods, unless `--disable-network-policy`. All owned by the Job.
//! * `OnPodCreate`: `hostname` = pod name and `subdomain` = job name (when the template sets
//!   none); the ConfigMap mounted at `/etc/volcano` in every container and init container; env
//!   `VC_<TASK>_HOSTS`/`VC_<TASK>_NUM` of every task from the ConfigMap, unless
//!   `--inject-hosts-env=false`.
//! * `OnJobUpdate`: the ConfigMap rewritten (replicas may have changed).
//! * `OnJobDelete`: the three deleted.
//!
//! Flags: `--publish-not-ready-addresses` (false), `--disable-network-policy` (false),
//! `--inject-hosts-env` (true). `<TASK>` is the task name upper-cased with `-` → `_`; the
//! `.host` key keeps the case and also maps `-` → `_`.

use super::flags::{self, FlagKind};
use super::{env_task_key, parse_warning, task_hosts, JobPlugin, ObjectKey, ObjectKind, PluginObject};
use crate::controller::build::owner_reference;
use crate::controller::defaults::task_name;
use crate::controller::keys;
use crate::crd::Job;
use k8s_openapi::api::core::v1::{
    ConfigMap, ConfigMapKeySelector, ConfigMapVolumeSource, EnvVar, EnvVarSource, Pod, Service, ServicePort, ServiceSpec, Volume,
    VolumeMount,
};
use k8s_openapi::api::networking::v1::{NetworkPolicy, NetworkPolicyIngressRule, NetworkPolicyPeer, NetworkPolicySpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use std::collections::BTreeMap;

/// Where the hosts ConfigMap is mounted.
pub const MOUNT_PATH: &str = "/etc/volcano";

/// The `svc` plugin with its flags.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Svc {
    /// `--publish-not-ready-addresses`: the Service's `publishNotReadyAddresses`.
    pub publish_not_ready_addresses: bool,
    /// `--disable-network-policy`: no NetworkPolicy.
    pub disable_network_policy: bool,
    /// `--inject-hosts-env`: the `VC_<TASK>_*` env in containers.
    pub inject_hosts_env: bool,
}

impl Svc {
    /// Parses `args`; returns the plugin and a warning when a flag does not parse.
    pub fn new(args: &[String]) -> (Svc, Vec<String>) {
        let (f, err) = flags::parse(
            &[
                ("publish-not-ready-addresses", FlagKind::Bool),
                ("disable-network-policy", FlagKind::Bool),
                ("inject-hosts-env", FlagKind::Bool),
            ],
            args,
        );
        let p = Svc {
            publish_not_ready_addresses: f.bool("publish-not-ready-addresses", false),
            disable_network_policy: f.bool("disable-network-policy", false),
            inject_hosts_env: f.bool("inject-hosts-env", true),
        };
        (p, parse_warning(args, err))
    }
}

/// `<job>-svc`, the hosts ConfigMap's name.
pub fn config_map_name(job: &Job) -> String {
    format!("{}-svc", job.metadata.name.as_deref().unwrap_or_default())
}

/// The hosts ConfigMap's data (Volcano's `GenerateHosts`).
pub fn hosts_data(job: &Job) -> BTreeMap<String, String> {
    let mut data = BTreeMap::new();
    for (ti, t) in job.spec.tasks.iter().enumerate() {
        let hosts = task_hosts(job, ti, t);
        let tname = task_name(t, ti);
        let upper = env_task_key(&tname);
        data.insert(format!("{}.host", tname.replace('-', "_")), hosts.join("\n"));
        data.insert(format!("VC_{upper}_HOSTS"), hosts.join(","));
        data.insert(format!("VC_{upper}_NUM"), hosts.len().to_string());
    }
    data
}

fn meta(job: &Job, name: String) -> ObjectMeta {
    ObjectMeta {
        name: Some(name),
        namespace: job.metadata.namespace.clone(),
        owner_references: Some(vec![owner_reference(job)]),
        ..Default::default()
    }
}

/// The job's pods: `volcano.sh/job-name` and `volcano.sh/job-namespace`.
fn job_selector(job: &Job) -> BTreeMap<String, String> {
    BTreeMap::from([
        (keys::JOB_NAME.to_string(), job.metadata.name.clone().unwrap_or_default()),
        (keys::JOB_NAMESPACE.to_string(), job.metadata.namespace.clone().unwrap_or_default()),
    ])
}

impl Svc {
    fn config_map(job: &Job) -> ConfigMap {
        ConfigMap { metadata: meta(job, config_map_name(job)), data: Some(hosts_data(job)), ..Default::default() }
    }

    /// The headless Service `<job>`.
    pub fn service(&self, job: &Job) -> Service {
        Service {
            metadata: meta(job, job.metadata.name.clone().unwrap_or_default()),
            spec: Some(ServiceSpec {
                cluster_ip: Some("None".into()),
                selector: Some(job_selector(job)),
                publish_not_ready_addresses: Some(self.publish_not_ready_addresses),
                ports: Some(vec![ServicePort {
                    name: Some("placeholder-volcano".into()),
                    port: 1,
                    protocol: Some("TCP".into()),
                    target_port: Some(IntOrString::Int(1)),
                    ..Default::default()
                }]),
                ..Default::default()
            }),
            status: None,
        }
    }

    /// The NetworkPolicy `<job>`: ingress to the job's pods only from the job's pods.
    pub fn network_policy(&self, job: &Job) -> NetworkPolicy {
        let selector = LabelSelector { match_labels: Some(job_selector(job)), match_expressions: None };
        NetworkPolicy {
            metadata: meta(job, job.metadata.name.clone().unwrap_or_default()),
            spec: Some(NetworkPolicySpec {
                pod_selector: Some(selector.clone()),
                ingress: Some(vec![NetworkPolicyIngressRule {
                    from: Some(vec![NetworkPolicyPeer { pod_selector: Some(selector), ..Default::default() }]),
                    ports: None,
                }]),
                policy_types: Some(vec!["Ingress".into()]),
                egress: None,
            }),
        }
    }
}

impl JobPlugin for Svc {
    fn name(&self) -> &'static str {
        "svc"
    }

    fn on_pod_create(&self, pod: &mut Pod, job: &Job) {
        let pod_name = pod.metadata.name.clone().unwrap_or_default();
        let cm = config_map_name(job);
        let Some(spec) = pod.spec.as_mut() else { return };
        if spec.hostname.as_deref().is_none_or(str::is_empty) {
            spec.hostname = Some(pod_name);
        }
        if spec.subdomain.as_deref().is_none_or(str::is_empty) {
            spec.subdomain = job.metadata.name.clone();
        }
        let mut vars = Vec::new();
        if self.inject_hosts_env {
            for (ti, t) in job.spec.tasks.iter().enumerate() {
                let upper = env_task_key(&task_name(t, ti));
                for key in [format!("VC_{upper}_HOSTS"), format!("VC_{upper}_NUM")] {
                    vars.push(EnvVar {
                        name: key.clone(),
                        value: None,
                        value_from: Some(EnvVarSource {
                            config_map_key_ref: Some(ConfigMapKeySelector { name: cm.clone(), key, optional: None }),
                            ..Default::default()
                        }),
                    });
                }
            }
        }
        spec.volumes.get_or_insert_with(Vec::new).push(Volume {
            name: cm.clone(),
            config_map: Some(ConfigMapVolumeSource { name: cm.clone(), ..Default::default() }),
            ..Default::default()
        });
        let mount = VolumeMount { name: cm, mount_path: MOUNT_PATH.into(), ..Default::default() };
        for c in spec.containers.iter_mut().chain(spec.init_containers.iter_mut().flatten()) {
            c.env.get_or_insert_with(Vec::new).extend(vars.iter().cloned());
            c.volume_mounts.get_or_insert_with(Vec::new).push(mount.clone());
        }
    }

    fn on_job_add(&self, job: &Job) -> Result<Vec<PluginObject>, String> {
        let mut out = vec![PluginObject::ConfigMap(Svc::config_map(job)), PluginObject::Service(self.service(job))];
        if !self.disable_network_policy {
            out.push(PluginObject::NetworkPolicy(self.network_policy(job)));
        }
        Ok(out)
    }

    fn on_job_delete(&self, job: &Job) -> Vec<ObjectKey> {
        let name = job.metadata.name.clone().unwrap_or_default();
        let mut out = vec![
            ObjectKey { kind: ObjectKind::ConfigMap, name: config_map_name(job) },
            ObjectKey { kind: ObjectKind::Service, name: name.clone() },
        ];
        if !self.disable_network_policy {
            out.push(ObjectKey { kind: ObjectKind::NetworkPolicy, name });
        }
        out
    }

    fn on_job_update(&self, job: &Job) -> Vec<PluginObject> {
        vec![PluginObject::ConfigMap(Svc::config_map(job))]
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{job, pod};
    use super::*;

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn flags_and_defaults() {
        type Case<'a> = (&'a [&'a str], (bool, bool, bool));
        let cases: &[Case] = &[
            (&[], (false, false, true)),
            (&["--publish-not-ready-addresses"], (true, false, true)),
            (&["--disable-network-policy=true", "--inject-hosts-env=false"], (false, true, false)),
        ];
        for (a, (p, d, i)) in cases {
            let (s, w) = Svc::new(&args(a));
            assert!(w.is_empty(), "{a:?}: {w:?}");
            assert_eq!((s.publish_not_ready_addresses, s.disable_network_policy, s.inject_hosts_env), (*p, *d, *i), "{a:?}");
        }
    }

    #[test]
    fn hosts_config_map_lists_every_pod() {
        let j = job(&[("ps", 1), ("my-worker", 2)], &[("svc", &[])]);
        let d = hosts_data(&j);
        assert_eq!(d["ps.host"], "tj-ps-0.tj");
        assert_eq!(d["my_worker.host"], "tj-my-worker-0.tj\ntj-my-worker-1.tj");
        assert_eq!(d["VC_MY_WORKER_HOSTS"], "tj-my-worker-0.tj,tj-my-worker-1.tj");
        assert_eq!((d["VC_PS_NUM"].as_str(), d["VC_MY_WORKER_NUM"].as_str()), ("1", "2"));
        assert_eq!(d.len(), 6);
    }

    #[test]
    fn job_add_creates_service_config_map_and_network_policy() {
        let j = job(&[("worker", 2)], &[("svc", &[])]);
        let (s, _) = Svc::new(&args(&["--publish-not-ready-addresses"]));
        let objs = s.on_job_add(&j).unwrap();
        assert_eq!(objs.len(), 3);
        let PluginObject::ConfigMap(cm) = &objs[0] else { panic!("{:?}", objs[0]) };
        assert_eq!(cm.metadata.name.as_deref(), Some("tj-svc"));
        let PluginObject::Service(svc) = &objs[1] else { panic!("{:?}", objs[1]) };
        assert_eq!(svc.metadata.name.as_deref(), Some("tj"));
        assert_eq!(svc.metadata.owner_references.as_ref().unwrap()[0].kind, "Job");
        let spec = svc.spec.as_ref().unwrap();
        assert_eq!(spec.cluster_ip.as_deref(), Some("None"));
        assert_eq!(spec.publish_not_ready_addresses, Some(true));
        let sel = spec.selector.as_ref().unwrap();
        assert_eq!((sel[keys::JOB_NAME].as_str(), sel[keys::JOB_NAMESPACE].as_str()), ("tj", "ns"));
        assert_eq!(spec.ports.as_ref().unwrap().len(), 1);
        let PluginObject::NetworkPolicy(np) = &objs[2] else { panic!("{:?}", objs[2]) };
        let nps = np.spec.as_ref().unwrap();
        assert_eq!(nps.pod_selector.as_ref().unwrap().match_labels.as_ref(), Some(sel));
        assert_eq!(nps.policy_types.as_deref(), Some(&["Ingress".to_string()][..]));
        let deleted: Vec<ObjectKind> = s.on_job_delete(&j).into_iter().map(|k| k.kind).collect();
        assert_eq!(deleted, [ObjectKind::ConfigMap, ObjectKind::Service, ObjectKind::NetworkPolicy]);

        let (off, _) = Svc::new(&args(&["--disable-network-policy"]));
        assert_eq!(off.on_job_add(&j).unwrap().len(), 2, "no NetworkPolicy when disabled");
        assert_eq!(off.on_job_delete(&j).len(), 2);
        assert_eq!(off.on_job_update(&j), vec![objs[0].clone()], "an update rewrites the hosts ConfigMap");
    }

    #[test]
    fn pods_get_hostname_subdomain_env_and_mount() {
        let j = job(&[("ps", 1), ("worker", 2)], &[("svc", &[])]);
        let mut p = pod(&j, "worker", 1);
        Svc::new(&[]).0.on_pod_create(&mut p, &j);
        let spec = p.spec.clone().unwrap();
        assert_eq!((spec.hostname.as_deref(), spec.subdomain.as_deref()), (Some("tj-worker-1"), Some("tj")));
        assert_eq!(spec.volumes.as_ref().unwrap().last().unwrap().config_map.as_ref().unwrap().name, "tj-svc");
        for c in spec.containers.iter().chain(spec.init_containers.iter().flatten()) {
            let names: Vec<&str> = c.env.iter().flatten().map(|e| e.name.as_str()).collect();
            assert_eq!(names, ["VC_PS_HOSTS", "VC_PS_NUM", "VC_WORKER_HOSTS", "VC_WORKER_NUM"], "{}", c.name);
            let r = c.env.as_ref().unwrap()[2].value_from.as_ref().unwrap().config_map_key_ref.as_ref().unwrap();
            assert_eq!((r.name.as_str(), r.key.as_str()), ("tj-svc", "VC_WORKER_HOSTS"));
            let m = c.volume_mounts.as_ref().unwrap().last().unwrap();
            assert_eq!((m.name.as_str(), m.mount_path.as_str()), ("tj-svc", "/etc/volcano"));
        }
        // a template hostname is kept; no env when --inject-hosts-env=false
        let mut p = pod(&j, "ps", 0);
        p.spec.as_mut().unwrap().hostname = Some("mine".into());
        Svc::new(&args(&["--inject-hosts-env=false"])).0.on_pod_create(&mut p, &j);
        let spec = p.spec.unwrap();
        assert_eq!(spec.hostname.as_deref(), Some("mine"));
        assert!(spec.containers[0].env.as_ref().is_none_or(|e| e.is_empty()));
        assert_eq!(spec.containers[0].volume_mounts.as_ref().unwrap().len(), 1);
    }
}
