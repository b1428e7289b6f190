//! CPU time and peak memory of a process, read from Linux `/proc` (proc(5)).

use std::path::Path;

/// Clock ticks per second of `/proc/PID/stat`'s `utime`/`stime` (`USER_HZ`, fixed at 100 by the
/// Linux ABI on every architecture Basalt runs on).
const USER_HZ: f64 = 100.0;

/// CPU seconds (user + system, `utime + stime`) process `pid` has used so far; children it
/// waited for are not included. Errors: the process is gone or the file is malformed (pid named).
pub fn cpu_seconds(pid: u32) -> Result<f64, String> {
    let path = format!("/proc/{pid}/stat");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{path}: {e}"))?;
    // `comm` (field 2) is in parentheses and may contain spaces: the fields after the last `)`.
    let rest = text.rsplit_once(')').map(|(_, r)| r).ok_or_else(|| format!("{path}: no `)` after comm"))?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // fields[0] is field 3 (state); utime and stime are fields 14 and 15.
    let tick = |i: usize| -> Result<f64, String> {
        fields
            .get(i)
            .and_then(|f| f.parse::<u64>().ok())
            .map(|t| t as f64 / USER_HZ)
            .ok_or_else(|| format!("{path}: field {} is not a tick count", i + 3))
    };
    Ok(tick(11)? + tick(12)?)
}

/// Peak resident set size of process `pid` in MiB (`VmHWM` of `/proc/PID/status`).
/// Errors: the process is gone or the line is missing (pid named).
pub fn peak_rss_mib(pid: u32) -> Result<f64, String> {
    status_kib(pid, "VmHWM:").map(|kib| kib as f64 / 1024.0)
}

/// Resident set size of process `pid` in MiB (`VmRSS` of `/proc/PID/status`).
/// Errors: the process is gone or the line is missing (pid named).
pub fn rss_mib(pid: u32) -> Result<f64, String> {
    status_kib(pid, "VmRSS:").map(|kib| kib as f64 / 1024.0)
}

fn status_kib(pid: u32, key: &str) -> Result<u64, String> {
    let path = format!("/proc/{pid}/status");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{path}: {e}"))?;
    text.lines()
        .find_map(|l| l.strip_prefix(key))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .ok_or_else(|| format!("{path}: no {key} line in kB"))
}

/// The pid stored in a `*.pid` file (as `start.sh` writes them). Errors: unreadable or not a
/// number (file named).
pub fn read_pid(path: &Path) -> Result<u32, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    text.trim().parse().map_err(|e| format!("{}: not a pid: {e}", path.display()))
}

/// CPU seconds of the API server and etcd together (pids from `dir/kube-apiserver.pid` and
/// `dir/etcd.pid`).
pub fn server_cpu_seconds(dir: &Path) -> Result<f64, String> {
    let mut total = 0.0;
    for f in ["kube-apiserver.pid", "etcd.pid"] {
        total += cpu_seconds(read_pid(&dir.join(f))?)?;
    }
    Ok(total)
}

/// The first three fields of `/proc/loadavg` (1, 5 and 15-minute load), or `?` if unreadable.
pub fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|t| t.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "?".into())
}
