//! Reading a recording back: [`walk`] goes through every segment of a directory in order and
//! rebuilds, cycle by cycle, the cluster copy and the conf each recorded cycle ran with, and
//! the decisions it recorded.
//!
//! A segment that directly follows the previous one of the same run (and that one was read to
//! its end) continues its cluster, exactly as the live scheduler went on; any other segment
//! (the first one left after rotation deleted older ones, a restart, a cut segment before it)
//! starts afresh from its checkpoint.

use super::format::{conf_from_json, CycleRecord, FrameReader, Header, Record, TopologyRecord};
use super::named::{NamedDecisions, NamedTopologySearch};
use super::writer::segment_files;
use basalt_core::cluster::Cluster;
use basalt_core::conf::SchedulerConf;
use std::io::BufReader;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

/// The state of the walk at a recorded cycle.
pub struct At<'a> {
    /// The segment's header.
    pub header: &'a Header,
    /// The segment file.
    pub path: &'a Path,
    /// The cycle as recorded.
    pub record: &'a CycleRecord,
    /// The cluster the cycle read (its deltas applied).
    pub cluster: &'a mut Cluster,
    /// The conf in force.
    pub conf: &'a SchedulerConf,
    /// The decisions recorded.
    pub recorded: &'a NamedDecisions,
    /// Where allocate searched for the topology PodGroups it could not place this cycle
    /// ([`Record::Topology`]; empty for a cycle without any and in recordings made before it).
    pub topology: &'a [NamedTopologySearch],
    /// Whether this segment started afresh from its checkpoint (not continued from the
    /// previous one).
    pub fresh: bool,
    /// The cycle's position in the walk, from 1 (`#1`, `#2`, …): a short name for a cycle
    /// beside its session number ([`CycleRecord::cycle`]).
    pub seq: u64,
}

/// What a walk saw.
#[derive(Clone, Debug, Default)]
pub struct WalkSummary {
    /// Segments read.
    pub segments: usize,
    /// Cycles visited.
    pub cycles: usize,
    /// Segments that ended inside a record (a process killed while writing): their complete
    /// records were read.
    pub truncated: Vec<PathBuf>,
    /// Segments still being written by a running scheduler (the writer holds their file lock):
    /// read up to their last complete record.
    pub live: Vec<PathBuf>,
    /// Deltas the cluster refused (the live cluster refused them too).
    pub refused: u64,
}

type Decoder = flate2::read::GzDecoder<BufReader<std::fs::File>>;

/// Opens one segment. Errors: the file cannot be opened or is not a segment.
pub fn open_segment(path: &Path) -> Result<FrameReader<Decoder>, String> {
    let f = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    FrameReader::new(flate2::read::GzDecoder::new(BufReader::new(f))).map_err(|e| format!("{}: {e}", path.display()))
}

/// Walks every recorded cycle of `dir` in order, calling `f` at each; `f` may stop the walk.
///
/// Errors: `dir` holds no segment, or a segment is corrupt (the message names the file).
pub fn walk(dir: &Path, mut f: impl FnMut(At<'_>) -> ControlFlow<()>) -> Result<WalkSummary, String> {
    let files = segment_files(dir).map_err(|e| format!("--recording {}: {e}", dir.display()))?;
    if files.is_empty() {
        return Err(format!("--recording {}: no segment (*.brec) in this directory", dir.display()));
    }
    let mut summary = WalkSummary::default();
    let mut cluster = Cluster::new();
    let mut conf: SchedulerConf;
    let mut prev: Option<(u64, u64)> = None;
    let mut prev_complete = false;
    for (path, _) in &files {
        let mut r = open_segment(path)?;
        let bad = |what: &str| format!("{}: {what}", path.display());
        let Some((header, conf_json, checkpoint, covers)) = read_start(&mut r).map_err(|e| bad(&e))? else {
            // Cut before its first cycle: nothing to replay in it.
            summary.truncated.push(path.clone());
            prev_complete = false;
            continue;
        };
        conf = conf_from_json(&conf_json).map_err(|e| bad(&e))?;
        let continues = prev_complete && prev == Some((header.run, header.segment.wrapping_sub(1)));
        let fresh = !continues;
        let mut skip_deltas = false;
        if fresh {
            cluster = Cluster::new();
            for d in checkpoint {
                if cluster.apply(d).is_err() {
                    summary.refused += 1;
                }
            }
            skip_deltas = covers;
        }
        let mut recorded = NamedDecisions::default();
        let mut topology: Option<TopologyRecord> = None;
        summary.segments += 1;
        loop {
            match r.next_record().map_err(|e| bad(&e))? {
                None => break,
                Some(Record::Topology(t)) => topology = Some(t),
                Some(Record::Conf { conf_json }) => conf = conf_from_json(&conf_json).map_err(|e| bad(&e))?,
                Some(Record::Cycle(c)) => {
                    if !std::mem::take(&mut skip_deltas) {
                        for d in &c.deltas {
                            if cluster.apply(d.clone()).is_err() {
                                summary.refused += 1;
                            }
                        }
                    }
                    recorded = c.decisions.apply(&recorded);
                    let searches = topology.take().filter(|t| t.cycle == c.cycle).map(|t| t.searches).unwrap_or_default();
                    summary.cycles += 1;
                    let seq = summary.cycles as u64;
                    let at = At {
                        header: &header,
                        path,
                        record: &c,
                        cluster: &mut cluster,
                        conf: &conf,
                        recorded: &recorded,
                        topology: &searches,
                        fresh,
                        seq,
                    };
                    if f(at).is_break() {
                        return Ok(summary);
                    }
                }
                Some(other) => return Err(bad(&format!("unexpected record {:?} after the checkpoint", kind(&other)))),
            }
        }
        prev_complete = !r.truncated;
        if r.truncated {
            if being_written(path) {
                summary.live.push(path.clone());
            } else {
                summary.truncated.push(path.clone());
            }
        }
        prev = Some((header.run, header.segment));
    }
    Ok(summary)
}

/// Whether a scheduler still writes the segment at `path`: its writer holds the file's
/// exclusive lock until the segment is finished (a crashed writer's lock is gone).
pub fn being_written(path: &Path) -> bool {
    let Ok(f) = std::fs::File::open(path) else { return false };
    matches!(f.try_lock_shared(), Err(std::fs::TryLockError::WouldBlock))
}

type Start = (Header, String, Vec<basalt_core::cluster::Delta>, bool);

/// The header, conf and checkpoint that open a segment; `None` when the segment was cut
/// before them. Errors: they are not in that order.
fn read_start(r: &mut FrameReader<Decoder>) -> Result<Option<Start>, String> {
    let header = match r.next_record()? {
        Some(Record::Header(h)) => h,
        None => return Ok(None),
        Some(o) => return Err(format!("the first record is {}, not the header", kind(&o))),
    };
    let conf = match r.next_record()? {
        Some(Record::Conf { conf_json }) => conf_json,
        None => return Ok(None),
        Some(o) => return Err(format!("the second record is {}, not the conf", kind(&o))),
    };
    match r.next_record()? {
        Some(Record::Checkpoint { deltas, covers_next_cycle }) => Ok(Some((header, conf, deltas, covers_next_cycle))),
        None => Ok(None),
        Some(o) => Err(format!("the third record is {}, not the checkpoint", kind(&o))),
    }
}

fn kind(r: &Record) -> &'static str {
    match r {
        Record::Header(_) => "Header",
        Record::Conf { .. } => "Conf",
        Record::Checkpoint { .. } => "Checkpoint",
        Record::Cycle(_) => "Cycle",
        Record::Topology(_) => "Topology",
    }
}
