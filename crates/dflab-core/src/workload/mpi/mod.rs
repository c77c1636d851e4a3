//! MPI-like ranks on the network's nodes: the closed-loop workload of the SC'22 interference
//! study (`../shared/reference/workloads.md` §3.1). Each job runs a motif
//! ([`crate::workload::motifs`]) on its ranks; a rank runs its program of [`op::Op`]s one at a
//! time. The model follows SST's Ember → Firefly/Hermes → NIC stack as far as its timing shows:
//!
//! * **Point to point.** A send of at most `eager_limit_bytes` goes eagerly: after the host's
//!   `tx_setup_ns` and the NIC's `nic_tx_ns` its payload and a `header_bytes` match header
//!   are packetised (`network.packet_flits` × `network.flit_bytes` per packet, the last one
//!   shorter) into the NIC. A larger send is a rendezvous: a request to send (one
//!   `header_bytes` message) goes first; when the receiver has a matching receive, it answers
//!   with a clear to send (`header_bytes`), on which the sender's NIC sends the payload. A send
//!   completes when its last data packet has entered the network's source queue.
//! * **Receiving.** A message is whole when its last packet is delivered; the host sees it
//!   `nic_rx_match_ns + nic2host_ns` later and matches it, by source and tag in the order
//!   messages became whole, with the first posted receive (`match_ns`), or keeps it as
//!   unexpected until one is posted (`rx_setup_ns + match_ns` after the post).
//! * **The NIC** sends its messages' packets in the order the messages were started, keeping
//!   at most `nic_window_packets` in the network's source queue, which is SST's link control
//!   output buffer (30 packets in the SC'22 platform; SST's packet latency counts the wait
//!   there). A clear to send takes Firefly's second send stream (its control machine, which
//!   carries the get requests; `nic_control_stream`): it goes after at most
//!   `nic_staged_packets` more packets of the others.
//! * **Collectives** are point-to-point programs ([`collective`]).
//! * **A message to oneself** is a local copy: it completes after the send's setup delays
//!   without touching the network.
//!
//! * **Host costs of the SC'22 toolkit** (on by default, each can be left out:
//!   docs/workloads.md): the eager payload's copy (`eager_copy_ps_per_byte`), the pinning of a
//!   rendezvous buffer (`rendezvous_pin_ns`, `rendezvous_pin_ns_per_page`), rendezvous sends
//!   that complete on the receiver's acknowledgement (`rendezvous_ack`), and every MPI call's
//!   entry and return (`call_enter_ns` before the call takes effect, `call_return_ns` after it
//!   completes, before the program's next op; a collective is one call, its own point-to-point
//!   messages pay none, as in Firefly's `functionSM`), and Firefly's receive-side pinning,
//!   which holds an `irecv` until its buffer is pinned (`rendezvous_recv_pin_blocks`) and
//!   unpins a completed rendezvous receive before its wait returns (`rendezvous_recv_unpin`).
//!
//! ⚠ Deviations from SST (options where they matter, see docs/workloads.md): Firefly's
//! rendezvous is a receiver-driven RDMA get, modelled here as clear-to-send then data (the
//! same messages and directions); Firefly's NIC stages packets of both its streams into one
//! queue by staging time, modelled here as a bound of `nic_staged_packets` on what goes ahead
//! of a clear to send (`nic_control_stream = false`: one FIFO for everything); message
//! matching is by arrival order of whole messages, not by the first packet.
//!
//! Per job the layer records the SC'22 metrics ([`metrics`]).

pub mod collective;
pub mod metrics;
pub mod op;
pub mod placement;
mod progress;
pub mod rank;
mod run;

use std::collections::VecDeque;

use crate::config::workload::WorkloadConfig;
use crate::error::{Error, Result};
use crate::topology::Topology;
use crate::units::{ns_to_ps, us_to_ps, Time};
use crate::workload::motifs::{self, Motif};
use crate::Experiment;
use metrics::{IterationRow, JobStats};
use rank::Rank;

/// The phase of a message on the network.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Payload and header in one message.
    Eager,
    /// Rendezvous: the request to send, the answer, the payload, and (with
    /// `rendezvous_ack`) the receiver's acknowledgement.
    Rts,
    Cts,
    Data,
    Ack,
}

/// An MPI message (all of its phases).
#[derive(Debug, Clone)]
struct Msg {
    /// Global ranks.
    src: u32,
    dst: u32,
    tag: u32,
    payload: u64,
    phase: Phase,
    /// Bytes of the current phase not yet packetised; packets not yet delivered.
    wire_left: u64,
    to_deliver: u32,
    send_blocking: bool,
    recv_blocking: bool,
}

/// The protocol's constants in engine units.
struct Protocol {
    eager_limit: u64,
    header: u64,
    tx: Time,
    rx_setup: Time,
    nic_tx: Time,
    /// From a message's last packet to the host seeing it.
    arrive: Time,
    match_: Time,
    window: u32,
    /// `nic_control_stream`, and the packets staged ahead of a control message.
    control_stream: bool,
    staged: u64,
    packet_bytes: u64,
    flit_bytes: u64,
    /// Eager copy, ps per byte; rendezvous pinning, ps and ps per 4 KiB page; acknowledged
    /// rendezvous sends.
    copy_per_byte: f64,
    pin: Time,
    pin_per_page: Time,
    /// Receives of rendezvous size pin their buffer before they are posted; an `irecv` waits
    /// for it; a completed one is unpinned before its wait returns.
    recv_pin: bool,
    recv_pin_blocks: bool,
    recv_unpin: bool,
    ack: bool,
    /// Every MPI call's entry and return.
    call_enter: Time,
    call_return: Time,
}

/// A job: its motif, its ranks' global indices, its record.
struct Job {
    name: String,
    motif: Box<dyn Motif>,
    iterations: u32,
    first: u32,
    wait2start: Time,
}

/// The MPI layer (see the module comment): a [`crate::workload::Workload`].
pub struct Mpi {
    jobs: Vec<Job>,
    ranks: Vec<Rank>,
    msgs: Vec<Msg>,
    free_msgs: Vec<u32>,
    /// Per node, the messages its NIC is sending (front first).
    nic: Vec<VecDeque<u32>>,
    /// Per node, its NIC's control stream (`nic_control_stream`): clears to send, each with
    /// the count of `nic` packets sent after which it goes.
    ctl: Vec<VecDeque<(u32, u64)>>,
    /// Per node, the packets of `nic` sent so far and those still to send.
    sent: Vec<u64>,
    unsent: Vec<u64>,
    p: Protocol,
    stats: Vec<JobStats>,
    rows: Vec<IterationRow>,
    record_iterations: bool,
    window: Time,
    /// Per job, whether its end is one the run waits for (`workload.end_with_jobs`).
    ends_run: Vec<bool>,
    /// The jobs of `ends_run` not finished yet: the run ends at 0.
    to_end: usize,
    /// Whether jobs other than those of `ends_run` may still send when the run ends.
    ends_early: bool,
    scratch: Vec<op::Op>,
}

impl Mpi {
    /// The workload of `cfg.workload` (which must be present) on `topo`.
    pub fn new(cfg: &Experiment, topo: &Topology) -> Result<Mpi> {
        let w = cfg.workload.as_ref().ok_or_else(|| Error::config("workload", "is missing"))?;
        w.check(topo.compute_endpoints())?;
        let nodes = placement::place(w, topo, cfg.seed)?;
        let window = us_to_ps(w.throughput_window_us).max(1);
        let (mut jobs, mut ranks, mut stats) = (Vec::new(), Vec::new(), Vec::new());
        for (j, (job, placed)) in w.jobs.iter().zip(&nodes).enumerate() {
            let field = format!("workload.jobs[{j}]");
            let motif = build_motif(&job.motif, job.ranks, &job.params, &field)?;
            let first = ranks.len() as u32;
            ranks.extend(placed.iter().enumerate().map(|(r, &n)| Rank::new(j as u32, r as u32, n)));
            stats.push(JobStats::new(job.ranks, window));
            jobs.push(Job {
                name: job.name.clone().unwrap_or_else(|| job.motif.clone()),
                iterations: motif.iterations(),
                motif,
                first,
                wait2start: us_to_ps(job.wait2start_us),
            });
        }
        let ends_run: Vec<bool> =
            (0..jobs.len() as u32).map(|j| w.end_with_jobs.is_empty() || w.end_with_jobs.contains(&j)).collect();
        let n = &cfg.network;
        Ok(Mpi {
            jobs,
            ranks,
            msgs: Vec::new(),
            free_msgs: Vec::new(),
            nic: vec![VecDeque::new(); topo.nodes()],
            ctl: vec![VecDeque::new(); topo.nodes()],
            sent: vec![0; topo.nodes()],
            unsent: vec![0; topo.nodes()],
            p: protocol(w, n.flit_bytes as u64, n.packet_flits as u64),
            stats,
            rows: Vec::new(),
            record_iterations: w.record_iterations,
            window,
            to_end: ends_run.iter().filter(|&&e| e).count(),
            ends_early: ends_run.contains(&false),
            ends_run,
            scratch: Vec::new(),
        })
    }
}

fn protocol(w: &WorkloadConfig, flit_bytes: u64, packet_flits: u64) -> Protocol {
    let m = &w.mpi;
    Protocol {
        eager_limit: m.eager_limit_bytes,
        header: m.header_bytes,
        tx: ns_to_ps(m.tx_setup_ns),
        rx_setup: ns_to_ps(m.rx_setup_ns),
        nic_tx: ns_to_ps(m.nic_tx_ns),
        arrive: ns_to_ps(m.nic_rx_match_ns + m.nic2host_ns),
        match_: ns_to_ps(m.match_ns),
        window: m.nic_window_packets,
        control_stream: m.nic_control_stream,
        staged: m.nic_staged_packets as u64,
        packet_bytes: flit_bytes * packet_flits,
        flit_bytes,
        copy_per_byte: m.eager_copy_ps_per_byte,
        pin: ns_to_ps(m.rendezvous_pin_ns),
        pin_per_page: ns_to_ps(m.rendezvous_pin_ns_per_page),
        recv_pin: m.rendezvous_recv_pin,
        recv_pin_blocks: m.rendezvous_recv_pin_blocks,
        recv_unpin: m.rendezvous_recv_unpin,
        ack: m.rendezvous_ack,
        call_enter: ns_to_ps(m.call_enter_ns),
        call_return: ns_to_ps(m.call_return_ns),
    }
}

/// The motif `name` of a job of `ranks` ranks (`field`: the job's config path).
fn build_motif(
    name: &str,
    ranks: u32,
    params: &serde_json::Map<String, serde_json::Value>,
    field: &str,
) -> Result<Box<dyn Motif>> {
    motifs::build(name, ranks, params, field)
}
