//! Pod rows → jobs: how pods are grouped into gangs ([`GangGrouping`]) and which queue each
//! job goes to ([`QueueAssignment`]). The trace has neither jobs nor queues; both are
//! synthesised here, as documented in `docs/replay.md`.

use super::pods::PodRow;
use std::fmt;

/// How consecutive pod rows (file order) become gang jobs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum GangGrouping {
    /// Every pod is its own job (`minMember: 1`).
    #[default]
    None,
    /// Consecutive pods with the same creation time and the same shape (requests, GPU models,
    /// QoS) form one gang (`minMember` = their count).
    SameShape,
    /// Every `n` consecutive pods form one gang (the last may be smaller).
    Fixed(usize),
}

impl GangGrouping {
    /// Parses `none`, `same-shape` or `fixed:N` (N ≥ 1).
    pub fn parse(s: &str) -> Result<Self, String> {
        match s {
            "none" => Ok(GangGrouping::None),
            "same-shape" => Ok(GangGrouping::SameShape),
            _ => match s.strip_prefix("fixed:").map(str::parse::<usize>) {
                Some(Ok(n)) if n >= 1 => Ok(GangGrouping::Fixed(n)),
                _ => Err(format!("invalid gang grouping {s:?}: expected none, same-shape or fixed:N with N >= 1")),
            },
        }
    }

    /// Splits `rows` (file order) into groups of consecutive rows; returns the index ranges.
    pub fn group(self, rows: &[PodRow]) -> Vec<std::ops::Range<usize>> {
        let mut out: Vec<std::ops::Range<usize>> = Vec::new();
        for (i, r) in rows.iter().enumerate() {
            let join = match (self, out.last()) {
                (_, None) | (GangGrouping::None, _) => false,
                (GangGrouping::Fixed(n), Some(last)) => last.len() < n,
                (GangGrouping::SameShape, Some(last)) => {
                    let first = &rows[last.start];
                    first.creation_s == r.creation_s
                        && first.shape == r.shape
                        && first.gpu_models == r.gpu_models
                        && first.qos == r.qos
                }
            };
            match out.last_mut() {
                Some(last) if join => last.end = i + 1,
                _ => out.push(i..i + 1),
            }
        }
        out
    }
}

impl fmt::Display for GangGrouping {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GangGrouping::None => f.write_str("none"),
            GangGrouping::SameShape => f.write_str("same-shape"),
            GangGrouping::Fixed(n) => write!(f, "fixed:{n}"),
        }
    }
}

/// Which queue each job goes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum QueueAssignment {
    /// One queue per QoS class of the job's first pod: `ls`, `be`, `burstable`, `guaranteed`.
    #[default]
    Qos,
    /// Every job in queue `default`.
    Single,
    /// Job `i` (in arrival order) goes to queue `q{i mod N}`.
    RoundRobin(usize),
}

impl QueueAssignment {
    /// Parses `qos`, `single` or `round-robin:N` (N ≥ 1).
    pub fn parse(s: &str) -> Result<Self, String> {
        match s {
            "qos" => Ok(QueueAssignment::Qos),
            "single" => Ok(QueueAssignment::Single),
            _ => match s.strip_prefix("round-robin:").map(str::parse::<usize>) {
                Some(Ok(n)) if n >= 1 => Ok(QueueAssignment::RoundRobin(n)),
                _ => Err(format!("invalid queue assignment {s:?}: expected qos, single or round-robin:N with N >= 1")),
            },
        }
    }

    /// The queue of job number `index` whose first pod is `first`.
    pub fn queue_of(self, index: usize, first: &PodRow) -> String {
        match self {
            QueueAssignment::Qos => first.qos.queue_name().to_string(),
            QueueAssignment::Single => "default".to_string(),
            QueueAssignment::RoundRobin(n) => format!("q{}", index % n),
        }
    }
}

impl fmt::Display for QueueAssignment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            QueueAssignment::Qos => f.write_str("qos"),
            QueueAssignment::Single => f.write_str("single"),
            QueueAssignment::RoundRobin(n) => write!(f, "round-robin:{n}"),
        }
    }
}

/// Parses a `NAME=WEIGHT` queue weight (WEIGHT ≥ 1).
pub fn parse_queue_weight(s: &str) -> Result<(String, i32), String> {
    let bad = || format!("invalid queue weight {s:?}: expected NAME=WEIGHT with WEIGHT >= 1");
    let (name, w) = s.split_once('=').ok_or_else(bad)?;
    let w: i32 = w.trim().parse().map_err(|_| bad())?;
    if name.trim().is_empty() || w < 1 {
        return Err(bad());
    }
    Ok((name.trim().to_string(), w))
}

#[cfg(test)]
mod tests {
    use super::super::super::shapes::{PodShape, Qos};
    use super::*;

    fn row(name: &str, creation_s: i64, cpu: i64) -> PodRow {
        PodRow {
            line: 2,
            name: name.into(),
            shape: PodShape { cpu_milli: cpu, memory_mib: 1, num_gpu: 0, gpu_milli: 0 },
            gpu_models: vec![],
            qos: Qos::Ls,
            creation_s,
            deletion_s: creation_s + 10,
            scheduled_s: Some(creation_s),
        }
    }

    #[test]
    fn grouping_modes() {
        let rows = [row("a", 0, 1), row("b", 0, 1), row("c", 0, 2), row("d", 5, 2), row("e", 5, 2)];
        assert_eq!(GangGrouping::None.group(&rows).len(), 5);
        assert_eq!(GangGrouping::SameShape.group(&rows), vec![0..2, 2..3, 3..5]);
        assert_eq!(GangGrouping::Fixed(2).group(&rows), vec![0..2, 2..4, 4..5]);
        assert_eq!(GangGrouping::parse("fixed:3"), Ok(GangGrouping::Fixed(3)));
        assert!(GangGrouping::parse("fixed:0").is_err());
        assert_eq!(QueueAssignment::parse("round-robin:4"), Ok(QueueAssignment::RoundRobin(4)));
        assert_eq!(parse_queue_weight("ls=4"), Ok(("ls".into(), 4)));
        assert!(parse_queue_weight("ls=0").is_err());
    }
}
