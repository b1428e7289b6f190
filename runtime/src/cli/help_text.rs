//! Tests that `--help` says what the code does (issue 25, item 8: help that disagreed with it).

use super::Cli;
use clap::CommandFactory;

/// The help text of `--<arg>` of subcommand `sub`.
fn help_of(sub: &str, arg: &str) -> String {
    let cmd = Cli::command();
    let sub = cmd.find_subcommand(sub).unwrap_or_else(|| panic!("subcommand {sub}"));
    let a = sub.get_arguments().find(|a| a.get_long() == Some(arg)).unwrap_or_else(|| panic!("--{arg}"));
    a.get_help().map(|h| h.to_string()).unwrap_or_default()
}

#[test]
fn simulate_help_lists_every_kind_the_loader_reads() {
    let help = help_of("simulate", "cluster");
    for kind in crate::load::kind_names() {
        let plural = if kind.ends_with("ss") {
            format!("{kind}es")
        } else if let Some(stem) = kind.strip_suffix('y') {
            format!("{stem}ies")
        } else {
            format!("{kind}s")
        };
        assert!(help.contains(&plural), "simulate --cluster's help omits {plural}: {help}");
    }
}

#[test]
fn replay_help_states_the_default_queue_assignment() {
    let help = help_of("replay", "queues");
    let default = crate::replay::alibaba::QueueAssignment::default().to_string();
    assert!(help.contains(&format!("[default: {default}]")), "{help}");
}
