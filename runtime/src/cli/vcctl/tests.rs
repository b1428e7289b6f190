//! `vcctl`'s command lines as Volcano spells them, parsed into actions; bad ones refused in
//! Volcano's words.

use super::shorthand_args::or_env;
use super::*;

fn parse(args: &str) -> Plan {
    let argv: Vec<OsString> = args.split_whitespace().map(OsString::from).collect();
    VcctlCli::try_parse_from(args_for(argv)).unwrap_or_else(|e| panic!("{args}: {e}")).plan()
}

fn action(args: &str) -> Action {
    parse(args).action.unwrap_or_else(|e| panic!("{args}: {e}"))
}

fn failure(args: &str) -> String {
    let p = parse(args);
    let e = p.action.clone().expect_err(args);
    p.failure(&e)
}

#[test]
fn job_run_takes_volcanos_flags_and_defaults() {
    let want = RunOptions {
        name: "demo".into(),
        namespace: "default".into(),
        image: "busybox".into(),
        min_available: 1,
        replicas: 1,
        requests: "cpu=1000m,memory=100Mi".into(),
        limits: "cpu=1000m,memory=100Mi".into(),
        scheduler_name: "volcano".into(),
        filename: String::new(),
        command: String::new(),
    };
    assert_eq!(action("vcctl job run --name demo"), Action::JobRun(want.clone()));
    let full =
        action("vcctl job run -N demo -n ns -i nginx -m 2 -r 3 -R cpu=1 -L cpu=2 -S other -f j.yaml -k /kc -s https://x:6443");
    assert_eq!(
        full,
        Action::JobRun(RunOptions {
            namespace: "ns".into(),
            image: "nginx".into(),
            min_available: 2,
            replicas: 3,
            requests: "cpu=1".into(),
            limits: "cpu=2".into(),
            scheduler_name: "other".into(),
            filename: "j.yaml".into(),
            ..want
        })
    );
    let p = parse("vcctl job run -N demo --kubeconfig /kc --master https://x:6443");
    assert_eq!((p.common.kubeconfig.as_str(), p.common.master.as_str()), ("/kc", "https://x:6443"));
    assert_eq!(p.failure("boom"), "Failed to job run: boom");
}

#[test]
fn job_list_view_suspend_resume_delete() {
    assert_eq!(
        action("vcctl job list -n ns -q q1 -S volcano --selector tf"),
        Action::JobList(ListOptions {
            namespace: "ns".into(),
            all_namespaces: false,
            queue: "q1".into(),
            scheduler_name: "volcano".into(),
            selector: "tf".into()
        })
    );
    let Action::JobList(all) = action("vcctl job list --all-namespaces") else { panic!() };
    assert!(all.all_namespaces);
    assert_eq!(all.namespace, "default");
    assert_eq!(
        action("vcctl job view -N tf -n ns"),
        Action::JobView { namespace: "ns".into(), name: "tf".into(), conditions: true }
    );
    assert_eq!(
        action("vcctl job suspend -N tf"),
        Action::JobCommand { namespace: "default".into(), name: "tf".into(), action: "AbortJob" }
    );
    assert_eq!(
        action("vcctl job resume --name tf --namespace ns"),
        Action::JobCommand { namespace: "ns".into(), name: "tf".into(), action: "ResumeJob" }
    );
    assert_eq!(
        action("vcctl job delete -N tf"),
        Action::JobDelete { namespace: "default".into(), name: "tf".into(), verb: "delete" }
    );
}

#[test]
fn a_missing_job_name_is_refused_in_volcanos_words() {
    assert_eq!(
        failure("vcctl job view"),
        "Failed to job view: job name (specified by --name or -N) is mandatory to view a particular job"
    );
    assert_eq!(failure("vcctl job suspend -n ns"), "Failed to job suspend: job name is mandatory to suspend a particular job");
    assert_eq!(failure("vcctl job resume"), "Failed to job resume: job name is mandatory to resume a particular job");
    assert_eq!(failure("vcctl job delete"), "Failed to job delete: job name is mandatory to delete a particular job");
}

#[test]
fn queue_commands_take_volcanos_flags() {
    assert_eq!(action("vcctl queue create"), Action::QueueCreate { name: "test".into(), weight: 1, state: "Open".into() });
    assert_eq!(
        action("vcctl queue create -n team -w 4 -S Closed"),
        Action::QueueCreate { name: "team".into(), weight: 4, state: "Closed".into() }
    );
    assert_eq!(action("vcctl queue delete -n team"), Action::QueueDelete { name: "team".into() });
    assert_eq!(
        action("vcctl queue operate -n team -a close"),
        Action::QueueOperate { name: "team".into(), op: Operation::Close }
    );
    assert_eq!(
        action("vcctl queue operate -n team --action open"),
        Action::QueueOperate { name: "team".into(), op: Operation::Open }
    );
    assert_eq!(
        action("vcctl queue operate -n team -a update -w 7"),
        Action::QueueOperate { name: "team".into(), op: Operation::Update(7) }
    );
    assert_eq!(action("vcctl queue list"), Action::QueueList);
    assert_eq!(action("vcctl queue get -n team"), Action::QueueGet { name: "team".into() });
}

#[test]
fn bad_queue_commands_are_refused_in_volcanos_words() {
    assert_eq!(failure("vcctl queue delete"), "Failed to queue delete: queue name must be specified");
    assert_eq!(failure("vcctl queue operate -a open"), "Failed to queue operate: queue name must be specified");
    assert_eq!(failure("vcctl queue operate -n q"), "Failed to queue operate: action can not be null");
    assert_eq!(
        failure("vcctl queue operate -n q -a update"),
        "Failed to queue operate: when update queue q, weight must be specified, the value must be greater than 0"
    );
    assert_eq!(failure("vcctl queue get"), "Failed to queue get: name is mandatory to get the particular queue details");
}

#[test]
fn shorthands_run_by_link_name_or_as_subcommands() {
    let argv = |s: &str| s.split_whitespace().map(OsString::from).collect::<Vec<_>>();
    assert_eq!(args_for(argv("/usr/local/bin/vsub -n x")), argv("vcctl vsub -n x"));
    assert_eq!(args_for(argv("./vresume.exe -n x")), argv("vcctl vresume -n x"));
    assert_eq!(args_for(argv("/usr/bin/vcctl job list")), argv("/usr/bin/vcctl job list"));
    assert_eq!(args_for(argv("vjobs")), argv("vcctl vjobs"));

    // Shorthands swap the short names: -n is the name, -N the namespace.
    let Action::JobRun(o) = action("/bin/vsub -n demo -N ns -r 2 -c sleep") else { panic!() };
    assert_eq!((o.name.as_str(), o.namespace.as_str(), o.replicas, o.command.as_str()), ("demo", "ns", 2, "sleep"));
    assert_eq!(action("vjobs -n tf -N ns"), Action::JobView { namespace: "ns".into(), name: "tf".into(), conditions: false });
    let Action::VjobsList(l) = action("vjobs --selector tf -S volcano") else { panic!() };
    assert_eq!((l.selector.as_str(), l.scheduler_name.as_str(), l.namespace.as_str()), ("tf", "volcano", "default"));
    assert_eq!(action("vqueues"), Action::Vqueues { name: String::new() });
    assert_eq!(action("vcctl vqueues -n q"), Action::Vqueues { name: "q".into() });
    assert_eq!(action("vcancel -n tf"), Action::JobDelete { namespace: "default".into(), name: "tf".into(), verb: "cancel" });
    assert_eq!(
        action("vsuspend -n tf -N ns"),
        Action::JobCommand { namespace: "ns".into(), name: "tf".into(), action: "AbortJob" }
    );
    assert_eq!(
        action("vresume -n tf"),
        Action::JobCommand { namespace: "default".into(), name: "tf".into(), action: "ResumeJob" }
    );
    // A shorthand is Volcano's root command: its error prefix has no path.
    assert_eq!(failure("vsub"), "Failed to: job name cannot be left blank");
    assert_eq!(failure("vcancel"), "Failed to: job name is mandatory to cancel a particular job");
}

#[test]
fn vsub_defaults_come_from_the_environment_unless_flagged() {
    assert_eq!(or_env("", Some("my-sched".into()), "volcano"), "my-sched");
    assert_eq!(or_env("flag", Some("my-sched".into()), "volcano"), "flag");
    assert_eq!(or_env("", Some(String::new()), "volcano"), "volcano");
    assert_eq!(or_env("", None, "busybox"), "busybox");
}

#[test]
fn unknown_commands_and_flags_are_usage_errors() {
    for bad in ["vcctl job frobnicate", "vcctl queue list --bogus", "vcctl job run -x", "vcctl"] {
        let argv: Vec<OsString> = bad.split_whitespace().map(OsString::from).collect();
        assert!(VcctlCli::try_parse_from(argv).is_err(), "{bad}");
    }
    assert_eq!(action("vcctl version"), Action::Version);
}
