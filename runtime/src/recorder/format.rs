//! The records of a recording and how they are framed on disk.
//!
//! A segment file is one gzip stream (flate2, deflate) holding [`MAGIC`] and then frames: a
//! little-endian `u32` length and that many bytes of one postcard-encoded [`Record`]. The
//! writer flushes the stream after every cycle, so a process killed mid-write leaves a segment
//! whose complete frames are all readable; [`FrameReader`] stops at the first incomplete one
//! and says so.

use super::named::DecisionsDiff;
use basalt_core::cluster::Delta;
use basalt_core::conf::SchedulerConf;
use serde::{Deserialize, Serialize};
use std::io::{self, Read, Write};

/// The first bytes of a segment's decompressed stream; the digit is the format version.
/// 3: nodes carry their vGPU cards and node locks (`NodeSpec::devices`), pods their vGPU
/// requests and cards (`PodSpec::vgpu`) and queue-allocation gate flags
/// (`PodSpec::volcano_gate_only`, `queue_allocation_gate`), and the deltas include
/// `Delta::PodNumaAssumed`. Segments of formats 1 and 2 ([`MAGIC_V1`], [`MAGIC_V2`]) are still
/// read, through their own record shape ([`super::format_v2`]), with those fields at their
/// defaults.
pub const MAGIC: &[u8; 8] = b"BSLTREC3";

/// [`MAGIC`] of format 2 (decisions carry their volume bindings, issue 22; nodes and pods
/// without the fields format 3 added).
pub const MAGIC_V2: &[u8; 8] = b"BSLTREC2";

/// [`MAGIC`] of format 1 (recordings written before volume bindings were recorded): format 2
/// without the volume bindings, which are the last field of a cycle's record, so each of its
/// frames reads as format 2 with an empty list.
pub const MAGIC_V1: &[u8; 8] = b"BSLTREC1";

/// A frame longer than this is refused as corrupt (a record of a 100,000-pod checkpoint is
/// about 30 MiB before compression).
pub const MAX_FRAME_BYTES: u32 = 1 << 30;

/// File name suffix of a segment.
pub const SEGMENT_SUFFIX: &str = ".brec";

/// One record of a segment.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Record {
    /// First record of every segment.
    Header(Header),
    /// The conf and flags in force from the next cycle on: the `SchedulerConf` as JSON (its
    /// `options` carry `--percentage-nodes-to-find`, `--minimum-feasible-nodes`,
    /// `--minimum-percentage-nodes-to-find` and `--default-queue`). Written at the start of a
    /// segment and whenever the conf changes (a reload).
    Conf {
        /// `serde_json` of the conf.
        conf_json: String,
    },
    /// The whole cluster copy as deltas on an empty cluster, in the order PriorityClasses,
    /// Queues, Nodes, PodGroups, Pods, PodDisruptionBudgets, ResourceQuotas, StorageClasses,
    /// PersistentVolumes, PersistentVolumeClaims, CSINodes, HyperNodes, NodeShards, Numatopologies (each by
    /// name), the pods' NUMA requests (`Delta::PodNuma`, by namespace/name), the CPUs
    /// numa-aware keeps for pods it bound (`Delta::PodNumaAssumed`, by node, format 3), then the
    /// rescheduling plugin's last run (`Delta::Rescheduled`, when it ran). Third record of every
    /// segment; empty in a run's first segment (the mirror starts empty). Recordings written
    /// before HyperNodes were checkpointed hold none here and read as before (a cluster
    /// without HyperNodes); the same holds for NodeShards (their deltas are the last variants
    /// of `Delta`, so older recordings decode unchanged).
    Checkpoint {
        /// The deltas.
        deltas: Vec<Delta>,
        /// The checkpoint was taken after the next cycle's own deltas were applied: a reader
        /// that starts at this segment skips that cycle's deltas, one that goes on from the
        /// previous segment of the same run ignores the checkpoint and applies them.
        covers_next_cycle: bool,
    },
    /// One scheduling cycle.
    Cycle(Box<CycleRecord>),
    /// Where allocate's HyperNode gradient path searched for the PodGroups it could not place
    /// in the cycle of the next [`Record::Cycle`] (the same `cycle`), written just before that
    /// record when the cycle has any (`basalt explain` shows them). The last variant, so the
    /// records before it keep their encoding: recordings without it read unchanged.
    Topology(TopologyRecord),
}

/// [`Record::Topology`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TopologyRecord {
    /// The cycle's session number ([`CycleRecord::cycle`]).
    pub cycle: u64,
    /// Its searches, in the order allocate gave up on the PodGroups.
    pub searches: Vec<super::named::NamedTopologySearch>,
}

/// What a segment says about the process that wrote it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Header {
    /// Basalt's version (`CARGO_PKG_VERSION`).
    pub basalt: String,
    /// Identifies one `basalt scheduler` process: its start, ms since the Unix epoch.
    pub run: u64,
    /// Position of this segment within its run, from 1.
    pub segment: u64,
    /// The command line the scheduler was started with (argv without the program name).
    pub args: Vec<String>,
}

/// One cycle: what changed since the previous cycle, what it ran with, what it decided.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CycleRecord {
    /// Session number (`CycleOptions::cycle`; the PodGroup conditions' `transitionID` is
    /// `basalt-session-<cycle>`). Unique across restarts.
    pub cycle: u64,
    /// Seed of the cycle's random tie-breaks.
    pub seed: u64,
    /// Wall clock at the cycle's start, ms since the Unix epoch: the cycle's
    /// `CycleOptions::now_ms`, which a re-run gives the core again (sla's waiting times).
    pub unix_ms: u64,
    /// Deltas applied to the cluster copy since the previous cycle, in order (watch events,
    /// and the previous cycle's assumed binds and failed binds).
    pub deltas: Vec<Delta>,
    /// The decisions, as changes from the previous cycle's (the first cycle of a segment
    /// against none).
    pub decisions: DecisionsDiff,
}

/// Encodes `conf` for [`Record::Conf`]. Errors: an argument value JSON cannot hold (a YAML
/// mapping with non-string keys).
pub fn conf_to_json(conf: &SchedulerConf) -> Result<String, String> {
    serde_json::to_string(conf).map_err(|e| format!("conf cannot be recorded: {e}"))
}

/// Decodes a [`Record::Conf`]. Errors: the message names the problem.
pub fn conf_from_json(s: &str) -> Result<SchedulerConf, String> {
    serde_json::from_str(s).map_err(|e| format!("recorded conf is unreadable: {e}"))
}

/// Writes one frame. Errors: encoding or I/O.
pub fn write_frame(w: &mut impl Write, r: &Record) -> io::Result<usize> {
    let bytes = postcard::to_stdvec(r).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
    let len = u32::try_from(bytes.len()).ok().filter(|&l| l <= MAX_FRAME_BYTES);
    let len = len.ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "record larger than 1 GiB"))?;
    w.write_all(&len.to_le_bytes())?;
    w.write_all(&bytes)?;
    Ok(4 + bytes.len())
}

/// Reads frames from a decompressed segment stream.
pub struct FrameReader<R: Read> {
    r: R,
    buf: Vec<u8>,
    /// The segment's format version (1, 2 or 3).
    version: u8,
    /// Set when the stream ended inside a frame (or the compressed stream was cut): the
    /// records before it were all returned.
    pub truncated: bool,
}

impl<R: Read> FrameReader<R> {
    /// Checks [`MAGIC`] (or an older format's). Errors: not a recording, or a format this
    /// reader does not know (a newer one).
    pub fn new(mut r: R) -> Result<Self, String> {
        let mut m = [0u8; 8];
        r.read_exact(&mut m).map_err(|e| format!("cannot read the segment header: {e}"))?;
        let version = match &m {
            x if x == MAGIC => 3,
            x if x == MAGIC_V2 => 2,
            x if x == MAGIC_V1 => 1,
            _ => {
                return Err(format!(
                    "not a Basalt recording segment of format 1, 2 or 3 (starts with {:?})",
                    String::from_utf8_lossy(&m)
                ))
            }
        };
        Ok(FrameReader { r, buf: Vec::new(), version, truncated: false })
    }

    /// The segment's format version (1, 2 or 3).
    pub fn version(&self) -> u8 {
        self.version
    }

    /// The next record; `Ok(None)` at the end (see [`FrameReader::truncated`]). Errors: a frame
    /// that is complete but does not decode (a corrupt or incompatible segment).
    pub fn next_record(&mut self) -> Result<Option<Record>, String> {
        let mut len = [0u8; 4];
        match read_full(&mut self.r, &mut len) {
            Ok(0) => return Ok(None),
            Ok(4) => {}
            _ => {
                self.truncated = true;
                return Ok(None);
            }
        }
        let len = u32::from_le_bytes(len);
        if len > MAX_FRAME_BYTES {
            return Err(format!("frame of {len} bytes: corrupt segment"));
        }
        self.buf.resize(len as usize, 0);
        match read_full(&mut self.r, &mut self.buf) {
            Ok(n) if n == len as usize => {}
            _ => {
                self.truncated = true;
                return Ok(None);
            }
        }
        if self.version == 1 {
            // Format 1: a cycle's record ends where format 2's volume bindings begin; an empty
            // list is one 0 byte (postcard ignores it after any other record).
            self.buf.push(0);
        }
        let r = if self.version == 3 { postcard::from_bytes(&self.buf) } else { super::format_v2::decode(&self.buf) };
        r.map(Some).map_err(|e| format!("record of format {} does not decode: {e}", self.version))
    }
}

/// Reads until `buf` is full or the stream ends; returns the bytes read. A read error after
/// some bytes (a cut gzip stream) counts as the end.
fn read_full(r: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) if n == 0 && buf.len() == 4 => return Err(e),
            Err(_) => break,
        }
    }
    Ok(n)
}
