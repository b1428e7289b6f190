//! The `ssh` job plugin (Volcano's `plugins/ssh`, volcano-behaviour.md §5.1 "Job plugins"):
//! password-free ssh between a job's pods (MPI's launcher reaches its workers this way).
//! * `OnJobAdd`: Secret `<job>-ssh` owned by the Job, with `id_rsa` (PKCS#1 PEM), `id_rsa.pub`
//!   and `authorized_keys` (the OpenSSH public key line) and `config` (`StrictHostKeyChecking
//!   no`, `UserKnownHostsFile /dev/null`, then `Host <pod>` / `HostName <pod>.<subdomain>` per
//!   pod). The pair is a fresh RSA 2048-bit key ([`super::rsa_key`], Volcano's format), or the
//!   one given by `--ssh-private-key`/`--ssh-public-key`.
//! * `OnPodCreate`: the Secret as volume `<job>-ssh` (items under `.ssh/`, mode 0600) mounted
//!   with subPath `.ssh` at `--ssh-key-file-path` in every container and init container.
//! * `OnJobDelete`: the Secret deleted. `OnJobUpdate`: nothing (Volcano keeps the first key:
//!   a subPath mount would not see an update).
//!
//! Flags: `--ssh-key-file-path` (`/root/.ssh`), `--ssh-private-key`, `--ssh-public-key` (both
//! empty: generate), `--ssh-port` (22; another port adds `Port <n>` to each `Host` entry of
//! `config`).

use super::flags::{self, FlagKind};
use super::rsa_key::KeyPair;
use super::{parse_warning, task_hosts, JobPlugin, ObjectKey, ObjectKind, PluginObject};
use crate::controller::build::owner_reference;
use crate::crd::Job;
use k8s_openapi::api::core::v1::{KeyToPath, Pod, Secret, SecretVolumeSource, Volume, VolumeMount};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::ByteString;
use std::collections::BTreeMap;

/// The private key's Secret key and file name.
pub const PRIVATE_KEY: &str = "id_rsa";
/// The public key's.
pub const PUBLIC_KEY: &str = "id_rsa.pub";
/// The authorized keys'.
pub const AUTHORIZED_KEYS: &str = "authorized_keys";
/// The ssh client config's.
pub const CONFIG: &str = "config";
/// `--ssh-key-file-path`'s default.
pub const DEFAULT_PATH: &str = "/root/.ssh";
/// The directory inside the volume (and the mount's subPath).
pub const RELATIVE_PATH: &str = ".ssh";

/// The `ssh` plugin with its flags.
#[derive(Clone, PartialEq, Eq)]
pub struct Ssh {
    /// `--ssh-key-file-path`: where the keys are mounted.
    pub key_file_path: String,
    /// `--ssh-private-key`: a PEM private key to use instead of a generated one.
    pub private_key: String,
    /// `--ssh-public-key`: its public key line.
    pub public_key: String,
    /// `--ssh-port`: the port written into `config` when not 22.
    pub port: i64,
}

impl std::fmt::Debug for Ssh {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ssh")
            .field("key_file_path", &self.key_file_path)
            .field("private_key", &if self.private_key.is_empty() { "" } else { "<given>" })
            .field("port", &self.port)
            .finish_non_exhaustive()
    }
}

impl Ssh {
    /// Parses `args`; returns the plugin and a warning when a flag does not parse.
    pub fn new(args: &[String]) -> (Ssh, Vec<String>) {
        let (f, err) = flags::parse(
            &[
                ("ssh-key-file-path", FlagKind::String),
                ("ssh-private-key", FlagKind::String),
                ("ssh-public-key", FlagKind::String),
                ("ssh-port", FlagKind::Int),
            ],
            args,
        );
        let p = Ssh {
            key_file_path: f.string("ssh-key-file-path", DEFAULT_PATH),
            private_key: f.string("ssh-private-key", ""),
            public_key: f.string("ssh-public-key", ""),
            port: f.int("ssh-port", 22),
        };
        let mut w = parse_warning(args, err);
        if !p.private_key.is_empty() && p.public_key.is_empty() {
            w.push("--ssh-private-key given without --ssh-public-key: id_rsa.pub and authorized_keys are empty".into());
        }
        (p, w)
    }

    /// The Secret of `pair` for `job`.
    pub fn secret(&self, job: &Job, pair: &KeyPair) -> Secret {
        let data = BTreeMap::from([
            (PRIVATE_KEY.to_string(), ByteString(pair.private_pem.clone().into_bytes())),
            (PUBLIC_KEY.to_string(), ByteString(pair.public_line.clone().into_bytes())),
            (AUTHORIZED_KEYS.to_string(), ByteString(pair.public_line.clone().into_bytes())),
            (CONFIG.to_string(), ByteString(self.config(job).into_bytes())),
        ]);
        Secret {
            metadata: ObjectMeta {
                name: Some(secret_name(job)),
                namespace: job.metadata.namespace.clone(),
                owner_references: Some(vec![owner_reference(job)]),
                ..Default::default()
            },
            data: Some(data),
            ..Default::default()
        }
    }

    /// The ssh client `config`: every pod of the job by its short name.
    pub fn config(&self, job: &Job) -> String {
        let mut out = String::from("StrictHostKeyChecking no\nUserKnownHostsFile /dev/null\n");
        for (ti, t) in job.spec.tasks.iter().enumerate() {
            for fqdn in task_hosts(job, ti, t) {
                let host = fqdn.split('.').next().unwrap_or_default();
                out.push_str(&format!("Host {host}\n  HostName {fqdn}\n"));
                if self.port != 22 {
                    out.push_str(&format!("  Port {}\n", self.port));
                }
            }
        }
        out
    }
}

/// `<job>-ssh`.
pub fn secret_name(job: &Job) -> String {
    format!("{}-ssh", job.metadata.name.as_deref().unwrap_or_default())
}

impl JobPlugin for Ssh {
    fn name(&self) -> &'static str {
        "ssh"
    }

    fn on_pod_create(&self, pod: &mut Pod, job: &Job) {
        let name = secret_name(job);
        let Some(spec) = pod.spec.as_mut() else { return };
        let items = [PRIVATE_KEY, PUBLIC_KEY, AUTHORIZED_KEYS, CONFIG]
            .iter()
            .map(|k| KeyToPath { key: k.to_string(), path: format!("{RELATIVE_PATH}/{k}"), ..Default::default() })
            .collect();
        spec.volumes.get_or_insert_with(Vec::new).push(Volume {
            name: name.clone(),
            secret: Some(SecretVolumeSource {
                secret_name: Some(name.clone()),
                items: Some(items),
                default_mode: Some(0o600),
                ..Default::default()
            }),
            ..Default::default()
        });
        let mount = VolumeMount {
            name,
            mount_path: self.key_file_path.clone(),
            sub_path: Some(RELATIVE_PATH.into()),
            ..Default::default()
        };
        for c in spec.containers.iter_mut().chain(spec.init_containers.iter_mut().flatten()) {
            c.volume_mounts.get_or_insert_with(Vec::new).push(mount.clone());
        }
    }

    fn on_job_add(&self, job: &Job) -> Result<Vec<PluginObject>, String> {
        let pair = if self.private_key.is_empty() {
            super::rsa_key::generate().map_err(|e| format!("Job {}: plugin ssh: {e}", super::job_key(job)))?
        } else {
            KeyPair { private_pem: self.private_key.clone(), public_line: self.public_key.clone() }
        };
        Ok(vec![PluginObject::Secret(self.secret(job, &pair))])
    }

    fn on_job_delete(&self, job: &Job) -> Vec<ObjectKey> {
        vec![ObjectKey { kind: ObjectKind::Secret, name: secret_name(job) }]
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
        let (d, w) = Ssh::new(&[]);
        assert!(w.is_empty());
        assert_eq!((d.key_file_path.as_str(), d.private_key.as_str(), d.port), ("/root/.ssh", "", 22));
        let (s, w) = Ssh::new(&args(&["--ssh-key-file-path=/home/mpi/.ssh", "--ssh-private-key", "PEM", "--ssh-public-key=PUB"]));
        assert!(w.is_empty(), "{w:?}");
        assert_eq!((s.key_file_path.as_str(), s.private_key.as_str(), s.public_key.as_str()), ("/home/mpi/.ssh", "PEM", "PUB"));
        assert_eq!(Ssh::new(&args(&["--ssh-private-key=PEM"])).1.len(), 1, "a private key without its public half is reported");
    }

    #[test]
    fn secret_holds_the_given_keys_and_config() {
        let j = job(&[("mpimaster", 1), ("mpiworker", 2)], &[("ssh", &[])]);
        let (s, _) = Ssh::new(&args(&["--ssh-private-key=PEM", "--ssh-public-key=ssh-rsa AAA\n"]));
        let objs = s.on_job_add(&j).unwrap();
        let [PluginObject::Secret(sec)] = &objs[..] else { panic!("{objs:?}") };
        assert_eq!(sec.metadata.name.as_deref(), Some("tj-ssh"));
        assert_eq!(sec.metadata.owner_references.as_ref().unwrap()[0].name, "tj");
        let d = sec.data.as_ref().unwrap();
        let text = |k: &str| String::from_utf8(d[k].0.clone()).unwrap();
        assert_eq!(
            (text("id_rsa"), text("id_rsa.pub"), text("authorized_keys")),
            ("PEM".into(), "ssh-rsa AAA\n".into(), "ssh-rsa AAA\n".into())
        );
        assert_eq!(
            text("config"),
            "StrictHostKeyChecking no\nUserKnownHostsFile /dev/null\nHost tj-mpimaster-0\n  HostName tj-mpimaster-0.tj\n\
             Host tj-mpiworker-0\n  HostName tj-mpiworker-0.tj\nHost tj-mpiworker-1\n  HostName tj-mpiworker-1.tj\n"
        );
        assert_eq!(s.on_job_delete(&j), vec![ObjectKey { kind: ObjectKind::Secret, name: "tj-ssh".into() }]);
        let (p, _) = Ssh::new(&args(&["--ssh-port=2222"]));
        assert!(p.config(&j).contains("Host tj-mpiworker-1\n  HostName tj-mpiworker-1.tj\n  Port 2222\n"));
    }

    #[test]
    fn generated_secret_has_a_key_pair() {
        let j = job(&[("w", 1)], &[("ssh", &[])]);
        let objs = Ssh::new(&[]).0.on_job_add(&j).unwrap();
        let PluginObject::Secret(sec) = &objs[0] else { panic!() };
        let d = sec.data.as_ref().unwrap();
        assert!(d["id_rsa"].0.starts_with(b"-----BEGIN RSA PRIVATE KEY-----"));
        assert!(d["id_rsa.pub"].0.starts_with(b"ssh-rsa "));
        assert_eq!(d["id_rsa.pub"], d["authorized_keys"]);
    }

    #[test]
    fn pods_mount_the_keys() {
        let j = job(&[("w", 1)], &[("ssh", &[])]);
        let mut p = pod(&j, "w", 0);
        Ssh::new(&args(&["--ssh-key-file-path=/home/u/.ssh"])).0.on_pod_create(&mut p, &j);
        let spec = p.spec.unwrap();
        let v = spec.volumes.unwrap().pop().unwrap();
        let src = v.secret.unwrap();
        assert_eq!((v.name.as_str(), src.secret_name.as_deref(), src.default_mode), ("tj-ssh", Some("tj-ssh"), Some(0o600)));
        let paths: Vec<String> = src.items.unwrap().into_iter().map(|i| i.path).collect();
        assert_eq!(paths, [".ssh/id_rsa", ".ssh/id_rsa.pub", ".ssh/authorized_keys", ".ssh/config"]);
        for c in spec.containers.iter().chain(spec.init_containers.iter().flatten()) {
            let m = c.volume_mounts.as_ref().unwrap().last().unwrap();
            assert_eq!((m.mount_path.as_str(), m.sub_path.as_deref()), ("/home/u/.ssh", Some(".ssh")), "{}", c.name);
        }
    }
}
