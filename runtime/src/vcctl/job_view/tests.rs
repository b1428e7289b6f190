//! `vcctl job view`'s text, checked line by line against Volcano's `PrintJobInfo` and
//! `PrintEvents` format strings.

use super::*;

const JOB: &str = r#"
metadata:
  name: tf
  namespace: ns
  labels: {team: a}
  creationTimestamp: "2025-06-01T10:00:00Z"
  generation: 2
  resourceVersion: "42"
  uid: u-1
spec:
  minAvailable: 2
  schedulerName: volcano
  plugins: {ssh: [], env: ["--x", "--y"]}
  tasks:
  - name: worker
    replicas: 2
    template:
      metadata: {annotations: {kubernetes.io/availablezone: az1}}
      spec:
        restartPolicy: Never
        imagePullSecrets: [{name: regcred}]
        containers:
        - name: c
          image: busybox
          command: [sh, -c, "sleep 1"]
          ports: [{containerPort: 8080, name: http}]
          resources: {requests: {cpu: 500m}}
status:
  state: {phase: Running}
  minAvailable: 2
  running: 2
  retryCount: 1
  version: 3
  controlledResources: {plugin-ssh: ssh}
  conditions:
  - {status: Pending, lastTransitionTime: "2025-06-01T10:00:01Z"}
  - {status: Running, lastTransitionTime: "2025-06-01T10:00:05Z"}
"#;

#[test]
fn job_info_follows_volcanos_layout() {
    let job: Job = serde_yaml::from_str(JOB).unwrap();
    let want = "\
Name:       \ttf
Namespace:  \tns
Labels:     \t{\"team\":\"a\"}
Annotations:\t<none>
API Version:\tbatch.volcano.sh/v1alpha1
Kind:       \tJob
Metadata:
  Creation Timestamp:\t2025-06-01 10:00:00 +0000 UTC
  Generate Name:     \t
  Generation:        \t2
  Resource Version:  \t42
  UID:               \tu-1
Spec:
  Min Available:     \t2
  Plugins:
    Env:\t[--x --y]
    Ssh:\t[]
  Scheduler Name:    \tvolcano
  Tasks:
    Name:\tworker
    Replicas:\t2
    Template:
      Metadata:
        Annotations:
          Cri . Cci . Io / Container - Type:          \t
          Kubernetes . Io / Availablezone:            \taz1
          Network . Alpha . Kubernetes . Io / Network:\t
        Creation Timestamp:\t0001-01-01 00:00:00 +0000 UTC
      Spec:
        Containers:
          Command:
            sh
            -c
            sleep 1
          Image:\tbusybox
          Name: \tc
          Ports:
            Container Port:\t8080
            Name:          \thttp
          Resources:
            Limits:
              Cpu:   \t0
              Memory:\t0
            Requests:
              Cpu:   \t500m
              Memory:\t0
            Working Dir:\t
        Image Pull Secrets:
          Name:     \tregcred
        Restart Policy:   \tNever
Status:
  Running:      \t2
  RetryCount:   \t1
  Min Available:\t2
  Version:      \t3
  State:
    Phase:\tRunning
  Controlled Resources:
    plugin-ssh: \tssh
  Conditions:
    Status\tTransitionTime
    Pending \t2025-06-01 10:00:01 +0000 UTC 
    Running \t2025-06-01 10:00:05 +0000 UTC 
";
    let got = job_info(&job, true);
    for (i, (g, w)) in got.lines().zip(want.lines()).enumerate() {
        assert_eq!(g, w, "line {}", i + 1);
    }
    assert_eq!(got, want);
    let vjobs = job_info(&job, false);
    assert!(vjobs.ends_with("  Controlled Resources:\n    plugin-ssh: \tssh\n"), "vjobs prints no conditions");
}

fn event(name: &str, reason: &str, count: i32, first: &str, last: &str, host: &str) -> Event {
    serde_json::from_value(serde_json::json!({
        "metadata": {"name": name, "namespace": "ns"},
        "involvedObject": {"kind": "Job", "name": "tf"},
        "type": "Warning",
        "reason": reason,
        "message": " pods refused \n",
        "count": count,
        "firstTimestamp": first,
        "lastTimestamp": last,
        "source": {"component": "vc-controller-manager", "host": host},
    }))
    .unwrap()
}

#[test]
fn events_table_follows_volcanos_layout() {
    let now: i64 = "2025-06-01T12:00:00Z".parse::<k8s_openapi::jiff::Timestamp>().unwrap().as_second();
    let all = [
        event("tf.1", "FailedCreate", 3, "2025-06-01T10:00:00Z", "2025-06-01T11:59:00Z", ""),
        event("tf-other.2", "X", 1, "2025-06-01T10:00:00Z", "2025-06-01T10:00:00Z", ""),
        event("tf.3", "PodGroupPending", 1, "2025-06-01T11:00:00Z", "2025-06-01T11:00:00Z", "node-1"),
    ];
    let mine = job_events(&all, "tf");
    assert_eq!(mine.len(), 2, "only `tf.*` Events, not `tf-other.*`");
    let got = events_table(&mine, now);
    let want = format!(
        "Events:\n{:<15}\t{:<40}\t{:<30}\t{:<40}\tMessage\n{d:<15}\t{d:<40}\t{d:<30}\t{d:<40}\t{d}\n\
         {:<15}\t{:<40}\t{:<30}\t{:<40}\tpods refused\n{:<15}\t{:<40}\t{:<30}\t{:<40}\tpods refused\n",
        "Type",
        "Reason",
        "Age",
        "Form",
        "Warning",
        "FailedCreate",
        "60s (x3 over 120m)",
        "vc-controller-manager",
        "Warning",
        "PodGroupPending",
        "60m",
        "vc-controller-manager, node-1",
        d = "-------"
    );
    assert_eq!(got, want);
    assert_eq!(events_table(&[], now), "Events: \t<none>\n");
}
