//! The progress bar of a long replay, on stderr (indicatif): events applied out of events known,
//! the virtual time reached and the pods pending. Hidden when stderr is not a terminal or the
//! caller asks for quiet; drawing is rate-limited by indicatif, so updating is cheap.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;

/// A progress bar, or nothing.
pub struct Progress {
    bar: Option<ProgressBar>,
}

impl Progress {
    /// A bar labelled `label`, shown only if `enabled` and stderr is a terminal.
    pub fn new(enabled: bool, label: &str) -> Self {
        if !enabled || !std::io::stderr().is_terminal() {
            return Progress { bar: None };
        }
        let bar = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::stderr_with_hz(10));
        let style = ProgressStyle::with_template("{prefix:>12} [{bar:32}] {pos}/{len} events {msg} ({elapsed})")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> ");
        bar.set_style(style);
        bar.set_prefix(label.to_string());
        Progress { bar: Some(bar) }
    }

    /// Reports `done` of `total` events, at virtual time `now_ms`, with `pending` pods waiting.
    pub fn update(&self, done: usize, total: usize, now_ms: i64, pending: usize) {
        if let Some(b) = &self.bar {
            b.set_length(total as u64);
            b.set_position(done as u64);
            b.set_message(format!("t={:.1} h, {pending} pending", now_ms as f64 / 3.6e6));
        }
    }

    /// Removes the bar.
    pub fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}
