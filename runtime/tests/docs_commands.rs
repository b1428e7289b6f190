//! Every shell command in README.md and docs/*.md runs as written from the repository root.
//!
//! Commands are taken from fenced `sh`/`bash`/`shell` blocks (every line; `\` continues a
//! line, `# …` is a comment), `$ ` lines of `console` and `text` blocks, and inline code spans
//! that start with `basalt ` followed by a subcommand and arguments. Inline spans with
//! placeholders (`N`, `FILE`, `[--flag]`, `a|b`, `…`) are synopses and not run; in a fenced
//! shell block a synopsis is an error (write it in a `text` block).
//!
//! `basalt` is the binary under test (its directory is put first on `PATH`), and
//! `cargo run --release -p basalt-runtime --bin basalt -- ARGS` is run as `basalt ARGS`. The
//! commands in [`SKIPPED`] are long or need what a test does not have; they are listed by name
//! with the reason, and printed. Every other command must exit 0. A `text` block that starts
//! with `$ COMMAND` shows that command's output: it must match what the command prints, except
//! the rows of a section whose title says it "varies run to run".

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Commands not run, by prefix, with the reason.
const SKIPPED: &[(&str, &str)] = &[
    ("cargo test", "the test suite itself"),
    ("cargo build", "a build: CI builds before testing"),
    ("cargo bench", "criterion benches: minutes"),
    ("cargo run --release -p basalt-benches", "the profiling example: a release build of the benches"),
    (
        "cargo run --release -p basalt-runtime --example live_bench",
        "the live bench: a real apiserver and up to 100,000 pods, minutes",
    ),
    ("cargo +nightly fuzz", "needs the nightly toolchain and cargo-fuzz"),
    ("cargo install", "installs into ~/.cargo/bin"),
    ("python3 ../shared/conformance/run", "the conformance cases: .ci/run runs them against the release binary"),
    ("basalt scheduler", "the live scheduler: needs a Kubernetes API server"),
    ("basalt controller", "the controllers: need a Kubernetes API server"),
    ("basalt replay --alibaba-v2023", "the whole Alibaba trace: 5-15 s per run"),
    ("basalt replay --on-events", "5,649 cycles: about 9 s"),
    ("basalt bench --sweep", "a scaling sweep: minutes, and it rewrites docs/bench/"),
    ("basalt bench --nodes 10000", "10,000-node shapes: tens of seconds"),
];

/// How `cargo run` reaches the binary under test in the docs.
const CARGO_RUN_BASALT: &str = "cargo run --release -p basalt-runtime --bin basalt -- ";

/// A guard against a command that hangs (not a speed check: speed is measured in benches).
const HANG_GUARD: Duration = Duration::from_secs(600);

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("runtime/ has a parent").to_path_buf()
}

/// The documents the test reads: README.md and every docs/*.md.
fn documents() -> Vec<PathBuf> {
    let root = repo_root();
    let mut docs = vec![root.join("README.md")];
    let mut more: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .expect("docs/ exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().and_then(|e| e.to_str()) == Some("md"))
        .collect();
    more.sort();
    docs.extend(more);
    docs
}

/// A command found in a document.
#[derive(Clone, Debug)]
struct DocCommand {
    /// `FILE:LINE`.
    at: String,
    /// The command as written (continuations joined, prompt and comment removed).
    text: String,
    /// Whether it came from a fenced shell block (a synopsis there is an error).
    fenced: bool,
    /// The output shown under it in a `text` block, if any.
    shown_output: Option<Vec<String>>,
}

/// Drops a trailing ` # comment` outside quotes.
fn strip_comment(line: &str) -> &str {
    let (mut single, mut double) = (false, false);
    let mut prev = ' ';
    for (i, c) in line.char_indices() {
        match c {
            '\'' if !double => single = !single,
            '"' if !single => double = !double,
            '#' if !single && !double && prev.is_whitespace() => return line[..i].trim_end(),
            _ => {}
        }
        prev = c;
    }
    line.trim_end()
}

/// A placeholder word of a synopsis: `N`, `FILE`, `FILE.svg`, `VARIANT`.
fn is_placeholder(token: &str) -> bool {
    let word = token.trim_start_matches('-').split('.').next().unwrap_or("");
    let word = word.trim_matches(|c: char| !c.is_alphanumeric() && c != '_');
    word.chars().next().is_some_and(|c| c.is_ascii_uppercase())
        && word.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}

/// True when `cmd` is a synopsis rather than a command.
fn is_synopsis(cmd: &str) -> bool {
    cmd.contains(['[', '|', '…']) || cmd.contains("...") || cmd.split_whitespace().any(is_placeholder)
}

/// The commands of one Markdown document.
fn extract(file: &str, md: &str) -> Vec<DocCommand> {
    let mut out = Vec::new();
    let lines: Vec<&str> = md.lines().collect();
    let mut prose = String::new();
    let mut prose_lines: Vec<usize> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let Some(info) = line.trim_start().strip_prefix("```") else {
            prose_lines.extend(std::iter::repeat_n(i + 1, line.len() + 1));
            prose.push_str(line);
            prose.push('\n');
            i += 1;
            continue;
        };
        let lang = info.trim().to_string();
        let start = i + 1;
        let mut end = start;
        while end < lines.len() && !lines[end].trim_start().starts_with("```") {
            end += 1;
        }
        let body = &lines[start..end];
        match lang.as_str() {
            "sh" | "bash" | "shell" => {
                let mut k = 0;
                while k < body.len() {
                    let first = k;
                    let mut joined = String::new();
                    loop {
                        let l = body[k].trim();
                        k += 1;
                        match l.strip_suffix('\\') {
                            Some(head) if k < body.len() => {
                                joined.push_str(head.trim_end());
                                joined.push(' ');
                            }
                            _ => {
                                joined.push_str(l);
                                break;
                            }
                        }
                    }
                    let cmd = strip_comment(joined.trim().strip_prefix("$ ").unwrap_or(joined.trim()));
                    if !cmd.is_empty() && !cmd.starts_with('#') {
                        out.push(DocCommand {
                            at: format!("{file}:{}", start + first + 1),
                            text: cmd.to_string(),
                            fenced: true,
                            shown_output: None,
                        });
                    }
                }
            }
            "console" | "text" => {
                for (k, l) in body.iter().enumerate() {
                    let Some(cmd) = l.trim_start().strip_prefix("$ ") else { continue };
                    // Output shown under a `$ ` line that opens a text block.
                    let shown = (k == 0).then(|| body[1..].iter().map(|s| s.to_string()).collect());
                    out.push(DocCommand {
                        at: format!("{file}:{}", start + k + 1),
                        text: strip_comment(cmd).to_string(),
                        fenced: true,
                        shown_output: shown,
                    });
                }
            }
            _ => {}
        }
        i = end + 1;
    }
    // Inline code spans in the prose (they may wrap over lines).
    let bytes: Vec<char> = prose.chars().collect();
    let mut offsets = Vec::with_capacity(bytes.len());
    let mut off = 0;
    for c in &bytes {
        offsets.push(off);
        off += c.len_utf8();
    }
    let mut k = 0;
    while k < bytes.len() {
        if bytes[k] != '`' {
            k += 1;
            continue;
        }
        let run = bytes[k..].iter().take_while(|&&c| c == '`').count();
        if run > 1 {
            k += run;
            continue;
        }
        let Some(len) = bytes[k + 1..].iter().position(|&c| c == '`') else { break };
        let span: String = bytes[k + 1..k + 1 + len].iter().collect::<String>().replace('\n', " ");
        let span = span.split_whitespace().collect::<Vec<_>>().join(" ");
        let words: Vec<&str> = span.split(' ').collect();
        if words.first() == Some(&"basalt") && words.len() >= 3 && !is_synopsis(&span) {
            let line = prose_lines.get(offsets[k]).copied().unwrap_or(0);
            out.push(DocCommand { at: format!("{file}:{line}"), text: span.clone(), fenced: false, shown_output: None });
        }
        k += len + 2;
    }
    out
}

/// The command as run: `cargo run … --bin basalt -- ARGS` becomes `basalt ARGS`.
fn as_run(cmd: &str) -> String {
    match cmd.strip_prefix(CARGO_RUN_BASALT) {
        Some(args) => format!("basalt {args}"),
        None => cmd.to_string(),
    }
}

fn skip_reason(cmd: &str) -> Option<&'static str> {
    SKIPPED.iter().find(|(prefix, _)| cmd == *prefix || cmd.starts_with(&format!("{prefix} "))).map(|(_, why)| *why)
}

/// Runs `cmd` with `sh -c` from the repository root, the binary under test first on `PATH`.
/// Returns (exit ok, stdout, stderr).
fn run(cmd: &str) -> (bool, String, String) {
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_basalt"));
    let dir = bin.parent().expect("the binary has a directory");
    let path = std::env::join_paths(
        std::iter::once(dir.to_path_buf()).chain(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())),
    )
    .expect("PATH joins");
    let out_file = std::env::temp_dir().join(format!("basalt-docs-cmd-{}.out", std::process::id()));
    let err_file = out_file.with_extension("err");
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(cmd)
        .current_dir(repo_root())
        .env("PATH", path)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out_file).expect("scratch file"))
        .stderr(std::fs::File::create(&err_file).expect("scratch file"))
        .spawn()
        .expect("sh runs");
    let started = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break Some(s);
        }
        if started.elapsed() > HANG_GUARD {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let stdout = std::fs::read_to_string(&out_file).unwrap_or_default();
    let mut stderr = std::fs::read_to_string(&err_file).unwrap_or_default();
    let _ = std::fs::remove_file(&out_file);
    let _ = std::fs::remove_file(&err_file);
    if status.is_none() {
        stderr.push_str(&format!("\n(killed after {} s: add it to SKIPPED with a reason)", HANG_GUARD.as_secs()));
    }
    (status.is_some_and(|s| s.success()), stdout, stderr)
}

/// The shown output against the real one, without the rows of "varies run to run" sections
/// and with runs of spaces taken as one (a table's column widths follow its widest value, which
/// may be a varying one); `None` when they agree, else the first differing line.
fn compare_output(shown: &[String], real: &str) -> Option<String> {
    fn steady(lines: impl Iterator<Item = String>) -> Vec<String> {
        let mut varies = false;
        let mut kept = Vec::new();
        for l in lines {
            if !l.starts_with(' ') {
                varies = l.contains("varies run to run");
            }
            if !(varies && l.starts_with(' ')) {
                kept.push(l.split_whitespace().collect::<Vec<_>>().join(" "));
            }
        }
        while kept.last().is_some_and(|l| l.is_empty()) {
            kept.pop();
        }
        kept
    }
    let want = steady(shown.iter().cloned());
    let got = steady(real.lines().map(str::to_string));
    for (n, (w, g)) in want.iter().zip(&got).enumerate() {
        if w != g {
            return Some(format!("line {}: shown {w:?}, printed {g:?}", n + 1));
        }
    }
    (want.len() != got.len()).then(|| format!("shown {} lines, printed {}", want.len(), got.len()))
}

#[test]
fn extraction_finds_commands_and_leaves_synopses() {
    let md = "intro `basalt replay --conf a.conf` and `basalt bench --nodes N` and `basalt simulate`\n\
              `basalt replay\n--seed 2` wraps\n\
              ```sh\n$ basalt replay --seed 3  # a comment\nbasalt simulate \\\n  --cluster x\n# only a comment\n```\n\
              ```text\n$ basalt replay\nReport\n  row\n```\n\
              ```yaml\nbasalt: not a command\n```\n";
    let cmds = extract("d.md", md);
    let texts: Vec<&str> = cmds.iter().map(|c| c.text.as_str()).collect();
    assert_eq!(
        texts,
        [
            "basalt replay --seed 3",
            "basalt simulate --cluster x",
            "basalt replay",
            "basalt replay --conf a.conf",
            "basalt replay --seed 2"
        ]
    );
    assert_eq!(cmds[0].at, "d.md:5");
    assert_eq!(cmds[3].at, "d.md:1");
    assert_eq!(cmds[4].at, "d.md:2");
    assert_eq!(cmds[2].shown_output.as_deref(), Some(&["Report".to_string(), "  row".to_string()][..]));
    assert!(is_synopsis("basalt simulate --cluster FILE_OR_DIR..."));
    assert!(is_synopsis("basalt bench --plot FILE.svg"));
    assert!(!is_synopsis("basalt replay --conf examples/confs/binpack.conf"));
    assert_eq!(as_run("cargo run --release -p basalt-runtime --bin basalt -- replay"), "basalt replay");
    assert_eq!(skip_reason("basalt scheduler --kubeconfig k"), Some("the live scheduler: needs a Kubernetes API server"));
    assert_eq!(skip_reason("basalt schedulers"), None);
    let steady = compare_output(
        &["T".into(), "Wall clock (varies run to run)".into(), "  x 1".into(), "End".into()],
        "T\nWall clock (varies run to run)\n  x 2\nEnd\n",
    );
    assert_eq!(steady, None, "rows of a varying section are not compared");
    assert!(compare_output(&["a".into()], "b\n").is_some());
}

#[test]
fn every_documented_command_runs_from_the_repo_root() {
    let root = repo_root();
    let mut commands = Vec::new();
    for doc in documents() {
        let md = std::fs::read_to_string(&doc).expect("readable doc");
        let name = doc.strip_prefix(&root).unwrap_or(&doc).display().to_string();
        commands.extend(extract(&name, &md));
    }
    assert!(commands.len() >= 10, "found only {} commands: is the extraction broken?", commands.len());
    let mut failures = Vec::new();
    let mut ran: BTreeSet<String> = BTreeSet::new();
    let mut skipped: BTreeSet<String> = BTreeSet::new();
    for c in &commands {
        let cmd = as_run(&c.text);
        if is_synopsis(&cmd) {
            if c.fenced {
                failures.push(format!("{}: a synopsis in a shell block (use a text block): {cmd}", c.at));
            }
            continue;
        }
        if let Some(why) = skip_reason(&cmd) {
            skipped.insert(format!("{cmd}  ({why})"));
            continue;
        }
        // A command shown with its output runs again to compare; others run once.
        if !ran.insert(cmd.clone()) && c.shown_output.is_none() {
            continue;
        }
        let (ok, stdout, stderr) = run(&cmd);
        if !ok {
            failures.push(format!("{}: `{cmd}` failed:\n{stderr}", c.at));
            continue;
        }
        if let Some(shown) = &c.shown_output {
            if let Some(diff) = compare_output(shown, &stdout) {
                failures.push(format!("{}: the output shown for `{cmd}` is not what it prints: {diff}", c.at));
            }
        }
    }
    eprintln!("ran {} documented commands:", ran.len());
    for r in &ran {
        eprintln!("  {r}");
    }
    eprintln!("skipped by name:");
    for s in &skipped {
        eprintln!("  {s}");
    }
    assert!(failures.is_empty(), "{} documented command(s) do not work as written:\n{}", failures.len(), failures.join("\n"));
}
