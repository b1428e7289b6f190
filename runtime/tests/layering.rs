//! The runtime's layers (docs/architecture.md, `## Runtime`): every top-level module of
//! `runtime/src` has a place in [`LAYERS`], listed bottom-up, and may name through `crate::`
//! only the modules its row allows, all of them listed above it. A `crate::` path to any other
//! top-level module (an upward or sideways import, e.g. `live` reaching into the simulator) fails
//! this test with the file, the line and the import. Test modules (`#[cfg(test)] mod … {` to the
//! end of the file) and comments are not checked, as `shared/tools/module-circles.py` counts.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

/// Each top-level module and the top-level modules it may import, bottom-up: a row names only
/// rows above it, so the layers cannot form a circle.
const LAYERS: &[(&str, &[&str])] = &[
    // Volcano's custom resources as kube types.
    ("crd", &[]),
    // Kubernetes/Volcano objects → the core's model (and Go durations, quantities).
    ("convert", &["crd"]),
    // Volcano's admission rules as pure functions (the webhook manager serves them).
    ("admission", &["crd", "convert"]),
    // What of a scheduler conf Basalt does not honour.
    ("conf_check", &[]),
    // The flight recorder's format, writer, reader, re-run and explain (core types only).
    ("recorder", &[]),
    // Kubernetes plumbing every process shares: client, leader election, limiter, HTTP, watch loop.
    ("plumbing", &[]),
    // `basalt controller`: the job, PodGroup and Queue controllers (the job logic is pure and
    // shared with the simulator).
    ("controller", &["crd", "convert", "plumbing"]),
    // Offline: YAML/JSON files → a core cluster.
    ("load", &["crd", "convert", "controller"]),
    // Offline: the simulated cluster behind `basalt simulate`.
    ("sim", &["crd", "convert", "conf_check", "controller", "load"]),
    // Offline: `basalt replay` over virtual time.
    ("replay", &["crd", "convert", "conf_check", "load", "sim"]),
    // Live: `basalt scheduler`. Never the offline side.
    ("live", &["crd", "convert", "conf_check", "plumbing", "recorder"]),
    // Live: `basalt webhook-manager`, the admission rules over HTTPS.
    ("webhooks", &["crd", "convert", "admission", "plumbing"]),
    // `vcctl`: Volcano's command line for Jobs, Queues and Commands (what each command does
    // against the API server and prints).
    ("vcctl", &["crd", "convert", "plumbing"]),
    // The command line: parses flags, builds options, calls one of the above.
    (
        "cli",
        &[
            "crd",
            "convert",
            "admission",
            "conf_check",
            "recorder",
            "plumbing",
            "controller",
            "load",
            "sim",
            "replay",
            "live",
            "webhooks",
            "vcctl",
        ],
    ),
];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The top-level modules of `src` (`x.rs` or `x/`, not `lib.rs`, `main.rs`, `bin/`), each with
/// its files.
fn modules(src: &Path) -> Vec<(String, Vec<PathBuf>)> {
    let mut out: Vec<(String, Vec<PathBuf>)> = Vec::new();
    let mut entries: Vec<_> = fs::read_dir(src).expect("runtime/src is readable").map(|e| e.unwrap().path()).collect();
    entries.sort();
    for p in entries {
        let name = p.file_stem().unwrap().to_string_lossy().to_string();
        let files = if p.is_dir() {
            if name == "bin" {
                continue;
            }
            let mut fs = Vec::new();
            walk(&p, &mut fs);
            fs
        } else if p.extension().is_some_and(|e| e == "rs") && name != "lib" && name != "main" {
            vec![p.clone()]
        } else {
            continue;
        };
        match out.iter_mut().find(|(n, _)| *n == name) {
            Some((_, v)) => v.extend(files),
            None => out.push((name, files)),
        }
    }
    out
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            walk(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// The lines of `text` that are checked: up to the first `#[cfg(test)]` followed by `mod`, with
/// `//` comments and `/* */` comments blanked (line numbers kept).
fn checked_lines(text: &str) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut in_block = false;
    for line in text.lines() {
        let mut out = String::new();
        let mut rest = line;
        loop {
            if in_block {
                match rest.find("*/") {
                    Some(i) => {
                        rest = &rest[i + 2..];
                        in_block = false;
                    }
                    None => break,
                }
            } else {
                let line_c = rest.find("//");
                let block_c = rest.find("/*");
                match (line_c, block_c) {
                    (Some(l), b) if b.is_none_or(|b| l < b) => {
                        out.push_str(&rest[..l]);
                        break;
                    }
                    (_, Some(b)) => {
                        out.push_str(&rest[..b]);
                        rest = &rest[b + 2..];
                        in_block = true;
                    }
                    _ => {
                        out.push_str(rest);
                        break;
                    }
                }
            }
        }
        lines.push(out);
    }
    for i in 0..lines.len() {
        if lines[i].trim() == "#[cfg(test)]" {
            let next = lines[i + 1..].iter().find(|l| !l.trim().is_empty() && !l.trim().starts_with("#["));
            if next.is_some_and(|l| l.trim_start().starts_with("mod ") || l.trim_start().starts_with("pub(crate) mod ")) {
                lines.truncate(i);
                break;
            }
        }
    }
    lines
}

/// The top-level names `line` reaches through `crate::`: `crate::a::…` gives `a`, and
/// `crate::{a::x, b}` gives `a` and `b` (`$crate::` in macros is not this crate's path).
fn crate_names(line: &str) -> Vec<String> {
    let mut names = Vec::new();
    let bytes = line.as_bytes();
    let mut from = 0;
    while let Some(i) = line[from..].find("crate::") {
        let at = from + i;
        from = at + "crate::".len();
        let before = if at == 0 { b' ' } else { bytes[at - 1] };
        if before == b'$' || before.is_ascii_alphanumeric() || before == b'_' {
            continue;
        }
        let rest = &line[from..];
        if let Some(group) = rest.strip_prefix('{') {
            let mut depth = 1;
            let mut item_start = true;
            let mut ident = String::new();
            for c in group.chars() {
                match c {
                    '{' => depth += 1,
                    '}' => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    ',' if depth == 1 => {
                        if item_start && !ident.is_empty() {
                            names.push(std::mem::take(&mut ident));
                        }
                        item_start = true;
                        continue;
                    }
                    _ => {}
                }
                if depth == 1 && item_start {
                    if c.is_alphanumeric() || c == '_' {
                        ident.push(c);
                        continue;
                    }
                    if !ident.is_empty() {
                        names.push(std::mem::take(&mut ident));
                        item_start = false;
                    }
                }
            }
            if !ident.is_empty() {
                names.push(ident);
            }
        } else {
            let n: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            if !n.is_empty() {
                names.push(n);
            }
        }
    }
    names
}

/// Every import of `modules` that its row in [`LAYERS`] does not allow, as
/// `file:line: <module> may not import <name> (...): <line>`.
fn violations(src: &Path, modules: &[(String, Vec<PathBuf>)]) -> Vec<String> {
    let tops: BTreeSet<&str> = modules.iter().map(|(n, _)| n.as_str()).collect();
    let mut bad = Vec::new();
    for (module, files) in modules {
        let allowed: &[&str] = LAYERS.iter().find(|(m, _)| m == module).map(|(_, a)| *a).unwrap_or(&[]);
        for f in files {
            let text = fs::read_to_string(f).unwrap();
            for (i, line) in checked_lines(&text).iter().enumerate() {
                for name in crate_names(line) {
                    if name != *module && tops.contains(name.as_str()) && !allowed.contains(&name.as_str()) {
                        bad.push(format!(
                            "runtime/src/{}:{}: {module} may not import {name} ({module} may import: {}): {}",
                            f.strip_prefix(src).unwrap().display(),
                            i + 1,
                            if allowed.is_empty() { "none".to_string() } else { allowed.join(", ") },
                            line.trim()
                        ));
                    }
                }
            }
        }
    }
    bad
}

#[test]
fn the_layer_table_points_one_way() {
    for (i, (module, allowed)) in LAYERS.iter().enumerate() {
        for a in *allowed {
            let pos = LAYERS.iter().position(|(m, _)| m == a);
            assert!(pos.is_some_and(|p| p < i), "LAYERS: {module} may import {a}, which is not listed above it");
        }
    }
}

#[test]
fn every_top_level_module_has_a_layer() {
    let missing: Vec<String> =
        modules(&src()).into_iter().map(|(n, _)| n).filter(|n| !LAYERS.iter().any(|(m, _)| m == n)).collect();
    assert!(missing.is_empty(), "runtime/src modules without a row in LAYERS (tests/layering.rs): {missing:?}");
}

#[test]
fn no_module_imports_a_layer_it_may_not() {
    let src = src();
    let bad = violations(&src, &modules(&src));
    assert!(bad.is_empty(), "imports against the runtime's layers:\n{}", bad.join("\n"));
}

#[test]
fn the_checker_sees_plain_grouped_and_nested_paths_and_skips_comments_and_tests() {
    assert_eq!(crate_names("use crate::sim::jobs::JobReport;"), vec!["sim"]);
    assert_eq!(crate_names("    let x = crate::live::runner::run(&a);"), vec!["live"]);
    assert_eq!(crate_names("use crate::{cli::scheduler::X, live, sim::{a, b}};"), vec!["cli", "live", "sim"]);
    assert_eq!(crate_names("$crate::foo!(); pub(crate) fn f() {}"), Vec::<String>::new());
    let lines =
        checked_lines("use crate::a; // crate::b\n/* crate::c */ crate::d::x\n#[cfg(test)]\nmod tests {\n use crate::e;\n}\n");
    let names: Vec<String> = lines.iter().flat_map(|l| crate_names(l)).collect();
    assert_eq!(names, vec!["a", "d"]);
}

#[test]
fn an_upward_import_is_reported_with_its_file_and_line() {
    let dir = std::env::temp_dir().join(format!("basalt-layering-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(dir.join("live")).unwrap();
    fs::write(dir.join("sim.rs"), "//! sim\nuse crate::load;\n").unwrap();
    fs::write(dir.join("load.rs"), "//! load\n").unwrap();
    fs::write(dir.join("live/runner.rs"), "//! runner\n\nuse crate::sim::strict_check;\n").unwrap();
    let bad = violations(&dir, &modules(&dir));
    let _ = fs::remove_dir_all(&dir);
    assert_eq!(bad.len(), 1, "{bad:?}");
    assert!(bad[0].starts_with("runtime/src/live/runner.rs:3: live may not import sim"), "{}", bad[0]);
    assert!(bad[0].ends_with("use crate::sim::strict_check;"), "{}", bad[0]);
}
