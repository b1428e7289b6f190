//! The audit-log reader of the tests and the live bench (`tests/support/audit.rs`) on files
//! written here: rotated files read oldest first before `audit.log`, only finished requests kept,
//! the needle prefilter, `stageTimestamp`, a torn last line skipped and a bad line in the middle
//! an error naming file and line.

mod support;

use std::path::Path;

fn line(verb: &str, name: &str, code: u16, stage: &str, at: &str) -> String {
    format!(
        r#"{{"kind":"Event","stage":"{stage}","verb":"{verb}","requestURI":"/api/v1/namespaces/ns/pods/{name}/binding","user":{{"username":"sched"}},"userAgent":"basalt","objectRef":{{"resource":"pods","subresource":"binding","namespace":"ns","name":"{name}"}},"responseStatus":{{"code":{code}}},"stageTimestamp":"{at}"}}"#
    )
}

/// A fresh folder under the system temp dir, removed on drop.
struct TempDir(std::path::PathBuf);

impl TempDir {
    fn new(tag: &str) -> TempDir {
        let p = std::env::temp_dir().join(format!("basalt-audit-reader-{}-{tag}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }
    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn write(dir: &Path, file: &str, lines: &[String], torn: &str) {
    let mut text = lines.join("\n");
    text.push('\n');
    text.push_str(torn);
    std::fs::write(dir.join(file), text).unwrap();
}

#[test]
fn rotated_files_then_the_current_one_with_a_torn_last_line() {
    let dir = TempDir::new("rotated");
    write(
        dir.path(),
        "audit-2026-12-01T10-00-00.000.log",
        &[line("create", "p1", 201, "ResponseComplete", "2026-12-01T10:00:00.000001Z")],
        "",
    );
    write(
        dir.path(),
        "audit-2026-12-01T11-00-00.000.log",
        &[line("create", "p2", 409, "ResponseComplete", "2026-12-01T11:00:00Z")],
        "",
    );
    write(
        dir.path(),
        "audit.log",
        &[
            line("watch", "p3", 200, "ResponseStarted", "2026-12-01T12:00:00Z"),
            line("create", "p3", 201, "ResponseComplete", "2026-12-01T12:00:00Z"),
        ],
        r#"{"kind":"Event","stage":"Resp"#,
    );
    std::fs::write(dir.path().join("other.log"), "not an audit log\n").unwrap();
    let log = support::AuditLog::read(&dir.path().join("audit.log")).unwrap();
    let got: Vec<(&str, u16)> = log.events().iter().map(|e| (e.name.as_str(), e.code)).collect();
    assert_eq!(got, vec![("p1", 201), ("p2", 409), ("p3", 201)], "oldest rotated file first, ResponseStarted left out");
    assert_eq!(log.events()[0].stage_time_us, Some(1_796_119_200_000_001));
    assert!(log.events().iter().all(|e| e.is_binding()));
    let counts = log.binding_counts();
    assert_eq!((counts[&("ns".into(), "p2".into())].succeeded, counts[&("ns".into(), "p2".into())].failed), (0, 1));

    let mut names = Vec::new();
    support::stream_audit(&dir.path().join("audit.log"), &["\"p2\""], |e| names.push(e.name)).unwrap();
    assert_eq!(names, vec!["p2"], "only lines with a needle are parsed");
}

#[test]
fn a_bad_line_before_the_end_is_an_error_naming_file_and_line() {
    let dir = TempDir::new("bad");
    let good = line("create", "p1", 201, "ResponseComplete", "2026-12-01T10:00:00Z");
    write(dir.path(), "audit.log", &[good.clone(), "{broken".into(), good], "");
    let err = support::AuditLog::read(&dir.path().join("audit.log")).unwrap_err().to_string();
    assert!(err.contains("audit.log line 2"), "{err}");
    assert!(support::AuditLog::read(&dir.path().join("missing").join("audit.log")).unwrap().events().is_empty(), "no log: empty");
}
