//! The scheduler conf, reloaded when its file changes (behaviour contract §1.2).
//!
//! Volcano watches the conf file's **directory** with fsnotify and reloads on Write or Create, so
//! a ConfigMap volume works: the kubelet writes a new `..<timestamp>` folder, points a
//! `..data_tmp` symlink at it and renames it over `..data`, while the file itself
//! (`volcano-scheduler.conf → ..data/volcano-scheduler.conf`) is never written. [`ConfWatcher`]
//! does the same with `notify`: a create, write, rename or remove in the directory of the conf
//! file itself, of the file a symlink conf names there, or of a kubelet `..` entry schedules a
//! re-read after a quiet period of [`DEBOUNCE`] (a swap is several events), with the parser
//! `basalt simulate` uses ([`SchedulerConf::parse`]). Other files in the directory (the
//! scheduler's own log, say) are ignored, and a re-read whose text is the one last read (good or
//! refused) does nothing: no parse, no warnings logged again, no reload counted. A read or parse
//! error keeps the last good conf and is logged (warn, with the file and the error) once per
//! distinct text or error, as Volcano keeps its previous conf.
//! No conf file means Volcano's built-in default; so does an empty one (the parser's rule).
//! Command-line options are applied on top of every conf loaded.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

use basalt_core::conf::SchedulerConf;
use notify::event::{AccessKind, AccessMode};
use notify::{EventKind, RecommendedWatcher, RecursiveMode, Watcher};
use tokio::sync::watch;

/// Quiet period after the last file-system event before the conf is re-read.
pub const DEBOUNCE: Duration = Duration::from_millis(100);

/// The command-line options applied on top of every conf loaded.
type Apply = dyn Fn(&mut SchedulerConf) + Send + Sync;

/// A check every conf must pass before it is used (`basalt scheduler --strict`): `Err` names
/// what is refused.
type Check = dyn Fn(&SchedulerConf, &Path) -> Result<(), String> + Send + Sync;

/// The current scheduler conf, kept up to date with its file. Dropping it stops watching.
pub struct ConfWatcher {
    inner: Arc<Inner>,
    /// Kept alive for as long as the watcher: dropping it ends the reload thread.
    _watcher: Option<RecommendedWatcher>,
}

impl std::fmt::Debug for ConfWatcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConfWatcher")
            .field("path", &self.inner.path)
            .field("reloads", &self.reloads())
            .field("failures", &self.failures())
            .finish_non_exhaustive()
    }
}

struct Inner {
    path: Option<PathBuf>,
    apply: Box<Apply>,
    check: Box<Check>,
    tx: watch::Sender<Arc<SchedulerConf>>,
    /// The text of the last good conf: an event that leaves the text unchanged is no reload.
    last_text: Mutex<String>,
    /// The last refused read: its text, or its read error. Read again unchanged, it is
    /// neither parsed nor logged again.
    last_refused: Mutex<Option<Result<String, String>>>,
    /// Times the file's text was parsed (the first load included).
    parses: AtomicU64,
    reloads: AtomicU64,
    failures: AtomicU64,
}

/// Reads the conf file's text. Errors name the file.
fn read(path: &Path) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|e| format!("cannot read conf {}: {e}", path.display()))
}

/// Reads and parses the conf at `path`, then runs `check` on it; warnings are logged. Errors
/// name the file.
fn load(path: &Path, check: &Check) -> Result<(String, SchedulerConf), String> {
    let text = read(path)?;
    parse(path, text, check)
}

/// Parses `text`, the conf read from `path`, then runs `check` on it; warnings are logged.
/// Errors name the file.
fn parse(path: &Path, text: String, check: &Check) -> Result<(String, SchedulerConf), String> {
    let (conf, warnings) = SchedulerConf::parse(&text).map_err(|e| format!("invalid conf {}: {e}", path.display()))?;
    check(&conf, path)?;
    for w in warnings {
        tracing::warn!(file = %path.display(), "{w}");
    }
    Ok((text, conf))
}

/// Whether a file-system event can change what the conf file reads as. Opening or reading a file
/// cannot (and the watcher's own reads would otherwise trigger reloads); nor can a change to
/// a file whose name is not in `names` (the conf file and the file a symlink conf names in the
/// same directory) and not a kubelet ConfigMap entry (`..data`, `..data_tmp`, `..<version>`).
/// An event without paths (a rescan) may have been anything.
fn relevant(ev: &notify::Event, names: &[std::ffi::OsString]) -> bool {
    let kind_may_change = match ev.kind {
        EventKind::Access(AccessKind::Close(AccessMode::Write)) => true,
        EventKind::Access(_) => false,
        _ => true,
    };
    kind_may_change
        && (ev.paths.is_empty()
            || ev
                .paths
                .iter()
                .any(|p| p.file_name().is_none_or(|n| names.iter().any(|x| x == n) || n.to_string_lossy().starts_with(".."))))
}

/// The names in the conf's directory whose changes can change the conf: the file's own, and,
/// when it is a symlink to a file in the same directory, that file's.
fn watched_names(path: &Path, dir: &Path) -> Vec<std::ffi::OsString> {
    let mut names: Vec<std::ffi::OsString> = path.file_name().map(|n| n.to_os_string()).into_iter().collect();
    if let Ok(target) = std::fs::read_link(path) {
        let target = if target.is_absolute() { target } else { dir.join(target) };
        if target.parent() == Some(dir) {
            names.extend(target.file_name().map(|n| n.to_os_string()));
        }
    }
    names
}

impl Inner {
    /// Re-reads the file; publishes the conf if it parsed and its text changed. A text (or read
    /// error) equal to the last one read is not parsed or logged again.
    fn reload(&self) {
        let Some(path) = &self.path else { return };
        let read = read(path);
        {
            if read.as_ref().is_ok_and(|t| *self.last_text.lock().unwrap_or_else(|p| p.into_inner()) == *t) {
                *self.last_refused.lock().unwrap_or_else(|p| p.into_inner()) = None;
                return;
            }
            let mut refused = self.last_refused.lock().unwrap_or_else(|p| p.into_inner());
            if refused.as_ref() == Some(&read) {
                return;
            }
            *refused = Some(read.clone());
        }
        let loaded = read.and_then(|text| {
            self.parses.fetch_add(1, Ordering::Relaxed);
            parse(path, text, &*self.check)
        });
        match loaded {
            Ok((text, mut conf)) => {
                let mut last = self.last_text.lock().unwrap_or_else(|p| p.into_inner());
                if *last == text {
                    return;
                }
                for loss in basalt_core::conf::dropped_by_unknown(&self.tx.borrow(), &conf) {
                    // Without --strict (which refuses an unknown name) the reload goes on, loudly.
                    tracing::error!(file = %path.display(), "{loss}");
                }
                (self.apply)(&mut conf);
                tracing::info!(file = %path.display(), actions = ?conf.actions, "reloaded the scheduler conf");
                *last = text;
                *self.last_refused.lock().unwrap_or_else(|p| p.into_inner()) = None;
                self.tx.send_replace(Arc::new(conf));
                self.reloads.fetch_add(1, Ordering::Relaxed);
            }
            Err(e) => {
                self.failures.fetch_add(1, Ordering::Relaxed);
                tracing::warn!(file = %path.display(), error = %e, "the scheduler conf was not reloaded; keeping the last good conf");
            }
        }
    }
}

impl ConfWatcher {
    /// Loads `path` (`None` = Volcano's built-in default conf, not watched) and starts watching
    /// its directory; `apply` applies command-line options on top of every conf loaded.
    ///
    /// Errors: the first load failing (unreadable file or invalid conf; the message names the
    /// file), or the directory not being watchable.
    pub fn start(path: Option<PathBuf>, apply: impl Fn(&mut SchedulerConf) + Send + Sync + 'static) -> Result<Self, String> {
        Self::start_checked(path, |_, _| Ok(()), apply)
    }

    /// [`ConfWatcher::start`] with `check` run on every conf read from the file before it is
    /// used (the built-in default is not checked): a first conf it refuses is an error, a
    /// reloaded one is refused like an invalid one (logged and counted, the last good conf
    /// kept). `basalt scheduler --strict` passes [`crate::conf_check::strict_check`].
    ///
    /// Errors: as [`ConfWatcher::start`], or `check`'s message for the first conf.
    pub fn start_checked(
        path: Option<PathBuf>,
        check: impl Fn(&SchedulerConf, &Path) -> Result<(), String> + Send + Sync + 'static,
        apply: impl Fn(&mut SchedulerConf) + Send + Sync + 'static,
    ) -> Result<Self, String> {
        let apply: Box<Apply> = Box::new(apply);
        let check: Box<Check> = Box::new(check);
        let (text, mut conf) = match &path {
            None => (String::new(), SchedulerConf::default()),
            Some(p) => load(p, &*check)?,
        };
        apply(&mut conf);
        if let Some(p) = &path {
            tracing::info!(file = %p.display(), actions = ?conf.actions, "loaded the scheduler conf");
        } else {
            tracing::info!(actions = ?conf.actions, "no --scheduler-conf: using Volcano's built-in default conf");
        }
        let (tx, _) = watch::channel(Arc::new(conf));
        let inner = Arc::new(Inner {
            path: path.clone(),
            apply,
            check,
            tx,
            last_text: Mutex::new(text),
            last_refused: Mutex::new(None),
            parses: AtomicU64::new(u64::from(path.is_some())),
            reloads: AtomicU64::new(0),
            failures: AtomicU64::new(0),
        });
        let Some(path) = path else { return Ok(ConfWatcher { inner, _watcher: None }) };
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let names = watched_names(&path, &dir);
        let (ev_tx, ev_rx) = mpsc::channel::<()>();
        let mut watcher = notify::recommended_watcher(move |res: notify::Result<notify::Event>| match res {
            Ok(ev) if relevant(&ev, &names) => {
                let _ = ev_tx.send(());
            }
            Ok(_) => {}
            // A lost event (queue overflow) may have been a change: re-read to be sure.
            Err(e) => {
                tracing::warn!(error = %e, "conf directory watch error; re-reading the conf");
                let _ = ev_tx.send(());
            }
        })
        .map_err(|e| format!("cannot watch conf directory {}: {e}", dir.display()))?;
        watcher
            .watch(&dir, RecursiveMode::NonRecursive)
            .map_err(|e| format!("cannot watch conf directory {}: {e}", dir.display()))?;
        let worker = inner.clone();
        std::thread::Builder::new()
            .name("basalt-conf-reload".into())
            .spawn(move || debounce_loop(&ev_rx, &worker))
            .map_err(|e| format!("cannot start the conf reload thread: {e}"))?;
        Ok(ConfWatcher { inner, _watcher: Some(watcher) })
    }

    /// The last good conf, with the command-line options applied.
    pub fn current(&self) -> Arc<SchedulerConf> {
        self.inner.tx.borrow().clone()
    }

    /// The conf file, `None` for the built-in default.
    pub fn path(&self) -> Option<&Path> {
        self.inner.path.as_deref()
    }

    /// Successful reloads since [`ConfWatcher::start`] (the first load not counted; a re-read
    /// that finds the same text is no reload).
    pub fn reloads(&self) -> u64 {
        self.inner.reloads.load(Ordering::Relaxed)
    }

    /// Reloads refused (unreadable file or invalid conf) since [`ConfWatcher::start`], each
    /// distinct text or read error once.
    pub fn failures(&self) -> u64 {
        self.inner.failures.load(Ordering::Relaxed)
    }

    /// Times the conf file's text was parsed since [`ConfWatcher::start`], the first load
    /// included (0 without a file): what logs the conf's warnings, so it grows only when the
    /// file's text changed.
    pub fn parses(&self) -> u64 {
        self.inner.parses.load(Ordering::Relaxed)
    }

    /// A receiver that sees every conf published from now on (and the current one).
    pub fn subscribe(&self) -> watch::Receiver<Arc<SchedulerConf>> {
        self.inner.tx.subscribe()
    }
}

/// Waits for an event, then for [`DEBOUNCE`] without one, then reloads; ends when the watcher
/// (the only sender) is dropped.
fn debounce_loop(events: &mpsc::Receiver<()>, inner: &Inner) {
    while events.recv().is_ok() {
        loop {
            match events.recv_timeout(DEBOUNCE) {
                Ok(()) => continue,
                Err(mpsc::RecvTimeoutError::Timeout) => break,
                Err(mpsc::RecvTimeoutError::Disconnected) => return,
            }
        }
        inner.reload();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use basalt_core::conf::ActionKind;
    use std::time::Instant;

    const GOOD_1: &str = "actions: \"enqueue, allocate, backfill\"\ntiers:\n- plugins:\n  - name: priority\n  - name: gang\n";
    const GOOD_2: &str = "actions: \"allocate\"\ntiers:\n- plugins:\n  - name: gang\n";
    const BAD: &str = "actions: \"allocate, no-such-action\"\n";

    /// A fresh directory under the system temp dir, removed when dropped.
    struct TempDir(PathBuf);

    impl std::ops::Deref for TempDir {
        type Target = Path;
        fn deref(&self) -> &Path {
            &self.0
        }
    }

    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn tempdir(name: &str) -> TempDir {
        let d = std::env::temp_dir().join(format!("basalt-reload-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        TempDir(d)
    }

    #[test]
    fn the_watcher_can_be_shared_across_threads() {
        fn send_sync<T: Send + Sync>() {}
        send_sync::<ConfWatcher>();
    }

    /// Waits (up to 20 s, for a busy machine) until `done` holds.
    fn wait_until(what: &str, done: impl Fn() -> bool) {
        let end = Instant::now() + Duration::from_secs(20);
        while !done() {
            assert!(Instant::now() < end, "timed out waiting for {what}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn actions(w: &ConfWatcher) -> Vec<ActionKind> {
        w.current().actions.clone()
    }

    #[test]
    fn no_path_is_the_builtin_default_with_options_applied() {
        let w = ConfWatcher::start(None, |c| c.options.default_queue = "q1".into()).unwrap();
        let mut expected = SchedulerConf::default();
        expected.options.default_queue = "q1".into();
        assert_eq!(*w.current(), expected);
        assert_eq!((w.reloads(), w.failures()), (0, 0));
    }

    #[test]
    fn an_empty_file_is_the_builtin_default() {
        let d = tempdir("empty");
        let f = d.join("volcano-scheduler.conf");
        std::fs::write(&f, "").unwrap();
        let w = ConfWatcher::start(Some(f), |_| {}).unwrap();
        assert_eq!(*w.current(), SchedulerConf::default());
    }

    #[test]
    fn a_bad_first_conf_is_an_error_naming_the_file() {
        let d = tempdir("bad-first");
        let f = d.join("volcano-scheduler.conf");
        std::fs::write(&f, BAD).unwrap();
        let e = ConfWatcher::start(Some(f.clone()), |_| {}).unwrap_err();
        assert!(e.contains(&f.display().to_string()) && e.contains("no-such-action"), "{e}");
        let missing = d.join("missing.conf");
        let e = ConfWatcher::start(Some(missing.clone()), |_| {}).unwrap_err();
        assert!(e.starts_with("cannot read conf") && e.contains(&missing.display().to_string()), "{e}");
    }

    #[test]
    fn plain_file_good_bad_good() {
        let d = tempdir("plain");
        let f = d.join("volcano-scheduler.conf");
        std::fs::write(&f, GOOD_1).unwrap();
        let w = ConfWatcher::start(Some(f.clone()), |c| c.options.default_queue = "flag-queue".into()).unwrap();
        assert_eq!(actions(&w), [ActionKind::Enqueue, ActionKind::Allocate, ActionKind::Backfill]);
        let mut rx = w.subscribe();
        rx.mark_unchanged();

        std::fs::write(&f, BAD).unwrap();
        wait_until("the bad conf to be refused", || w.failures() == 1);
        assert_eq!(actions(&w), [ActionKind::Enqueue, ActionKind::Allocate, ActionKind::Backfill], "last good kept");
        assert!(!rx.has_changed().unwrap(), "nothing published for a refused conf");
        assert_eq!(w.reloads(), 0);

        std::fs::write(&f, GOOD_2).unwrap();
        wait_until("the new good conf", || w.reloads() == 1);
        assert_eq!(actions(&w), [ActionKind::Allocate]);
        assert_eq!(w.current().options.default_queue, "flag-queue", "options applied on reload too");
        assert!(rx.has_changed().unwrap());
        assert_eq!(rx.borrow_and_update().actions, [ActionKind::Allocate]);
        assert_eq!(w.failures(), 1);
    }

    /// Writes `text` as the kubelet updates a ConfigMap volume: a new `..<version>` folder, a
    /// `..data_tmp` symlink to it renamed over `..data`, the old folder removed.
    fn configmap_swap(dir: &Path, version: &str, old: Option<&str>, text: &str) {
        let ts = dir.join(version);
        std::fs::create_dir(&ts).unwrap();
        std::fs::write(ts.join("volcano-scheduler.conf"), text).unwrap();
        let tmp = dir.join("..data_tmp");
        std::os::unix::fs::symlink(version, &tmp).unwrap();
        std::fs::rename(&tmp, dir.join("..data")).unwrap();
        if let Some(old) = old {
            std::fs::remove_dir_all(dir.join(old)).unwrap();
        }
    }

    #[test]
    fn configmap_symlink_swap_good_bad_good() {
        let d = tempdir("configmap");
        configmap_swap(&d, "..v1", None, GOOD_1);
        let f = d.join("volcano-scheduler.conf");
        std::os::unix::fs::symlink("..data/volcano-scheduler.conf", &f).unwrap();
        let w = ConfWatcher::start(Some(f), |_| {}).unwrap();
        assert_eq!(actions(&w), [ActionKind::Enqueue, ActionKind::Allocate, ActionKind::Backfill]);

        configmap_swap(&d, "..v2", Some("..v1"), BAD);
        wait_until("the bad conf to be refused", || w.failures() >= 1);
        assert_eq!(actions(&w), [ActionKind::Enqueue, ActionKind::Allocate, ActionKind::Backfill], "last good kept");
        assert_eq!(w.reloads(), 0);

        configmap_swap(&d, "..v3", Some("..v2"), GOOD_2);
        wait_until("the new good conf", || w.reloads() == 1);
        assert_eq!(actions(&w), [ActionKind::Allocate]);
    }

    /// `--strict`'s check: a first conf it refuses is an error naming the file and what is
    /// refused; on reload such a conf is refused and the last good one kept, then a good one
    /// is taken.
    #[test]
    fn a_checked_conf_is_refused_at_start_and_on_reload() {
        let check = |c: &SchedulerConf, p: &Path| crate::conf_check::strict_check(c, &format!("conf {}", p.display()));
        let d = tempdir("strict");
        let f = d.join("volcano-scheduler.conf");
        let unimplemented = "actions: \"enqueue, allocate\"\ntiers:\n- plugins:\n  - name: gang\n  - name: tdm\n";
        std::fs::write(&f, unimplemented).unwrap();
        let e = ConfWatcher::start_checked(Some(f.clone()), check, |_| {}).unwrap_err();
        assert!(e.starts_with("--strict:") && e.contains(&f.display().to_string()) && e.contains("tdm"), "{e}");
        // Without the check the same conf starts (the plugin is skipped).
        assert!(ConfWatcher::start(Some(f.clone()), |_| {}).is_ok());

        std::fs::write(&f, GOOD_1).unwrap();
        let w = ConfWatcher::start_checked(Some(f.clone()), check, |_| {}).unwrap();
        std::fs::write(&f, unimplemented).unwrap();
        wait_until("the unimplemented conf to be refused", || w.failures() == 1);
        assert_eq!(actions(&w), [ActionKind::Enqueue, ActionKind::Allocate, ActionKind::Backfill], "last good kept");
        assert_eq!(w.reloads(), 0);
        std::fs::write(&f, GOOD_2).unwrap();
        wait_until("the new good conf", || w.reloads() == 1);
        assert_eq!(actions(&w), [ActionKind::Allocate]);
    }

    /// A misspelled plugin (`proportoin`) under `--strict`: refused at start with "did you
    /// mean", and a reload to it from a conf running `proportion` is refused (fairness kept).
    #[test]
    fn strict_refuses_a_misspelled_plugin_at_start_and_on_reload() {
        let check = |c: &SchedulerConf, p: &Path| crate::sim::strict_check(c, &format!("conf {}", p.display()));
        let d = tempdir("typo");
        let f = d.join("volcano-scheduler.conf");
        let typo = basalt_core::conf::DEFAULT_CONF.replace("name: proportion", "name: proportoin");
        std::fs::write(&f, &typo).unwrap();
        let e = ConfWatcher::start_checked(Some(f.clone()), check, |_| {}).unwrap_err();
        assert!(e.contains("unknown plugin \"proportoin\"") && e.contains("did you mean \"proportion\""), "{e}");

        std::fs::write(&f, basalt_core::conf::DEFAULT_CONF).unwrap();
        let w = ConfWatcher::start_checked(Some(f.clone()), check, |_| {}).unwrap();
        std::fs::write(&f, &typo).unwrap();
        wait_until("the misspelled conf to be refused", || w.failures() == 1);
        assert_eq!(w.reloads(), 0);
        let running: Vec<String> = w.current().tiers.iter().flat_map(|t| t.plugins.iter().map(|p| p.name.clone())).collect();
        assert!(running.iter().any(|p| p == "proportion"), "queue fairness kept: {running:?}");
    }

    /// Issue 29: the scheduler's own log written next to its conf, ten times a second, neither
    /// reloads the conf nor parses it again (which logs its warnings again); nor does a refused
    /// conf get refused and logged again for each write. A real change still reloads.
    #[test]
    fn writes_to_other_files_in_the_directory_do_not_reload_the_conf() {
        let d = tempdir("other-files");
        let f = d.join("volcano-scheduler.conf");
        // An unknown top-level field: a conf that parses with a warning.
        let warned = format!("{GOOD_1}colour: blue\n");
        std::fs::write(&f, &warned).unwrap();
        assert!(!SchedulerConf::parse(&warned).unwrap().1.is_empty(), "the conf must warn for the test to mean something");
        let w = ConfWatcher::start(Some(f.clone()), |_| {}).unwrap();
        assert_eq!(w.parses(), 1);
        let log = d.join("scheduler.log");
        let scribble = |rounds: usize| {
            for i in 0..rounds {
                std::fs::write(&log, format!("line {i}\n")).unwrap();
                std::thread::sleep(Duration::from_millis(100));
            }
            // Longer than the debounce: a re-read the writes triggered would have happened.
            std::thread::sleep(DEBOUNCE * 5);
        };
        scribble(8);
        assert_eq!((w.parses(), w.reloads(), w.failures()), (1, 0, 0), "a log write reloaded the conf");

        // Touching the conf without changing its text re-reads it but parses nothing.
        std::fs::write(&f, &warned).unwrap();
        std::thread::sleep(DEBOUNCE * 5);
        assert_eq!((w.parses(), w.reloads()), (1, 0), "the same text was parsed again");

        std::fs::write(&f, BAD).unwrap();
        wait_until("the bad conf to be refused", || w.failures() == 1);
        scribble(4);
        std::fs::write(&f, BAD).unwrap();
        std::thread::sleep(DEBOUNCE * 5);
        assert_eq!((w.parses(), w.failures()), (2, 1), "the refused conf was refused again");

        std::fs::write(&f, GOOD_2).unwrap();
        wait_until("the new good conf", || w.reloads() == 1);
        assert_eq!(actions(&w), [ActionKind::Allocate]);
        assert_eq!(w.parses(), 3);
    }

    #[test]
    fn a_removed_file_keeps_the_last_good_conf() {
        let d = tempdir("removed");
        let f = d.join("volcano-scheduler.conf");
        std::fs::write(&f, GOOD_2).unwrap();
        let w = ConfWatcher::start(Some(f.clone()), |_| {}).unwrap();
        std::fs::remove_file(&f).unwrap();
        wait_until("the missing file to be refused", || w.failures() == 1);
        assert_eq!(actions(&w), [ActionKind::Allocate]);
        std::fs::write(&f, GOOD_1).unwrap();
        wait_until("the file to come back", || w.reloads() == 1);
        assert_eq!(actions(&w), [ActionKind::Enqueue, ActionKind::Allocate, ActionKind::Backfill]);
    }
}
