//! The core's layering (docs/architecture.md, "Core"): every top-level module of `core/src` has
//! a layer, and no file names (through `crate::`) a module of a higher layer, or one listed after
//! its own module in the same layer. Reads the sources;
//! comments and `#[cfg(test)]` modules are left out, as `../shared/tools/module-circles.py`
//! does.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The layers, lowest first, each with its modules in order: a module may name modules of lower
/// layers and those listed before it in its own layer, so no two modules can name each other
/// (no circle, even inside a layer).
const LAYERS: &[(&str, &[&str])] = &[
    ("base", &["limits", "rng", "vec_map", "rare"]),
    ("data", &["resource", "intern"]),
    ("model", &["model", "conf", "kernels"]),
    ("cluster", &["cluster"]),
    ("decision", &["decision"]),
    ("session", &["session"]),
    ("framework", &["framework"]),
    ("plugins", &["plugins"]),
    ("select", &["select"]),
    ("actions", &["actions"]),
    ("cycle", &["scheduler"]),
    ("testkit", &["workload_topology", "workload", "workload_mixed", "workload_volumes", "workload_devices"]),
];

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|(_, mods)| mods.contains(&module))
}

/// The module's place in the order of [`LAYERS`] read from the top: layer, then its position in
/// the layer.
fn rank_of(module: &str) -> Option<(usize, usize)> {
    let l = layer_of(module)?;
    Some((l, LAYERS[l].1.iter().position(|m| *m == module)?))
}

/// Source text without comments and without a trailing `#[cfg(test)] mod … { … }`.
fn strip(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("/*") {
        out.push_str(&rest[..i]);
        rest = rest[i..].find("*/").map_or("", |j| &rest[i + j + 2..]);
    }
    out.push_str(rest);
    let mut lines = String::with_capacity(out.len());
    for line in out.lines() {
        let code = line.find("//").map_or(line, |i| &line[..i]);
        lines.push_str(code);
        lines.push('\n');
    }
    let mut at = 0;
    while let Some(i) = lines[at..].find("#[cfg(test)]") {
        let start = at + i;
        let after = lines[start + "#[cfg(test)]".len()..].trim_start();
        if after.starts_with("mod ") {
            lines.truncate(start);
            break;
        }
        at = start + 1;
    }
    lines
}

/// The top-level modules (or root re-exports) a source names through `crate::`: `crate::x::…`,
/// `crate::x` and `use crate::{x::…, y};`.
fn named(text: &str, root_names: &BTreeMap<String, String>) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut push = |first: &str, shown: String| {
        let module = root_names.get(first).cloned().unwrap_or_else(|| first.to_string());
        out.push((module, shown));
    };
    let mut rest = text;
    while let Some(i) = rest.find("crate::") {
        let after = &rest[i + "crate::".len()..];
        if let Some(list) = after.strip_prefix('{') {
            let end = list.find("};").or_else(|| list.find('}')).unwrap_or(list.len());
            let mut depth = 0;
            let mut item = String::new();
            for c in list[..end].chars().chain(std::iter::once(',')) {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        let head: String = item.trim().chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                        if !head.is_empty() {
                            push(&head, format!("crate::{{{}}}", item.trim()));
                        }
                        item.clear();
                        continue;
                    }
                    _ => {}
                }
                item.push(c);
            }
        } else {
            let head: String = after.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            let shown: String = after.chars().take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':').collect();
            if !head.is_empty() {
                push(&head, format!("crate::{}", shown.trim_end_matches(':')));
            }
        }
        rest = after;
    }
    out
}

/// Names re-exported at the crate root (`pub use module::{A, B};` in lib.rs) → their module.
fn root_names(lib: &str) -> BTreeMap<String, String> {
    let mut map = BTreeMap::new();
    for line in strip(lib).lines() {
        let Some(spec) = line.trim().strip_prefix("pub use ").and_then(|s| s.strip_suffix(';')) else {
            continue;
        };
        let Some((module, items)) = spec.split_once("::") else { continue };
        let items = items.trim_start_matches('{').trim_end_matches('}');
        for item in items.split(',') {
            let name = item.trim().rsplit("::").next().unwrap_or("").trim();
            if !name.is_empty() {
                map.insert(name.to_string(), module.to_string());
            }
        }
    }
    map
}

fn rs_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir).expect("read core/src").map(|e| e.expect("dir entry").path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rs_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// The top-level module a file of `src` belongs to (`None` for lib.rs).
fn module_of(src: &Path, file: &Path) -> Option<String> {
    let rel = file.strip_prefix(src).ok()?;
    let first = rel.components().next()?.as_os_str().to_str()?;
    if first == "lib.rs" {
        return None;
    }
    Some(first.trim_end_matches(".rs").to_string())
}

/// Every violation among `files` (path shown, module, stripped text): an unknown module, or a
/// `crate::` name of a higher layer.
fn violations(files: &[(String, String, String)], roots: &BTreeMap<String, String>) -> Vec<String> {
    let mut bad = Vec::new();
    for (shown, module, text) in files {
        let Some(own) = rank_of(module) else {
            bad.push(format!("{shown}: module `{module}` has no layer in core/tests/layering.rs LAYERS"));
            continue;
        };
        for (target, import) in named(text, roots) {
            match rank_of(&target) {
                Some(r) if r.0 > own.0 => bad.push(format!(
                    "{shown}: `{import}` names `{target}` (layer {}) from `{module}` (layer {})",
                    LAYERS[r.0].0, LAYERS[own.0].0
                )),
                Some(r) if target != *module && r > own => bad
                    .push(format!("{shown}: `{import}` names `{target}`, listed after `{module}` in layer {}", LAYERS[own.0].0)),
                _ => {}
            }
        }
    }
    bad
}

#[test]
fn no_module_names_a_higher_layer() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let lib = std::fs::read_to_string(src.join("lib.rs")).expect("read lib.rs");
    let roots = root_names(&lib);
    let mut paths = Vec::new();
    rs_files(&src, &mut paths);
    let files: Vec<_> = paths
        .iter()
        .filter_map(|p| {
            let module = module_of(&src, p)?;
            let text = strip(&std::fs::read_to_string(p).expect("read source"));
            Some((format!("core/src/{}", p.strip_prefix(&src).unwrap().display()), module, text))
        })
        .collect();
    assert!(files.len() > 50, "read the core's sources ({} files)", files.len());
    let bad = violations(&files, &roots);
    assert!(bad.is_empty(), "upward imports in core:\n{}", bad.join("\n"));
}

#[test]
fn every_declared_module_has_a_layer() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let lib = strip(&std::fs::read_to_string(src.join("lib.rs")).expect("read lib.rs"));
    let mods: Vec<&str> = lib.lines().filter_map(|l| l.trim().strip_prefix("pub mod ")?.strip_suffix(';')).collect();
    assert!(mods.contains(&"session"), "lib.rs declares its modules");
    for m in mods {
        assert!(layer_of(m).is_some(), "core/src/lib.rs: module `{m}` has no layer in LAYERS");
    }
}

#[test]
fn an_upward_import_is_reported_with_file_and_import() {
    let roots = root_names("pub use scheduler::{run_cycle, CycleOptions};\npub use cluster::Cluster;");
    let files = vec![
        (
            "core/src/session/mod.rs".to_string(),
            "session".to_string(),
            strip("use crate::cluster::Cluster;\n// use crate::actions::x;\nuse crate::framework::Plugins;\n"),
        ),
        ("core/src/cluster/mod.rs".to_string(), "cluster".to_string(), strip("use crate::{intern::Sym, CycleOptions};\n")),
        ("core/src/model/mod.rs".to_string(), "model".to_string(), strip("use crate::resource::Dims;\nuse crate::kernels::x;\n")),
        (
            "core/src/actions/mod.rs".to_string(),
            "actions".to_string(),
            strip("use crate::select::nodes;\n#[cfg(test)]\nmod tests {\n use crate::workload::x;\n}\n"),
        ),
    ];
    let bad = violations(&files, &roots);
    assert_eq!(bad.len(), 3, "{bad:?}");
    assert!(bad[0].starts_with("core/src/session/mod.rs: `crate::framework::Plugins` names `framework`"), "{}", bad[0]);
    assert!(bad[1].starts_with("core/src/cluster/mod.rs: `crate::{CycleOptions}` names `scheduler`"), "{}", bad[1]);
    assert_eq!(bad[2], "core/src/model/mod.rs: `crate::kernels::x` names `kernels`, listed after `model` in layer model");
}

#[test]
fn no_layer_below_the_plugins_names_a_plugin() {
    // The cluster copy, the decisions, the session and the framework know plugins only through
    // the registry: no file of theirs spells a registered plugin's name (outside comments and
    // tests). The conf parser below them knows Volcano's plugin names as conf vocabulary.
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let from = LAYERS.iter().position(|(l, _)| *l == "cluster").expect("a cluster layer");
    let below = LAYERS.iter().position(|(l, _)| *l == "plugins").expect("a plugins layer");
    let mut paths = Vec::new();
    rs_files(&src, &mut paths);
    let mut bad = Vec::new();
    let mut read = 0;
    for p in &paths {
        let Some(module) = module_of(&src, p) else { continue };
        if layer_of(&module).is_none_or(|l| l < from || l >= below) {
            continue;
        }
        read += 1;
        let text = strip(&std::fs::read_to_string(p).expect("read source"));
        for e in basalt_core::plugins::REGISTRY.entries {
            if text.contains(&format!("\"{}\"", e.name)) {
                bad.push(format!("core/src/{}: names plugin \"{}\"", p.strip_prefix(&src).unwrap().display(), e.name));
            }
        }
    }
    assert!(read > 20, "read the lower layers' sources ({read} files)");
    assert!(bad.is_empty(), "plugins named below the plugins layer:\n{}", bad.join("\n"));
}

/// The `pub` fields of `session/*.rs` that hold a `&mut` slice: a column anyone outside the
/// session could write.
fn writable_columns(text: &str) -> Vec<String> {
    strip(text)
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("pub ") && !l.starts_with("pub fn") && l.contains(": &'a mut"))
        .map(str::to_string)
        .collect()
}

#[test]
fn session_columns_are_written_only_inside_the_session() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/session");
    let mut files = Vec::new();
    rs_files(&dir, &mut files);
    assert!(files.len() > 5, "read the session's files: {files:?}");
    let mut open: Vec<String> = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        open.extend(writable_columns(&text).into_iter().map(|l| format!("{}: {l}", f.display())));
    }
    assert!(
        open.is_empty(),
        "session columns writable from outside the session (make them pub(in crate::session) with a read accessor; \
         changes go through the Statement): {open:#?}"
    );
    // The check itself sees such a field.
    let sample = "pub struct T<'a> {\n    pub idle: &'a mut [i64],\n    pub(in crate::session) used: &'a mut [i64],\n}\n";
    assert_eq!(writable_columns(sample), ["pub idle: &'a mut [i64],"]);
}
