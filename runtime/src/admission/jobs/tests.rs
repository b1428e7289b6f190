use super::*;
use crate::crd::Queue;

fn job(spec: &str) -> Job {
    serde_yaml::from_str(&format!(
        "{{apiVersion: batch.volcano.sh/v1alpha1, kind: Job, metadata: {{name: j, namespace: ns}}, spec: {spec}}}"
    ))
    .unwrap()
}

const TASK: &str = "{name: worker, replicas: 2, template: {spec: {containers: [{name: c, image: busybox}]}}}";

fn queues() -> QueueIndex {
    let q = |y: &str| -> Queue { serde_yaml::from_str(y).unwrap() };
    QueueIndex::new([
        q("{metadata: {name: default}, spec: {}, status: {state: Open}}"),
        q("{metadata: {name: shut}, spec: {}, status: {state: Closed}}"),
        q("{metadata: {name: root}, spec: {}, status: {state: Open}}"),
        q("{metadata: {name: parent}, spec: {}, status: {state: Open}}"),
        q("{metadata: {name: child}, spec: {parent: parent}, status: {state: Open}}"),
    ])
}

fn create(spec: &str) -> Decision {
    validate(Operation::Create, &job(spec), None, &queues())
}

#[test]
fn a_valid_job_is_admitted() {
    let d = create(&format!("{{queue: default, minAvailable: 2, tasks: [{TASK}], policies: [{{event: PodEvicted, action: RestartJob}}], plugins: {{svc: []}}}}"));
    assert!(d.allowed, "{}", d.message);
}

#[test]
fn task_rules_name_the_task_and_job() {
    assert_eq!(create("{queue: default}").message, "No task specified in job spec");
    let t = "{name: w, replicas: 1, minAvailable: 2, template: {spec: {containers: [{name: c, image: i}]}}}";
    assert_eq!(
        create(&format!("{{queue: default, tasks: [{t}]}}")).message,
        "'minAvailable' is greater than 'replicas' in task: w, job: j;"
    );
    assert_eq!(create(&format!("{{queue: default, tasks: [{TASK}, {TASK}]}}")).message, "duplicated task name worker;");
    let bad = "{name: Worker_1, replicas: 1, template: {spec: {containers: [{name: c, image: i}]}}}";
    let m = create(&format!("{{queue: default, tasks: [{bad}]}}")).message;
    assert!(m.starts_with("spec.task[0].metadata.name: Invalid value: \"Worker_1\": a lowercase RFC 1123 subdomain"), "{m}");
    let m = create(&format!("{{queue: default, minAvailable: 3, tasks: [{TASK}]}}")).message;
    assert_eq!(m, "job 'minAvailable' should not be greater than total replicas in tasks;");
    let none = "{name: w, replicas: 1, template: {spec: {containers: []}}}";
    assert_eq!(
        create(&format!("{{queue: default, tasks: [{none}]}}")).message,
        "spec.task[0].template.spec.containers: Required value."
    );
    let topo = "{name: w, replicas: 1, topologyPolicy: single-numa-node, template: {spec: {containers: [{name: c, image: i, resources: {requests: {cpu: 500m}}}]}}}";
    assert_eq!(
        create(&format!("{{queue: default, tasks: [{topo}]}}")).message,
        "the cpu request isn't an integer in spec.task[0] container[0]."
    );
}

#[test]
fn policies_follow_volcano() {
    let with = |p: &str| create(&format!("{{queue: default, tasks: [{TASK}], policies: [{p}]}}")).message;
    let m = with("{event: PodFailed, exitCode: 3, action: RestartJob}");
    assert!(m.starts_with("1 error occurred:\n\t* must not specify event and exitCode simultaneously"), "{m:?}");
    assert!(m.ends_with(
        "valid actions are [AbortJob RestartJob RestartTask RestartPod RestartPartition TerminateJob CompleteJob ResumeJob];"
    ));
    assert!(with("{action: RestartJob}").contains("either event and exitCode should be specified"));
    assert!(with("{event: Nope, action: RestartJob}").contains("spec.policies: Invalid value: \"Nope\": invalid policy event"));
    assert!(
        with("{event: PodFailed, action: Explode}").contains("spec.policies: Invalid value: \"Explode\": invalid policy action")
    );
    assert!(with("{exitCode: 0, action: RestartJob}").contains("0 is not a valid error code"));
    assert!(with("{exitCode: 2, action: RestartJob}, {exitCode: 2, action: AbortJob}").contains("duplicate exitCode 2"));
    assert!(with("{event: PodFailed, action: RestartJob}, {event: PodFailed, action: AbortJob}")
        .contains("duplicate event PodFailed  across different policy"));
    assert!(with("{event: '*', action: RestartJob}, {event: PodFailed, action: AbortJob}")
        .contains("if there's * here, no other policy should be here"));
}

#[test]
fn plugins_volumes_queues_and_dependencies() {
    let with = |extra: &str| create(&format!("{{tasks: [{TASK}], {extra}}}")).message;
    assert_eq!(with("queue: default, plugins: {nope: []}"), "unable to find job plugin: nope;");
    assert_eq!(with("queue: default, plugins: {mpi: ['--master=launcher']}"), "The specified mpi master task was not found");
    assert_eq!(with("queue: default, volumes: [{mountPath: ''}]"), "mountPath is required;");
    assert_eq!(
        with("queue: default, volumes: [{mountPath: /d, volumeClaimName: c}, {mountPath: /d, volumeClaimName: c}]"),
        "duplicated mountPath: /d;"
    );
    assert_eq!(with("queue: default, volumes: [{mountPath: /d}]"), "either VolumeClaim or VolumeClaimName must be specified;");
    assert_eq!(with("queue: nope"), "unable to find job queue: queue.scheduling.volcano.sh \"nope\" not found;");
    assert_eq!(with("queue: shut"), "can only submit job to queue with state `Open`, queue `shut` status is `Closed`;");
    assert_eq!(with("queue: root"), "can not submit job to root queue;");
    assert_eq!(with("queue: parent"), "can only submit job to leaf queue, queue `parent` has 1 child queues;");
    let a = "{name: a, replicas: 1, dependsOn: {name: [b]}, template: {spec: {containers: [{name: c, image: i}]}}}";
    let b = "{name: b, replicas: 1, dependsOn: {name: [a]}, template: {spec: {containers: [{name: c, image: i}]}}}";
    let m = create(&format!("{{queue: default, tasks: [{a}, {b}]}}")).message;
    assert_eq!(m, "job has dependencies between tasks, but doesn't form a directed acyclic graph(DAG);");
    let b_ok = "{name: b, replicas: 1, template: {spec: {containers: [{name: c, image: i}]}}}";
    assert!(create(&format!("{{queue: default, tasks: [{a}, {b_ok}]}}")).allowed);
}

#[test]
fn partition_arithmetic_is_checked() {
    let t = |pp: &str, extra: &str| {
        format!("{{name: w, replicas: 4, {extra} partitionPolicy: {pp}, template: {{spec: {{containers: [{{name: c, image: i}}]}}}}}}")
    };
    let m = create(&format!("{{queue: default, tasks: [{}]}}", t("{totalPartitions: 3, partitionSize: 2}", ""))).message;
    assert_eq!(m, "'Replicas' are not equal to TotalPartitions*PartitionSize in task: w, job: j");
    let m = create(&format!(
        "{{queue: default, tasks: [{}]}}",
        t("{totalPartitions: 2, partitionSize: 2, minPartitions: 1}", "minAvailable: 4,")
    ))
    .message;
    assert_eq!(m, "'MinAvailable' is not equal to MinPartitions*PartitionSize in task: w, job: j");
    assert!(
        create(&format!(
            "{{queue: default, tasks: [{}]}}",
            t("{totalPartitions: 2, partitionSize: 2, minPartitions: 1}", "minAvailable: 2,")
        ))
        .allowed
    );
}

#[test]
fn updates_change_only_what_volcano_allows() {
    let old = job(&format!("{{queue: default, minAvailable: 2, tasks: [{TASK}]}}"));
    let up = |spec: &str| validate(Operation::Update, &job(spec), Some(&old), &queues()).message;
    assert_eq!(up(&format!("{{queue: default, minAvailable: 1, priorityClassName: high, tasks: [{TASK}]}}")), "");
    assert_eq!(
        up(&format!("{{queue: other, minAvailable: 2, tasks: [{TASK}]}}")),
        "job updates may not change fields other than `minAvailable`, `tasks[*].replicas under spec` and `PriorityClassName`"
    );
    assert_eq!(
        up(&format!("{{queue: default, minAvailable: 5, tasks: [{TASK}]}}")),
        "job 'minAvailable' must not be greater than total replicas"
    );
    assert_eq!(
        up(&format!("{{queue: default, minAvailable: 2, tasks: [{TASK}, {{name: x, replicas: 1}}]}}")),
        "job updates may not add or remove tasks"
    );
    let neg = "{name: worker, replicas: -1, template: {spec: {containers: [{name: c, image: busybox}]}}}";
    assert_eq!(up(&format!("{{queue: default, tasks: [{neg}]}}")), "'replicas' must be >= 0 in task: worker");
}

#[test]
fn mutate_fills_volcano_defaults() {
    let j = job("{tasks: [{replicas: 2, template: {spec: {hostNetwork: true, containers: [{name: c, image: i}]}}}, {name: ps, replicas: 3, minAvailable: 1, maxRetry: 5}], plugins: {mpi: []}}");
    let d = mutate(Operation::Create, &j, "volcano");
    let ops: Vec<String> = d.patch.iter().map(|p| format!("{} {}", p.path, p.value)).collect();
    assert_eq!(
        ops,
        [
            "/spec/queue \"default\"",
            "/spec/schedulerName \"volcano\"",
            "/spec/maxRetry 3",
            "/spec/tasks/0/name \"default0\"",
            "/spec/tasks/0/template/spec/dnsPolicy \"ClusterFirstWithHostNet\"",
            "/spec/tasks/0/minAvailable 2",
            "/spec/tasks/0/maxRetry 3",
            "/spec/minAvailable 3",
            "/spec/plugins/svc []",
            "/spec/plugins/ssh []",
        ]
    );
    let full = job("{queue: q, schedulerName: s, maxRetry: 1, minAvailable: 2, tasks: [{name: w, replicas: 2, minAvailable: 2, maxRetry: 1}]}");
    assert!(mutate(Operation::Create, &full, "volcano").patch.is_empty());
    let parts =
        job("{tasks: [{name: w, replicas: 4, partitionPolicy: {totalPartitions: 2, partitionSize: 2, minPartitions: 1}}]}");
    assert!(mutate(Operation::Create, &parts, "volcano")
        .patch
        .iter()
        .any(|p| p.path == "/spec/tasks/0/minAvailable" && p.value == 2));
}
