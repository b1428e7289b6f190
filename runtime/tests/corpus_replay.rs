//! Replays the `quantity` and `decode_objects` fuzz corpora (`fuzz/corpus/<target>/`: the
//! committed `seed-*` files, plus whatever a local fuzzing run added) as ordinary tests, so CI
//! checks without nightly what those targets check on every input they kept: the quantity
//! parser and the loader never panic and answer the same way twice, and one default scheduling
//! cycle on whatever loaded never panics and is deterministic. `core/tests/corpus_replay.rs`
//! does the same for `conf_parse`.

use basalt_core::{run_cycle, Cluster, CycleOptions, SchedulerConf};
use basalt_runtime::convert::quantity::{to_milli, to_units, QuantityError};
use basalt_runtime::load::{load_text, LoadOptions, LoadReport};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

/// The files of corpus directory `target`, sorted; fails when it holds no committed seed.
fn corpus(target: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/corpus").join(target);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    assert!(files.iter().any(|f| is_seed(f)), "no committed seeds in fuzz/corpus/{target} (run fuzz/seed_corpus.sh)");
    files
}

fn is_seed(f: &Path) -> bool {
    f.file_name().is_some_and(|n| n.to_string_lossy().starts_with("seed-"))
}

/// `num / den` (den > 0) rounded away from zero.
fn div_away(num: i128, den: i128) -> i128 {
    let q = num / den;
    if num % den == 0 {
        q
    } else if num < 0 {
        q - 1
    } else {
        q + 1
    }
}

/// Every `quantity` corpus file (UTF-8 ones; the target skips the rest) through `to_milli` and
/// `to_units`: no panic, the same answer twice, both agree on validity, and when both succeed
/// the units are the milli value divided by 1000, rounded away from zero.
#[test]
fn quantity_corpus_never_panics() {
    let files = corpus("quantity");
    let mut panicked = Vec::new();
    let mut parsed = 0;
    for f in &files {
        let bytes = std::fs::read(f).expect("read corpus file");
        let Ok(q) = String::from_utf8(bytes) else { continue };
        let Ok((milli, units, milli2, units2)) = catch_unwind(|| (to_milli(&q), to_units(&q), to_milli(&q), to_units(&q))) else {
            panicked.push(f.display().to_string());
            continue;
        };
        assert_eq!(milli, milli2, "{}: to_milli({q:?}) twice differs", f.display());
        assert_eq!(units, units2, "{}: to_units({q:?}) twice differs", f.display());
        let invalid = |r: &Result<i64, QuantityError>| matches!(r, Err(QuantityError::Invalid(_)));
        assert_eq!(invalid(&milli), invalid(&units), "{}: validity differs for {q:?}: {milli:?} vs {units:?}", f.display());
        if let (Ok(m), Ok(u)) = (&milli, &units) {
            assert_eq!(*u as i128, div_away(*m as i128, 1000), "{}: {q:?}: units {u} vs milli {m}", f.display());
            parsed += 1;
        }
    }
    assert!(panicked.is_empty(), "the quantity parser panicked on: {panicked:?}");
    assert!(parsed > 0, "no corpus file is a valid quantity");
}

/// Loads `text` as the `decode_objects` target does into a fresh cluster.
fn load(text: &str, json: bool) -> (Cluster, LoadReport) {
    let mut cluster = Cluster::new();
    let mut report = LoadReport::default();
    load_text("corpus.yaml", text, json, &mut cluster, &LoadOptions::default(), &mut report);
    (cluster, report)
}

/// Every `decode_objects` corpus file (first byte: odd = JSON stream, even = multi-document YAML;
/// the rest is the text, invalid UTF-8 replaced, as the target reads it) through `load_text`
/// and one cycle of Volcano's default conf: no panic, loading twice gives the same report, the
/// cluster holds no more objects than the report counts, and the cycle gives the same
/// decisions twice. The seeds (the scenarios' clusters) must load objects and bind pods.
#[test]
fn decode_objects_corpus_never_panics() {
    let files = corpus("decode_objects");
    let conf = SchedulerConf::default();
    let opts = CycleOptions { seed: 1, cycle: 1, now_ms: 0 };
    let mut panicked = Vec::new();
    let (mut seed_loaded, mut seed_binds) = (0, 0);
    for f in &files {
        let bytes = std::fs::read(f).expect("read corpus file");
        let Some((&mode, rest)) = bytes.split_first() else { continue };
        let json = mode & 1 == 1;
        let text = String::from_utf8_lossy(rest);
        let run = catch_unwind(AssertUnwindSafe(|| {
            let (cluster, report) = load(&text, json);
            let (_, again) = load(&text, json);
            let first = run_cycle(&cluster, &conf, &opts);
            let second = run_cycle(&cluster, &conf, &opts);
            (cluster.counts(), report, again, first, second)
        }));
        let Ok(((nodes, pods, groups, queues), report, again, first, second)) = run else {
            panicked.push(f.display().to_string());
            continue;
        };
        assert_eq!(report, again, "{}: loading the same text twice differs", f.display());
        assert!(nodes + pods + groups + queues <= report.loaded, "{}: more objects than loaded: {report:?}", f.display());
        assert_eq!(first, second, "{}: one cycle twice differs", f.display());
        if is_seed(f) {
            seed_loaded += report.loaded;
            seed_binds += first.binds.len();
        }
    }
    assert!(panicked.is_empty(), "loading or the default cycle panicked on: {panicked:?}");
    assert!(seed_loaded > 0 && seed_binds > 0, "the seeds loaded {seed_loaded} objects and bound {seed_binds} pods");
}
