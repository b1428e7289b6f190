//! `decode_objects`: arbitrary bytes as a cluster file, through the runtime's loader
//! (`basalt_runtime::load::load_text`), then one scheduling cycle on whatever loaded.
//!
//! The first byte picks the format (odd: a JSON value stream, even: multi-document YAML); the
//! rest is the text (invalid UTF-8 replaced, as a reader that is not strict would do).
//! Checks: loading never panics and is deterministic; every issue names the file and a 1-based
//! document; the cluster holds no more objects than the report says were loaded; one cycle with
//! Volcano's default conf on the loaded cluster never panics and is deterministic.

#![no_main]

use basalt_core::{run_cycle, Cluster, CycleOptions, SchedulerConf};
use basalt_runtime::load::{load_text, LoadOptions, LoadReport};
use libfuzzer_sys::fuzz_target;

const FILE: &str = "fuzz.yaml";

fn load(text: &str, json: bool) -> (Cluster, LoadReport) {
    let mut cluster = Cluster::new();
    let mut report = LoadReport::default();
    load_text(FILE, text, json, &mut cluster, &LoadOptions::default(), &mut report);
    (cluster, report)
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else { return };
    let json = mode & 1 == 1;
    let text = String::from_utf8_lossy(rest);
    let (cluster, report) = load(&text, json);
    let (_, again) = load(&text, json);
    assert_eq!(report, again, "loading the same text twice differs");
    for issue in &report.issues {
        assert_eq!(issue.file, FILE);
        assert!(issue.doc >= 1, "a document issue has a 1-based document index: {issue}");
        assert!(!issue.message.is_empty(), "an issue says what is wrong: {issue:?}");
        assert!(issue.to_string().starts_with(FILE), "{issue}");
    }
    let (nodes, pods, groups, queues) = cluster.counts();
    assert!(nodes + pods + groups + queues <= report.loaded, "more objects than loaded: {report:?}");
    let conf = SchedulerConf::default();
    let opts = CycleOptions { seed: 1, cycle: 1, now_ms: 0 };
    let first = run_cycle(&cluster, &conf, &opts);
    assert_eq!(first, run_cycle(&cluster, &conf, &opts), "one cycle twice differs");
});
