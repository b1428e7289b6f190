//! The recording side: [`Recorder`] is the live scheduler's [`CycleRecorder`]; it turns each
//! cycle into a [`Record::Cycle`] on the scheduling thread (ids resolved to names, deltas moved
//! out of the mirror's journal) and hands it to a writer thread that diffs, encodes, compresses
//! and writes it, so the cycle pays for no I/O.
//!
//! Files: `DIR/<run>-<segment>.brec`, `<run>` the process start in ms since the epoch (13
//! digits), `<segment>` from 000001; names sort in time order. A segment is closed once it
//! holds `segment_bytes` of compressed data, and the next one starts with a checkpoint of the
//! whole cluster, so any segment replays on its own. After each new segment the oldest
//! segments in `DIR` are deleted until the directory holds at most `max_bytes`.
//!
//! The recorder never stops the scheduler: an I/O error is logged once and recording stops;
//! a writer that falls 64 cycles behind loses cycles (logged), and the next recorded cycle
//! starts a new segment so the recording stays replayable.

use super::cycle_recorder::CycleRecorder;
use super::format::{conf_to_json, write_frame, CycleRecord, Header, Record, TopologyRecord, MAGIC, SEGMENT_SUFFIX};
use super::named::{DecisionsDiff, NamedDecisions, NamedTopologySearch};
use basalt_core::cluster::{Cluster, Delta};
use basalt_core::conf::SchedulerConf;
use basalt_core::decision::Decisions;
use basalt_core::scheduler::CycleOptions;
use crossbeam::channel::{Sender, TrySendError};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

/// Default `--record-segment-bytes`: 64 MiB.
pub const DEFAULT_SEGMENT_BYTES: u64 = 64 << 20;
/// Default `--record-max-bytes`: 1 GiB.
pub const DEFAULT_MAX_BYTES: u64 = 1 << 30;
/// Cycles the writer thread may be behind before cycles are dropped.
pub const QUEUE_CYCLES: usize = 64;

/// Where and how much to record.
#[derive(Clone, Debug)]
pub struct RecorderConfig {
    /// The recording directory (created when missing).
    pub dir: PathBuf,
    /// Compressed bytes after which a segment is closed and the next one starts.
    pub segment_bytes: u64,
    /// Budget of the whole directory, bytes: oldest segments are deleted past it.
    pub max_bytes: u64,
    /// The scheduler's command line, stored in each segment's header.
    pub args: Vec<String>,
    /// Wait, after each cycle, until the writer thread has written it (tests and the size
    /// bench: rotation then happens at the first cycle past `segment_bytes`). The live
    /// scheduler does not wait.
    pub wait_written: bool,
}

enum Msg {
    Start {
        path: PathBuf,
        header: Header,
        conf_json: String,
        checkpoint: Vec<Delta>,
    },
    Conf(String),
    Cycle {
        cycle: u64,
        seed: u64,
        unix_ms: u64,
        deltas: Vec<Delta>,
        decisions: Box<NamedDecisions>,
        topology: Vec<NamedTopologySearch>,
    },
}

/// The flight recorder of `basalt scheduler --record DIR`.
pub struct Recorder {
    cfg: RecorderConfig,
    tx: Option<Sender<Msg>>,
    thread: Option<JoinHandle<()>>,
    /// Set by the writer when the current segment is full (or cycles were lost).
    rotate: Arc<AtomicBool>,
    /// Set by the writer when it stopped on an error.
    failed: Arc<AtomicBool>,
    run: u64,
    segment: u64,
    conf: Option<SchedulerConf>,
    dropped: u64,
    /// With `wait_written`: one message per cycle written.
    acks: Option<crossbeam::channel::Receiver<()>>,
}

impl std::fmt::Debug for Recorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recorder").field("dir", &self.cfg.dir).field("run", &self.run).field("segment", &self.segment).finish()
    }
}

fn unix_ms() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0)
}

/// The whole cluster as deltas on an empty one (see [`Record::Checkpoint`]): storage objects,
/// HyperNodes, NodeShards, Numatopologies, the pods' NUMA requests and the CPUs numa-aware
/// keeps for pods it bound, and the rescheduling plugin's last run ([`Cluster::rescheduled_ms`]) when there
/// is one.
pub fn checkpoint(c: &Cluster) -> Vec<Delta> {
    let mut out = Vec::new();
    out.extend(c.priority_classes().map(|p| Delta::PriorityClass(p.clone())));
    out.extend(c.queues().map(|q| Delta::Queue(q.spec.clone())));
    out.extend(c.nodes().map(|(_, n)| Delta::Node(n.spec.clone())));
    out.extend(c.pod_groups().map(|(_, g)| Delta::PodGroup(g.spec.clone())));
    out.extend(c.pods().map(|(_, p)| Delta::Pod(p.spec.clone())));
    out.extend(c.disruption_budgets().map(|b| Delta::PodDisruptionBudget(b.clone())));
    out.extend(c.resource_quotas().map(|q| Delta::ResourceQuota(q.clone())));
    let v = c.volumes();
    out.extend(v.classes.values().map(|x| Delta::StorageClass(x.clone())));
    out.extend(v.volumes.values().map(|x| Delta::PersistentVolume(x.clone())));
    out.extend(v.claims.values().map(|x| Delta::PersistentVolumeClaim(x.clone())));
    out.extend(v.csi_nodes.values().map(|x| Delta::CsiNode(x.clone())));
    out.extend(c.hyper_nodes().map(|h| Delta::HyperNode(h.clone())));
    out.extend(c.node_shards().map(|s| Delta::NodeShard(s.clone())));
    out.extend(c.numatopologies().map(|t| Delta::Numatopology(t.clone())));
    out.extend(c.pod_numas().map(|(ns, name, numa)| Delta::PodNuma {
        namespace: ns.to_string(),
        name: name.to_string(),
        numa: numa.clone(),
    }));
    out.extend(c.numa_assumed().map(Delta::PodNumaAssumed));
    out.extend(c.rescheduled_ms().map(|at_ms| Delta::Rescheduled { at_ms }));
    out
}

impl Recorder {
    /// Creates `cfg.dir` and starts the writer thread. Errors: the directory cannot be created
    /// or written (the message names it).
    pub fn start(cfg: RecorderConfig) -> Result<Self, String> {
        std::fs::create_dir_all(&cfg.dir).map_err(|e| format!("--record {}: {e}", cfg.dir.display()))?;
        let probe = cfg.dir.join(".basalt-write-probe");
        std::fs::write(&probe, b"").map_err(|e| format!("--record {}: not writable: {e}", cfg.dir.display()))?;
        let _ = std::fs::remove_file(&probe);
        let (tx, rx) = crossbeam::channel::bounded::<Msg>(QUEUE_CYCLES);
        let rotate = Arc::new(AtomicBool::new(false));
        let failed = Arc::new(AtomicBool::new(false));
        let mut w = SegmentWriter {
            dir: cfg.dir.clone(),
            segment_bytes: cfg.segment_bytes.max(1),
            max_bytes: cfg.max_bytes,
            out: None,
            written: Arc::new(AtomicU64::new(0)),
            prev: NamedDecisions::default(),
            rotate: rotate.clone(),
        };
        let f = failed.clone();
        let (ack_tx, ack_rx) = crossbeam::channel::unbounded::<()>();
        let ack_tx = cfg.wait_written.then_some(ack_tx);
        let thread = std::thread::Builder::new()
            .name("basalt-recorder".into())
            .spawn(move || {
                for m in rx {
                    let cycle = matches!(m, Msg::Cycle { .. });
                    if let Err(e) = w.handle(m) {
                        tracing::error!(dir = %w.dir.display(), "flight recorder stopped: {e}");
                        f.store(true, Ordering::Relaxed);
                        return;
                    }
                    if let (true, Some(a)) = (cycle, &ack_tx) {
                        let _ = a.send(());
                    }
                }
                if let Err(e) = w.finish() {
                    tracing::error!(dir = %w.dir.display(), "flight recorder: cannot finish the last segment: {e}");
                }
            })
            .map_err(|e| format!("cannot start the recorder thread: {e}"))?;
        let acks = cfg.wait_written.then_some(ack_rx);
        Ok(Recorder {
            cfg,
            tx: Some(tx),
            thread: Some(thread),
            rotate,
            failed,
            run: unix_ms(),
            segment: 0,
            conf: None,
            dropped: 0,
            acks,
        })
    }

    fn send(&mut self, m: Msg) -> bool {
        let Some(tx) = &self.tx else { return false };
        match tx.try_send(m) {
            Ok(()) => true,
            Err(TrySendError::Full(_)) => {
                self.dropped += 1;
                tracing::warn!(
                    dropped = self.dropped,
                    "flight recorder is behind: a cycle was not recorded; a new segment follows"
                );
                self.rotate.store(true, Ordering::Relaxed);
                false
            }
            Err(TrySendError::Disconnected(_)) => {
                self.tx = None;
                false
            }
        }
    }
}

impl CycleRecorder for Recorder {
    fn cycle(&mut self, deltas: Vec<Delta>, cluster: &Cluster, conf: &SchedulerConf, opts: &CycleOptions, decisions: &Decisions) {
        if self.tx.is_none() || self.failed.load(Ordering::Relaxed) {
            return;
        }
        let named = NamedDecisions::of(decisions, cluster, opts.cycle);
        let topology = NamedTopologySearch::all_of(decisions, cluster);
        let conf_json = |c: &SchedulerConf| match conf_to_json(c) {
            Ok(j) => Some(j),
            Err(e) => {
                tracing::error!("flight recorder: {e}; recording stops");
                None
            }
        };
        if self.segment == 0 || self.rotate.swap(false, Ordering::Relaxed) {
            // A run's first segment starts from the empty cluster the mirror started with and
            // the journal holds everything since; a later one starts from a checkpoint.
            // The first cycle's deltas are kept either way: a reader that goes on from the
            // previous segment applies them, one that starts here skips them (the checkpoint
            // already holds their effect).
            let checkpoint = if self.segment == 0 { Vec::new() } else { checkpoint(cluster) };
            self.segment += 1;
            let Some(j) = conf_json(conf) else {
                self.tx = None;
                return;
            };
            let path = self.cfg.dir.join(format!("{:013}-{:06}{SEGMENT_SUFFIX}", self.run, self.segment));
            let header = Header {
                basalt: env!("CARGO_PKG_VERSION").into(),
                run: self.run,
                segment: self.segment,
                args: self.cfg.args.clone(),
            };
            self.conf = Some(conf.clone());
            if !self.send(Msg::Start { path, header, conf_json: j, checkpoint }) {
                return;
            }
        } else if self.conf.as_ref() != Some(conf) {
            let Some(j) = conf_json(conf) else {
                self.tx = None;
                return;
            };
            self.conf = Some(conf.clone());
            if !self.send(Msg::Conf(j)) {
                return;
            }
        }
        // The cycle's own "now" when it has one (the live scheduler's), so a re-run decides the
        // time-based rules (sla) exactly as recorded.
        let at = if opts.now_ms > 0 { opts.now_ms as u64 } else { unix_ms() };
        let cycle = Msg::Cycle { cycle: opts.cycle, seed: opts.seed, unix_ms: at, deltas, decisions: Box::new(named), topology };
        if self.send(cycle) {
            if let Some(a) = &self.acks {
                // The writer acknowledges every cycle it wrote; a writer that stopped drops its
                // sender and this returns at once.
                let _ = a.recv();
            }
        }
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        self.tx = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Counts the bytes that reach the file.
struct Counting<W> {
    w: W,
    n: Arc<AtomicU64>,
}

impl<W: Write> Write for Counting<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let k = self.w.write(buf)?;
        self.n.fetch_add(k as u64, Ordering::Relaxed);
        Ok(k)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.w.flush()
    }
}

type Gz = flate2::write::GzEncoder<Counting<io::BufWriter<std::fs::File>>>;

struct SegmentWriter {
    dir: PathBuf,
    segment_bytes: u64,
    max_bytes: u64,
    out: Option<(PathBuf, Gz)>,
    written: Arc<AtomicU64>,
    prev: NamedDecisions,
    rotate: Arc<AtomicBool>,
}

impl SegmentWriter {
    fn handle(&mut self, m: Msg) -> Result<(), String> {
        match m {
            Msg::Start { path, header, conf_json, checkpoint } => {
                self.finish()?;
                let file = std::fs::File::create(&path).map_err(|e| format!("{}: {e}", path.display()))?;
                // Held until the segment is finished: a reader that cannot take the lock knows the
                // segment is still being written (a live recording), not cut by a crash.
                let _ = file.try_lock();
                self.written = Arc::new(AtomicU64::new(0));
                let sink = Counting { w: io::BufWriter::new(file), n: self.written.clone() };
                let mut gz = flate2::write::GzEncoder::new(sink, flate2::Compression::default());
                let io = |e: io::Error| format!("{}: {e}", path.display());
                gz.write_all(MAGIC).map_err(io)?;
                write_frame(&mut gz, &Record::Header(header)).map_err(io)?;
                write_frame(&mut gz, &Record::Conf { conf_json }).map_err(io)?;
                let covers_next_cycle = !checkpoint.is_empty();
                write_frame(&mut gz, &Record::Checkpoint { deltas: checkpoint, covers_next_cycle }).map_err(io)?;
                self.prev = NamedDecisions::default();
                self.out = Some((path, gz));
                self.enforce_budget();
            }
            Msg::Conf(conf_json) => {
                let Some((path, gz)) = self.out.as_mut() else { return Ok(()) };
                write_frame(gz, &Record::Conf { conf_json }).map_err(|e| format!("{}: {e}", path.display()))?;
            }
            Msg::Cycle { cycle, seed, unix_ms, deltas, decisions, topology } => {
                let Some((path, gz)) = self.out.as_mut() else { return Ok(()) };
                let rec = CycleRecord { cycle, seed, unix_ms, deltas, decisions: DecisionsDiff::between(&self.prev, &decisions) };
                let io = |e: io::Error| format!("{}: {e}", path.display());
                if !topology.is_empty() {
                    write_frame(gz, &Record::Topology(TopologyRecord { cycle, searches: topology })).map_err(io)?;
                }
                write_frame(gz, &Record::Cycle(Box::new(rec))).map_err(io)?;
                // A sync flush per cycle: a killed process leaves every finished cycle readable.
                gz.flush().map_err(io)?;
                self.prev = *decisions;
                if self.written.load(Ordering::Relaxed) >= self.segment_bytes {
                    self.rotate.store(true, Ordering::Relaxed);
                }
            }
        }
        Ok(())
    }

    fn finish(&mut self) -> Result<(), String> {
        if let Some((path, gz)) = self.out.take() {
            let mut inner = gz.finish().map_err(|e| format!("{}: {e}", path.display()))?;
            inner.flush().map_err(|e| format!("{}: {e}", path.display()))?;
        }
        Ok(())
    }

    /// Deletes the oldest segments of the directory (any run) until it fits `max_bytes`; the
    /// segment being written is kept whatever its size.
    fn enforce_budget(&self) {
        let current = self.out.as_ref().map(|(p, _)| p.clone());
        let Ok(mut segs) = segment_files(&self.dir) else { return };
        let mut total: u64 = segs.iter().map(|(_, n)| *n).sum();
        segs.sort();
        for (p, n) in segs {
            if total <= self.max_bytes {
                break;
            }
            if Some(&p) == current.as_ref() {
                continue;
            }
            match std::fs::remove_file(&p) {
                Ok(()) => {
                    total -= n;
                    tracing::info!(segment = %p.display(), "flight recorder: deleted the oldest segment (size budget)");
                }
                Err(e) => tracing::warn!(segment = %p.display(), "flight recorder: cannot delete: {e}"),
            }
        }
    }
}

/// The segment files of `dir` with their sizes, in name (= time) order.
pub fn segment_files(dir: &Path) -> io::Result<Vec<(PathBuf, u64)>> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir)? {
        let e = e?;
        let p = e.path();
        if p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.ends_with(SEGMENT_SUFFIX)) {
            out.push((p, e.metadata().map(|m| m.len()).unwrap_or(0)));
        }
    }
    out.sort();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use basalt_core::model::{IntOrPercent, NodeSpec, PodDisruptionBudgetSpec, QueueSpec, ResourceQuotaSpec};

    fn cluster() -> Cluster {
        let mut c = Cluster::new();
        c.apply(Delta::Queue(QueueSpec { name: "q".into(), weight: 1, ..Default::default() })).unwrap();
        c.apply(Delta::Node(NodeSpec { name: "n1".into(), ready: true, ..Default::default() })).unwrap();
        c
    }

    /// The rescheduling plugin's last run is part of the cluster copy a segment starts from, so
    /// a re-run from that segment alone decides its `interval` as the live cycle did.
    #[test]
    fn checkpoint_holds_the_rescheduling_time() {
        let mut c = cluster();
        let none = checkpoint(&c);
        assert!(!none.iter().any(|d| matches!(d, Delta::Rescheduled { .. })), "never ran: nothing to record");
        c.apply(Delta::Rescheduled { at_ms: 1_700_000_000_000 }).unwrap();
        c.apply(Delta::Rescheduled { at_ms: 1_700_000_400_000 }).unwrap();
        let got = checkpoint(&c);
        assert_eq!(got.len(), none.len() + 1);
        assert_eq!(got.last(), Some(&Delta::Rescheduled { at_ms: 1_700_000_400_000 }), "the last run only");
        let mut copy = Cluster::new();
        for d in got {
            copy.apply(d).unwrap();
        }
        assert_eq!(copy.rescheduled_ms(), Some(1_700_000_400_000));
        assert_eq!(copy.counts(), c.counts());
    }

    /// The nodes' Numatopologies and the pods' NUMA requests (read by `numa-aware`) are part of
    /// the checkpoint: a segment that starts from it decides NUMA placement as the live cycle did.
    #[test]
    fn checkpoint_holds_numatopologies_and_pod_numa() {
        use basalt_core::model::{NumaContainer, NumaCpu, NumatopologySpec, PodNuma};
        let mut c = cluster();
        let topo = NumatopologySpec {
            name: "n1".into(),
            cpu_manager_policy: "static".into(),
            cpu_allocatable: Some(vec![0]),
            cpus: vec![NumaCpu { id: 0, ..Default::default() }],
            ..Default::default()
        };
        let numa = PodNuma {
            policy: "single-numa-node".into(),
            guaranteed: true,
            containers: vec![NumaContainer { name: "c".into(), cpus: 1 }],
        };
        c.apply(Delta::Numatopology(topo.clone())).unwrap();
        c.apply(Delta::PodNuma { namespace: "ns".into(), name: "p".into(), numa: numa.clone() }).unwrap();
        let mut copy = Cluster::new();
        for d in checkpoint(&c) {
            copy.apply(d).unwrap();
        }
        assert_eq!(copy.numatopology("n1"), Some(&topo));
        assert_eq!(copy.pod_numa("ns", "p"), Some(&numa));
    }

    /// The objects sessions read directly (the `pdb` and `resourcequota` plugins) are part of
    /// the checkpoint too: a segment that starts from it decides with the same budgets and quotas.
    #[test]
    fn checkpoint_holds_budgets_and_quotas() {
        let mut c = cluster();
        let budget = PodDisruptionBudgetSpec {
            namespace: "ns".into(),
            name: "web".into(),
            min_available: Some(IntOrPercent::Int(1)),
            ..Default::default()
        };
        let quota = ResourceQuotaSpec {
            namespace: "ns".into(),
            name: "gpus".into(),
            hard: [("cpu".to_string(), 4000)].into_iter().collect(),
            ..Default::default()
        };
        c.apply(Delta::PodDisruptionBudget(budget.clone())).unwrap();
        c.apply(Delta::ResourceQuota(quota.clone())).unwrap();
        let mut copy = Cluster::new();
        for d in checkpoint(&c) {
            copy.apply(d).unwrap();
        }
        assert_eq!(copy.disruption_budgets().cloned().collect::<Vec<_>>(), vec![budget]);
        assert_eq!(copy.resource_quotas().cloned().collect::<Vec<_>>(), vec![quota]);
    }
}
