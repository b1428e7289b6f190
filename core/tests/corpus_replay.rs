//! Replays the `conf_parse` fuzz corpus (`fuzz/corpus/conf_parse/`: the committed `seed-*`
//! files, plus whatever a local fuzzing run added) as an ordinary test, so CI checks without
//! nightly that `SchedulerConf::parse` never panics on any of them and parses each the same way
//! twice.

use basalt_core::SchedulerConf;
use std::path::{Path, PathBuf};

/// The files of corpus directory `target`, sorted.
fn corpus(target: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/corpus").join(target);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    files
}

#[test]
fn conf_parse_corpus_never_panics() {
    let files = corpus("conf_parse");
    assert!(
        files.iter().any(|f| f.file_name().is_some_and(|n| n.to_string_lossy().starts_with("seed-"))),
        "no committed seeds in fuzz/corpus/conf_parse (run fuzz/seed_corpus.sh)"
    );
    let mut panicked = Vec::new();
    for f in &files {
        let bytes = std::fs::read(f).expect("read corpus file");
        let Ok(text) = String::from_utf8(bytes) else { continue };
        match std::panic::catch_unwind(|| (SchedulerConf::parse(&text), SchedulerConf::parse(&text))) {
            Ok((a, b)) => assert_eq!(a, b, "{}: parsing twice differs", f.display()),
            Err(_) => panicked.push(f.display().to_string()),
        }
    }
    assert!(panicked.is_empty(), "SchedulerConf::parse panicked on: {panicked:?}");
}
