//! Volcano's actions.
use crate::conf::ActionKind;
use crate::session::Session;

/// Runs one action on the session.
pub fn execute(_action: ActionKind, _ssn: &mut Session<'_>) {}
