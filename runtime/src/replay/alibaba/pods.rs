//! `openb_pod_list_*.csv` rows (`name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,
//! pod_phase,creation_time,deletion_time,scheduled_time`) → checked [`PodRow`]s.

use super::super::csv_rows::{self, int, non_negative};
use super::super::shapes::{PodShape, Qos};
use super::super::workload::InputIssue;
use std::collections::BTreeSet;
use std::path::Path;

const COLUMNS: [&str; 11] = [
    "name",
    "cpu_milli",
    "memory_mib",
    "num_gpu",
    "gpu_milli",
    "gpu_spec",
    "qos",
    "pod_phase",
    "creation_time",
    "deletion_time",
    "scheduled_time",
];

/// One pod row, checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PodRow {
    /// Line in the file.
    pub line: usize,
    /// `name`.
    pub name: String,
    /// Requests.
    pub shape: PodShape,
    /// `gpu_spec` split on `|` (empty = any model).
    pub gpu_models: Vec<String>,
    /// `qos`.
    pub qos: Qos,
    /// `creation_time`, seconds since trace start.
    pub creation_s: i64,
    /// `deletion_time`, seconds since trace start.
    pub deletion_s: i64,
    /// `scheduled_time`, seconds since trace start (`None` = never scheduled in production).
    pub scheduled_s: Option<i64>,
}

impl PodRow {
    /// Run time in seconds from a replay window starting at `start_s`: `deletion − scheduled`
    /// for pods scheduled in production, else the pod's whole life `deletion − creation` (an
    /// upper bound: it never ran there); a pod already running at the window start keeps only
    /// what was left of its run, `deletion − start`.
    pub fn run_time_s(&self, start_s: i64) -> i64 {
        (self.deletion_s - self.scheduled_s.unwrap_or(self.creation_s).max(start_s)).max(0)
    }
}

fn parse(table: &csv_rows::Table, row: &csv_rows::Row) -> Result<PodRow, String> {
    let f = |i: usize| table.get(row, i);
    let name = f(0);
    if name.is_empty() {
        return Err("field name: empty pod name".into());
    }
    let cpu_milli = non_negative("cpu_milli", f(1))?;
    let memory_mib = non_negative("memory_mib", f(2))?;
    let num_gpu = non_negative("num_gpu", f(3))?;
    let mut gpu_milli = non_negative("gpu_milli", f(4))?;
    if gpu_milli > 1000 {
        return Err(format!("field gpu_milli: must be at most 1000 (one whole GPU), got {gpu_milli}"));
    }
    if num_gpu == 0 {
        gpu_milli = 0;
    } else if gpu_milli == 0 {
        return Err(format!("field gpu_milli: 0 with num_gpu {num_gpu}"));
    }
    let gpu_models: Vec<String> = f(5).split('|').map(str::trim).filter(|s| !s.is_empty()).map(str::to_string).collect();
    let qos =
        Qos::parse(f(6)).ok_or_else(|| format!("field qos: unknown QoS class {:?} (LS, BE, Burstable, Guaranteed)", f(6)))?;
    let creation_s = int("creation_time", f(8))?;
    let deletion_s = int("deletion_time", f(9))?;
    let scheduled_s = match f(10) {
        "" => None,
        s => Some(int("scheduled_time", s)?),
    };
    if deletion_s < creation_s {
        return Err(format!("field deletion_time: {deletion_s} is before creation_time {creation_s}"));
    }
    if let Some(s) = scheduled_s {
        if s < creation_s || s > deletion_s {
            return Err(format!(
                "field scheduled_time: {s} is outside creation_time..deletion_time ({creation_s}..{deletion_s})"
            ));
        }
    }
    Ok(PodRow {
        line: row.line,
        name: name.to_string(),
        shape: PodShape { cpu_milli, memory_mib, num_gpu, gpu_milli },
        gpu_models,
        qos,
        creation_s,
        deletion_s,
        scheduled_s,
    })
}

/// The pods of one pod list in file order, and the issues of rows that were skipped
/// (malformed fields, duplicate names).
///
/// Errors: the file cannot be read or lacks a column.
pub fn read_pods(path: &Path) -> Result<(Vec<PodRow>, Vec<InputIssue>), InputIssue> {
    let table = csv_rows::read(path, &COLUMNS)?;
    let mut pods = Vec::with_capacity(table.rows.len());
    let mut issues = table.issues.clone();
    let mut seen = BTreeSet::new();
    for row in &table.rows {
        match parse(&table, row) {
            Ok(p) if !seen.insert(p.name.clone()) => {
                issues.push(table.issue(row, format!("field name: pod {:?} is listed twice; row skipped", p.name)))
            }
            Ok(p) => pods.push(p),
            Err(msg) => issues.push(table.issue(row, format!("{msg}; row skipped"))),
        }
    }
    Ok((pods, issues))
}
