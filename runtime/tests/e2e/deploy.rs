//! The migration of deploy/README.md, run against the real test apiserver with kubectl v1.20.2
//! (`runtime/tests/apiserver/kubectl.sh`): Volcano's objects first (its CRDs, a customised
//! scheduler ConfigMap, its ClusterRole and binding, a re-weighted `default` Queue and the
//! vc-scheduler Deployment), then the README's steps to Basalt (`kubectl delete deployment`,
//! `kubectl apply -k deploy/`): the scheduler Deployment is Basalt's and the operator's
//! ConfigMap, ClusterRole, Queue and CRDs are untouched; then the README's rollback to
//! Volcano's scheduler. The fresh-install overlay applies on an empty cluster.

use crate::support;

use std::path::{Path, PathBuf};
use std::process::Command;
use support::TestApiserver;

fn kubectl_path() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = Command::new(root.join("tests/apiserver/kubectl.sh")).output().expect("kubectl.sh runs");
    assert!(out.status.success(), "kubectl.sh: {}", String::from_utf8_lossy(&out.stderr));
    PathBuf::from(String::from_utf8_lossy(&out.stdout).lines().last().expect("a path").trim())
}

struct Kubectl {
    bin: PathBuf,
    kubeconfig: PathBuf,
}

impl Kubectl {
    /// Runs kubectl from the repository root; panics with its output when it fails.
    fn run(&self, args: &[&str]) -> String {
        self.try_run(args).unwrap_or_else(|e| panic!("kubectl {}: {e}", args.join(" ")))
    }

    fn try_run(&self, args: &[&str]) -> Result<String, String> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("repository root").to_path_buf();
        let out = Command::new(&self.bin)
            .arg("--kubeconfig")
            .arg(&self.kubeconfig)
            .args(args)
            .current_dir(root)
            .output()
            .map_err(|e| e.to_string())?;
        if out.status.success() {
            Ok(String::from_utf8_lossy(&out.stdout).into_owned())
        } else {
            Err(format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)))
        }
    }

    fn json(&self, args: &[&str]) -> serde_json::Value {
        let mut a = args.to_vec();
        a.extend(["-o", "json"]);
        serde_json::from_str(&self.run(&a)).expect("kubectl -o json")
    }

    fn apply_stdin(&self, yaml: &str) {
        let path = std::env::temp_dir().join(format!("basalt-volcano-{}.yaml", std::process::id()));
        std::fs::write(&path, yaml).expect("temp file");
        self.run(&["apply", "-f", path.to_str().expect("utf-8 path")]);
        let _ = std::fs::remove_file(path);
    }
}

/// What a Volcano install has that Basalt must not overwrite (shortened from Volcano's
/// installer; the values are the operator's own).
const VOLCANO: &str = r#"
apiVersion: v1
kind: Namespace
metadata: {name: volcano-system}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: volcano-scheduler, namespace: volcano-system}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: volcano-scheduler, labels: {installed-by: volcano}}
rules:
  - apiGroups: ["*"]
    resources: ["*"]
    verbs: ["*"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: volcano-scheduler-role, labels: {installed-by: volcano}}
subjects: [{kind: ServiceAccount, name: volcano-scheduler, namespace: volcano-system}]
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: volcano-scheduler}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: volcano-scheduler-configmap, namespace: volcano-system}
data:
  volcano-scheduler.conf: |
    actions: "enqueue, allocate"
    tiers:
    - plugins:
      - name: gang
      - name: predicates
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: default}
spec: {weight: 7, reclaimable: false}
"#;

const VC_SCHEDULER: &str = r#"
apiVersion: apps/v1
kind: Deployment
metadata: {name: volcano-scheduler, namespace: volcano-system, labels: {app: volcano-scheduler}}
spec:
  replicas: 1
  selector: {matchLabels: {app: volcano-scheduler}}
  template:
    metadata: {labels: {app: volcano-scheduler}}
    spec:
      serviceAccountName: volcano-scheduler
      containers:
        - name: volcano-scheduler
          image: volcanosh/vc-scheduler:v1.12.0
          args: ["--scheduler-conf=/volcano.scheduler/volcano-scheduler.conf"]
"#;

fn image(k: &Kubectl) -> String {
    let d = k.json(&["-n", "volcano-system", "get", "deployment", "volcano-scheduler"]);
    d["spec"]["template"]["spec"]["containers"][0]["image"].as_str().unwrap_or_default().to_string()
}

#[test]
fn migration_from_volcano_keeps_the_operators_objects_and_rolls_back() {
    let server = TestApiserver::start().expect("test apiserver");
    let k = Kubectl { bin: kubectl_path(), kubeconfig: server.admin_kubeconfig() };

    // Volcano's install: its CRDs (Basalt's copies stand in for them), its objects, vc-scheduler.
    k.run(&[
        "apply",
        "-f",
        "deploy/crds/scheduling.volcano.sh_podgroups.yaml",
        "-f",
        "deploy/crds/scheduling.volcano.sh_queues.yaml",
        "-f",
        "deploy/crds/batch.volcano.sh_jobs.yaml",
    ]);
    k.run(&["wait", "--for", "condition=established", "crd", "--all", "--timeout=60s"]);
    // The operator's own change to a CRD, which re-applying Basalt's copy would revert.
    k.run(&["patch", "crd", "queues.scheduling.volcano.sh", "--type=merge", "-p", r#"{"spec":{"names":{"shortNames":["vq"]}}}"#]);
    k.apply_stdin(VOLCANO);
    k.apply_stdin(VC_SCHEDULER);
    let before = |what: &[&str]| k.json(what);
    let conf_before = before(&["-n", "volcano-system", "get", "configmap", "volcano-scheduler-configmap"])["data"].clone();
    let role_before = before(&["get", "clusterrole", "volcano-scheduler"])["rules"].clone();
    assert_eq!(image(&k), "volcanosh/vc-scheduler:v1.12.0");

    // deploy/README.md, "Swapping Volcano's scheduler for Basalt", steps 1 and 2.
    k.run(&["-n", "volcano-system", "delete", "deployment", "volcano-scheduler"]);
    k.run(&["apply", "-k", "deploy/"]);
    assert_eq!(image(&k), "basalt:latest", "the scheduler Deployment is Basalt's");
    let d = k.json(&["-n", "volcano-system", "get", "deployment", "volcano-scheduler"]);
    let cmd = d["spec"]["template"]["spec"]["containers"][0]["command"].to_string();
    assert!(cmd.contains("basalt") && cmd.contains("scheduler"), "{cmd}");
    k.run(&["-n", "volcano-system", "get", "service", "volcano-scheduler-service"]);
    // The operator's objects are as they were.
    assert_eq!(k.json(&["-n", "volcano-system", "get", "configmap", "volcano-scheduler-configmap"])["data"], conf_before);
    let role = k.json(&["get", "clusterrole", "volcano-scheduler"]);
    assert_eq!(role["rules"], role_before, "Volcano's ClusterRole is not replaced");
    assert_eq!(role["metadata"]["labels"]["installed-by"], "volcano");
    let binding = k.json(&["get", "clusterrolebinding", "volcano-scheduler-role"]);
    assert_eq!(binding["metadata"]["labels"]["installed-by"], "volcano");
    assert_eq!(k.json(&["get", "queue", "default"])["spec"]["weight"], 7, "the operator's Queue weight is kept");
    let crd = k.json(&["get", "crd", "queues.scheduling.volcano.sh"]);
    assert_eq!(crd["spec"]["names"]["shortNames"], serde_json::json!(["vq"]), "the CRD is not re-applied");

    // deploy/README.md, "Going back to Volcano's scheduler".
    k.run(&["-n", "volcano-system", "delete", "deployment", "volcano-scheduler"]);
    k.apply_stdin(VC_SCHEDULER);
    assert_eq!(image(&k), "volcanosh/vc-scheduler:v1.12.0");
    assert_eq!(k.json(&["-n", "volcano-system", "get", "configmap", "volcano-scheduler-configmap"])["data"], conf_before);

    // The fresh-install overlay on a cluster without Volcano (README: CRDs first, then the rest).
    let fresh = TestApiserver::start().expect("second test apiserver");
    let f = Kubectl { bin: k.bin.clone(), kubeconfig: fresh.admin_kubeconfig() };
    f.run(&["apply", "-k", "deploy/crds"]);
    f.run(&["wait", "--for", "condition=established", "crd", "--all", "--timeout=60s"]);
    f.run(&["apply", "-k", "deploy/fresh/"]);
    assert_eq!(image(&f), "basalt:latest");
    let conf = f.json(&["-n", "volcano-system", "get", "configmap", "volcano-scheduler-configmap"]);
    assert!(conf["data"]["volcano-scheduler.conf"].as_str().is_some_and(|c| c.contains("binpack")), "Basalt's ConfigMap: {conf}");
    assert_eq!(f.json(&["get", "queue", "root"])["spec"]["reclaimable"], false);
    f.run(&["get", "clusterrolebinding", "volcano-scheduler-role"]);
}
