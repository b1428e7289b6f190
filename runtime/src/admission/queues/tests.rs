use super::*;

fn queue(yaml: &str) -> Queue {
    serde_yaml::from_str(yaml).unwrap()
}

fn q(name: &str, parent: Option<&str>, spec: &str) -> Queue {
    let parent = parent.map(|p| format!("parent: {p}, ")).unwrap_or_default();
    queue(&format!(
        "{{apiVersion: scheduling.volcano.sh/v1beta1, kind: Queue, metadata: {{name: {name}}}, spec: {{{parent}{spec}}}}}"
    ))
}

fn create(x: &Queue, ix: &QueueIndex) -> Decision {
    validate(Operation::Create, x, None, ix, &QueueRules::default())
}

#[test]
fn guarantee_deserved_capability_order_and_negative_quantities_are_refused() {
    let ix = QueueIndex::default();
    let d = create(&q("a", None, "guarantee: {resource: {cpu: '4'}}, deserved: {cpu: '2'}"), &ix);
    assert_eq!(d.message, "requestBody.spec.deserved.cpu: Invalid value: \"2\": deserved[cpu]=2 must be >= guarantee[cpu]=4");
    let d = create(&q("a", None, "guarantee: {resource: {cpu: '4'}}"), &ix);
    assert_eq!(d.message, "requestBody.spec.deserved.cpu: Invalid value: \"<nil>\": deserved[cpu] must be >= guarantee[cpu]=4");
    let d = create(&q("a", None, "deserved: {cpu: '8'}, capability: {cpu: '4'}"), &ix);
    assert_eq!(d.message, "requestBody.spec.deserved.cpu: Invalid value: \"8\": deserved[cpu]=8 must be <= capability[cpu]=4");
    let d = create(&q("a", None, "capability: {cpu: '-1', memory: 1Gi}"), &ix);
    assert_eq!(d.message, "requestBody.spec.capability.cpu: Invalid value: \"-1\": must be greater than or equal to 0");
    let two = create(&q("a", None, "capability: {cpu: '-1', memory: '-1'}"), &ix);
    assert!(
        two.message.starts_with("[requestBody.spec.capability.cpu")
            && two.message.contains(", requestBody.spec.capability.memory"),
        "{}",
        two.message
    );
    assert!(
        create(&q("a", None, "guarantee: {resource: {cpu: '2'}}, deserved: {cpu: '2'}, capability: {cpu: '4'}"), &ix).allowed
    );
}

#[test]
fn state_and_hierarchy_annotations_follow_volcano() {
    let ix = QueueIndex::new([queue("{metadata: {name: dev, annotations: {volcano.sh/hierarchy: root/sci/dev, volcano.sh/hierarchy-weights: 1/2/3}}, spec: {}}")]);
    let bad_state = queue("{metadata: {name: a}, spec: {}, status: {state: Paused}}");
    assert_eq!(
        create(&bad_state, &ix).message,
        "requestBody.spec.state: Invalid value: \"Paused\": queue state must be in [Open Closed]"
    );
    let short =
        queue("{metadata: {name: a, annotations: {volcano.sh/hierarchy: root/a, volcano.sh/hierarchy-weights: '1'}}, spec: {}}");
    assert!(create(&short, &ix)
        .message
        .ends_with("volcano.sh/hierarchy must have the same length with volcano.sh/hierarchy-weights"));
    let zero =
        queue("{metadata: {name: a, annotations: {volcano.sh/hierarchy: root/a, volcano.sh/hierarchy-weights: 1/0}}, spec: {}}");
    assert!(create(&zero, &ix).message.ends_with("0 in the 1/0 must be larger than 0"));
    let nan =
        queue("{metadata: {name: a, annotations: {volcano.sh/hierarchy: root/a, volcano.sh/hierarchy-weights: 1/x}}, spec: {}}");
    assert!(create(&nan, &ix)
        .message
        .ends_with("x in the 1/x is invalid number: strconv.ParseFloat: parsing \"x\": invalid syntax"));
    let prefix = queue(
        "{metadata: {name: sci, annotations: {volcano.sh/hierarchy: root/sci, volcano.sh/hierarchy-weights: 1/2}}, spec: {}}",
    );
    assert!(create(&prefix, &ix).message.ends_with("root/sci is not allowed to be in the sub path of root/sci/dev of queue dev"));
}

#[test]
fn hierarchy_parent_rules() {
    let rules = QueueRules { max_depth: 3, ..QueueRules::default() };
    let busy = queue("{metadata: {name: busy}, spec: {}, status: {allocated: {pods: '2'}}}");
    let ix = QueueIndex::new([q("a", None, ""), q("b", Some("a"), ""), q("c", Some("b"), ""), busy]);
    let v = |x: &Queue| validate(Operation::Create, x, None, &ix, &rules).message;
    assert_eq!(v(&q("self", Some("self"), "")), "queue self cannot use itself as parent");
    assert_eq!(v(&q("d", Some("c"), "")), "queue d exceeds the maximum allowed depth of 3");
    assert_eq!(
        v(&q("d", Some("nope"), "")),
        "failed to get parent queue nope of queue d: queue.scheduling.volcano.sh \"nope\" not found"
    );
    assert_eq!(v(&q("d", Some("busy"), "")), "queue busy cannot be the parent queue of queue d because it has allocated Pods: 2");
    assert_eq!(v(&q("d", Some("b"), "")), "");
}

#[test]
fn hierarchy_resources_rules() {
    let ix = QueueIndex::new([
        q("p", None, "capability: {cpu: '10'}, deserved: {cpu: '8'}, guarantee: {resource: {cpu: '4'}}"),
        q("c1", Some("p"), "deserved: {cpu: '5'}, guarantee: {resource: {cpu: '3'}}"),
    ]);
    let v = |x: &Queue| create(x, &ix).message;
    assert_eq!(
        v(&q("c2", Some("p"), "capability: {cpu: '12'}")),
        "queue c2 capability[cpu]=12 exceeds its ancestor's capability=10"
    );
    assert_eq!(
        v(&q("c2", Some("p"), "deserved: {cpu: '2'}, guarantee: {resource: {cpu: '2'}}")),
        "parent queue p validation failed: sum of children's guarantee (cpu 5000.00, memory 0.00) exceeds parent's guarantee limit (cpu 4000.00, memory 0.00)"
    );
    assert_eq!(
        v(&q("c2", Some("p"), "deserved: {cpu: '4'}")),
        "parent queue p validation failed: sum of children's deserved (cpu 9000.00, memory 0.00) exceeds parent's deserved limit (cpu 8000.00, memory 0.00)"
    );
    assert_eq!(v(&q("c2", Some("p"), "deserved: {cpu: '3'}, guarantee: {resource: {cpu: '1'}}")), "");
    // A parent updated below its children's capability.
    let ix = QueueIndex::new([q("p", None, "capability: {cpu: '10'}"), q("c1", Some("p"), "capability: {cpu: '6'}")]);
    let old = q("p", None, "capability: {cpu: '10'}");
    let new = q("p", None, "capability: {cpu: '5'}");
    let d = validate(Operation::Update, &new, Some(&old), &ix, &QueueRules::default());
    assert_eq!(d.message, "queue p capability[cpu]=5 is smaller than its descendants' max capability=6");
    // An update that changes neither resources nor parent is not re-checked.
    let same = q("p", None, "capability: {cpu: '10'}, weight: 3");
    assert!(validate(Operation::Update, &same, Some(&old), &ix, &QueueRules::default()).allowed);
}

#[test]
fn root_is_protected_and_deletes_are_checked() {
    let ix = QueueIndex::new([
        q("root", None, "capability: {cpu: '10'}"),
        q("p", None, ""),
        q("c", Some("p"), ""),
        queue("{metadata: {name: used}, spec: {}, status: {allocated: {pods: '1'}}}"),
    ]);
    let rules = QueueRules::default();
    let d = validate(
        Operation::Update,
        &q("root", None, "capability: {cpu: '20'}"),
        Some(&q("root", None, "capability: {cpu: '10'}")),
        &ix,
        &rules,
    );
    assert_eq!(d.message, "root queue's resource attributes (capability, deserved, guarantee) cannot be modified");
    let off = QueueRules { root_protection: false, ..QueueRules::default() };
    assert!(
        validate(
            Operation::Update,
            &q("root", None, "capability: {cpu: '20'}"),
            Some(&q("root", None, "capability: {cpu: '10'}")),
            &ix,
            &off
        )
        .allowed
    );
    let del = |name: &str, rules: &QueueRules| validate(Operation::Delete, &q(name, None, ""), None, &ix, rules).message;
    assert_eq!(del("default", &rules), "`default` queue can not be deleted");
    assert_eq!(del("root", &rules), "`root` queue can not be deleted");
    assert_eq!(del("p", &rules), "queue p can not be deleted because it has 1 child queues: c");
    assert_eq!(del("used", &rules), "");
    let check = QueueRules { allocated_pods_check: true, ..QueueRules::default() };
    assert_eq!(del("used", &check), "queue used cannot be deleted because it has allocated Pods: 1");
    assert_eq!(del("gone", &rules), "queue.scheduling.volcano.sh \"gone\" not found");
}

#[test]
fn mutate_adds_volcano_defaults() {
    let d = mutate(
        Operation::Create,
        &queue(
            "{metadata: {name: a, annotations: {volcano.sh/hierarchy: sci/dev, volcano.sh/hierarchy-weights: 2/3}}, spec: {}}",
        ),
    );
    let ops: Vec<(&str, &str, String)> = d.patch.iter().map(|p| (p.op, p.path.as_str(), p.value.to_string())).collect();
    assert_eq!(
        ops,
        [
            ("add", "/metadata/annotations/volcano.sh~1hierarchy", "\"root/sci/dev\"".to_string()),
            ("add", "/metadata/annotations/volcano.sh~1hierarchy-weights", "\"1/2/3\"".to_string()),
            ("add", "/spec/reclaimable", "true".to_string()),
            ("add", "/spec/weight", "1".to_string()),
        ]
    );
    assert!(mutate(Operation::Create, &q("a", None, "weight: 2, reclaimable: false")).patch.is_empty());
    assert!(!mutate(Operation::Update, &q("a", None, "")).allowed);
}
