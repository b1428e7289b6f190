//! Reading a headed CSV file row by row with line numbers: columns are found by header name (any
//! order, extra columns ignored), and a row that cannot be read — wrong field count, bad
//! UTF-8 — becomes an [`InputIssue`] naming file and line while the rest is read.

use super::workload::InputIssue;
use std::path::Path;

/// One data row: its 1-based line in the file and its fields.
pub struct Row {
    /// Line of the row in the file (the header is line 1).
    pub line: usize,
    /// The fields, trimmed.
    pub fields: csv::StringRecord,
}

/// A CSV file read whole: the rows that could be read, and the issues of those that could not.
pub struct Table {
    /// The file, as given (for messages).
    pub file: String,
    /// Index of each requested column in a row, in the order requested.
    pub columns: Vec<usize>,
    /// Readable rows, in file order.
    pub rows: Vec<Row>,
    /// Rows that could not be read (each skipped).
    pub issues: Vec<InputIssue>,
}

impl Table {
    /// Field `col` (an index into the requested columns) of `row`.
    pub fn get<'r>(&self, row: &'r Row, col: usize) -> &'r str {
        self.columns.get(col).and_then(|&i| row.fields.get(i)).unwrap_or("")
    }

    /// An issue about `row`.
    pub fn issue(&self, row: &Row, message: String) -> InputIssue {
        InputIssue { file: self.file.clone(), line: row.line, message }
    }
}

/// Reads `path`, which must have a header row naming every column of `required`.
///
/// Errors (the whole file is unusable): it cannot be opened, or a required column is missing —
/// as an issue naming the file (line 1 for the header).
pub fn read(path: &Path, required: &[&str]) -> Result<Table, InputIssue> {
    let file = path.display().to_string();
    let whole = |line: usize, message: String| InputIssue { file: file.clone(), line, message };
    let mut rdr = csv::ReaderBuilder::new()
        .flexible(true)
        .trim(csv::Trim::All)
        .from_path(path)
        .map_err(|e| whole(0, format!("cannot read: {e}")))?;
    let header = rdr.headers().map_err(|e| whole(1, format!("cannot read the header: {e}")))?.clone();
    let mut columns = Vec::with_capacity(required.len());
    for name in required {
        match header.iter().position(|h| h == *name) {
            Some(i) => columns.push(i),
            None => {
                return Err(whole(
                    1,
                    format!("missing column {name:?} (header: {})", header.iter().collect::<Vec<_>>().join(",")),
                ))
            }
        }
    }
    let width = header.len();
    let mut table = Table { file: file.clone(), columns, rows: Vec::new(), issues: Vec::new() };
    let mut record = csv::StringRecord::new();
    loop {
        match rdr.read_record(&mut record) {
            Ok(false) => break,
            Ok(true) => {
                let line = record.position().map(|p| p.line() as usize).unwrap_or(0);
                if record.len() == 1 && record.get(0) == Some("") {
                    continue; // a blank line
                }
                if record.len() != width {
                    table.issues.push(whole(
                        line,
                        format!("expected {width} fields as in the header, found {}; row skipped", record.len()),
                    ));
                    continue;
                }
                table.rows.push(Row { line, fields: record.clone() });
            }
            Err(e) => {
                let line = e.position().map(|p| p.line() as usize).unwrap_or(0);
                let fatal = !matches!(e.kind(), csv::ErrorKind::Utf8 { .. } | csv::ErrorKind::UnequalLengths { .. });
                table.issues.push(whole(line, format!("cannot read row: {e}; row skipped")));
                if fatal {
                    table.issues.push(whole(line, "the rest of the file is skipped".into()));
                    break;
                }
            }
        }
    }
    Ok(table)
}

/// Parses an integer field: `Err` names the column and the bad value.
pub fn int(column: &str, value: &str) -> Result<i64, String> {
    value.parse::<i64>().map_err(|_| format!("field {column}: not an integer: {value:?}"))
}

/// Parses a non-negative integer field.
pub fn non_negative(column: &str, value: &str) -> Result<i64, String> {
    let v = int(column, value)?;
    if v < 0 {
        return Err(format!("field {column}: must be >= 0, got {v}"));
    }
    Ok(v)
}
