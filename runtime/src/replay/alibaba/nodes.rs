//! `openb_node_list_*.csv` (columns `sn,cpu_milli,memory_mib,gpu,model`) → nodes.

use super::super::csv_rows::{self, non_negative};
use super::super::shapes::node_spec;
use super::super::workload::InputIssue;
use basalt_core::model::NodeSpec;
use std::collections::BTreeSet;
use std::path::Path;

const COLUMNS: [&str; 5] = ["sn", "cpu_milli", "memory_mib", "gpu", "model"];

/// The nodes of one node list, and the issues of rows that were skipped.
///
/// Errors: the file cannot be read or lacks a column.
pub fn read_nodes(path: &Path) -> Result<(Vec<NodeSpec>, Vec<InputIssue>), InputIssue> {
    let table = csv_rows::read(path, &COLUMNS)?;
    let mut nodes = Vec::with_capacity(table.rows.len());
    let mut issues = table.issues.clone();
    let mut seen = BTreeSet::new();
    for row in &table.rows {
        let parsed = (|| -> Result<NodeSpec, String> {
            let name = table.get(row, 0);
            if name.is_empty() {
                return Err("field sn: empty node name".into());
            }
            if !seen.insert(name.to_string()) {
                return Err(format!("field sn: node {name:?} is listed twice"));
            }
            let cpu = non_negative("cpu_milli", table.get(row, 1))?;
            let mem = non_negative("memory_mib", table.get(row, 2))?;
            let gpus = non_negative("gpu", table.get(row, 3))?;
            Ok(node_spec(name, cpu, mem, gpus, table.get(row, 4)))
        })();
        match parsed {
            Ok(n) => nodes.push(n),
            Err(msg) => issues.push(table.issue(row, format!("{msg}; row skipped"))),
        }
    }
    Ok((nodes, issues))
}
