//! `vcctl queue …` arguments: Volcano's flags, short names and defaults (`pkg/cli/queue`), each
//! turned into a [`super::Action`].

use super::{Action, CommonFlags};
use crate::vcctl::queue::Operation;
use clap::{Args, Subcommand};

/// `vcctl queue` subcommands.
#[derive(Debug, Subcommand)]
pub enum QueueCommand {
    /// creates queue
    Create(CreateArgs),
    /// delete queue
    Delete(QueueRef),
    /// operate queue
    Operate(OperateArgs),
    /// lists all the queue
    List(ListArgs),
    /// get a queue
    Get(QueueRef),
}

/// `vcctl queue create`.
#[derive(Debug, Args)]
pub struct CreateArgs {
    #[command(flatten)]
    common: CommonFlags,
    /// the name of queue
    #[arg(short = 'n', long, default_value = "test")]
    name: String,
    /// the weight of the queue
    #[arg(short = 'w', long, default_value_t = 1, allow_negative_numbers = true)]
    weight: i32,
    /// the state of queue
    #[arg(short = 'S', long, default_value = "Open")]
    state: String,
}

/// `vcctl queue delete|get`: one Queue by `--name`/`-n`.
#[derive(Debug, Args)]
pub struct QueueRef {
    #[command(flatten)]
    common: CommonFlags,
    /// the name of queue
    #[arg(short = 'n', long, default_value = "")]
    name: String,
}

/// `vcctl queue operate`.
#[derive(Debug, Args)]
pub struct OperateArgs {
    #[command(flatten)]
    common: CommonFlags,
    /// the name of queue
    #[arg(short = 'n', long, default_value = "")]
    name: String,
    /// the weight of the queue
    #[arg(short = 'w', long, default_value_t = 0, allow_negative_numbers = true)]
    weight: i32,
    /// operate action to queue, valid actions are open, close, update
    #[arg(short = 'a', long, default_value = "")]
    action: String,
}

/// `vcctl queue list`.
#[derive(Debug, Args)]
pub struct ListArgs {
    #[command(flatten)]
    common: CommonFlags,
}

impl QueueCommand {
    /// The common flags, the error prefix's words (`queue get`) and the action.
    ///
    /// Errors: a missing name or a bad `--action`, in Volcano's words.
    pub fn plan(&self) -> (&CommonFlags, &'static str, Result<Action, String>) {
        match self {
            QueueCommand::Create(a) => (
                &a.common,
                "queue create",
                Ok(Action::QueueCreate { name: a.name.clone(), weight: a.weight, state: a.state.clone() }),
            ),
            QueueCommand::Delete(a) => (
                &a.common,
                "queue delete",
                if a.name.is_empty() {
                    Err("queue name must be specified".into())
                } else {
                    Ok(Action::QueueDelete { name: a.name.clone() })
                },
            ),
            QueueCommand::Operate(a) => (
                &a.common,
                "queue operate",
                if a.name.is_empty() {
                    Err("queue name must be specified".into())
                } else {
                    Operation::parse(&a.action, a.weight, &a.name).map(|op| Action::QueueOperate { name: a.name.clone(), op })
                },
            ),
            QueueCommand::List(a) => (&a.common, "queue list", Ok(Action::QueueList)),
            QueueCommand::Get(a) => (
                &a.common,
                "queue get",
                if a.name.is_empty() {
                    Err("name is mandatory to get the particular queue details".into())
                } else {
                    Ok(Action::QueueGet { name: a.name.clone() })
                },
            ),
        }
    }
}
