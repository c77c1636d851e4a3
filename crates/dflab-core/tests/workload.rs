//! The MPI layer (`workload/mpi`): point-to-point timing on an idle network against the
//! schedule computed by hand from the protocol's delays and the network's own packet times,
//! matching, collectives, the deadlock report, placement and determinism.

mod common;

use common::{small, timed};
use dflab_core::config::workload::{Background, JobConfig, Placement, WorkloadConfig};
use dflab_core::config::{Arrangement, PortTiming};
use dflab_core::units::Time;
use dflab_core::workload::mpi::metrics::WorkloadReport;
use dflab_core::{Error, Experiment};
use serde_json::{json, Value};

/// dfly(2, 4, 2): 72 nodes with the SC'22 packets (4 flits of 128 B); the control messages
/// are one full packet (header 512 B), so that every packet of these tests has
/// `packet_flits` flits and `timed` can measure it.
fn net() -> Experiment {
    let mut e = small(2, 4, 2, 1, Arrangement::Absolute, 0.0, 1000.0);
    e.routing.algorithm = "MIN".into();
    (e.network.flit_bytes, e.network.packet_flits) = (128, 4);
    e
}

fn job(ranks: u32, ops: Value) -> JobConfig {
    JobConfig {
        motif: "table".into(),
        ranks,
        name: None,
        wait2start_us: 0.0,
        params: json!({ "ops": ops }).as_object().unwrap().clone(),
    }
}

/// The jobs on `e` with the bare protocol: the toolkit's host costs (copy, pinning,
/// acknowledgement, call entry and return, the receive side's pinning) left out and one FIFO
/// in the NIC; the tests that want them set them.
fn with_jobs(mut e: Experiment, jobs: Vec<JobConfig>) -> Experiment {
    let mut w = WorkloadConfig { jobs, placement: Placement::Linear, ..Default::default() };
    let m = &mut w.mpi;
    m.header_bytes = 512;
    (m.eager_copy_ps_per_byte, m.rendezvous_pin_ns, m.rendezvous_pin_ns_per_page) = (0.0, 0.0, 0.0);
    (m.rendezvous_ack, m.call_enter_ns, m.call_return_ns) = (false, 0.0, 0.0);
    (m.rendezvous_recv_pin_blocks, m.rendezvous_recv_unpin, m.nic_control_stream) = (false, false, false);
    e.workload = Some(w);
    e
}

fn report(e: &Experiment) -> WorkloadReport {
    let r = dflab_core::simulate(e).unwrap_or_else(|err| panic!("{err}"));
    r.workload.expect("a workload report")
}

fn ps(us: f64) -> Time {
    (us * 1e6).round() as Time
}

/// (stop time of rank `rank`'s iteration 0, in ps)
fn stop(rep: &WorkloadReport, rank: u32) -> Time {
    ps(rep.iterations.iter().find(|r| r.rank == rank && r.iteration == 0).unwrap().stop_us)
}

const NS: Time = 1000;
/// The MPI defaults: tx setup + NIC tx, NIC rx match + nic2host, match.
const SEND_START: Time = 18 * NS;
const ARRIVE: Time = 15 * NS;
const MATCH: Time = 15 * NS;

/// Ranks 0 and 1 of a 72-node job are nodes 0 and 71 (placement linear, ranks 0..72, the
/// peers at the two ends of the network).
fn pair_job(ops: Value) -> JobConfig {
    job(72, ops)
}

#[test]
fn an_eager_message_takes_its_setup_its_packets_and_the_match() {
    // 512 B of payload and the 512 B header: two packets, sent at 18 ns; the receive is
    // posted at once.
    let e = with_jobs(
        net(),
        vec![pair_job(json!([
            { "rank": 0, "op": "send", "peer": 71, "bytes": 512 },
            { "rank": 71, "op": "recv", "peer": 0 },
        ]))],
    );
    let rep = report(&e);
    let lat = timed(&e_without_workload(&e), &[(SEND_START, 0, 71), (SEND_START, 0, 71)]);
    let last = SEND_START + lat[0].max(lat[1]);
    assert_eq!(stop(&rep, 71), last + ARRIVE + MATCH);
    // The send completes when its last packet is in the source queue (the window holds 30).
    assert_eq!(stop(&rep, 0), SEND_START);
    let j = &rep.jobs[0];
    assert_eq!((j.messages, j.payload_bytes, j.wire_bytes, j.packets), (1, 512, 1024, 2));
    assert!(j.finished);
    // The two packets enter the source queue together: the first leaves at once, the second
    // one packet-time later, so the latency counted from the source queue (as SST counts it)
    // exceeds the one from injection by half a packet-time on average.
    let packet_ns = 512.0 / e.network.host_bw_gbps;
    assert!((j.packet_latency_mean_ns - j.latency.mean_ns - packet_ns / 2.0).abs() < 1e-6, "{j:?}");
    assert!(j.packet_latency_p99_ns >= j.latency.p99_ns && j.packet_latency_p50_ns >= j.latency.p50_ns);
    // Both cross the idle network alike: the first (lower quartile) waited for nothing, the
    // last (maximum) one packet-time (within the histograms' three significant digits).
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-3 * a.max(b);
    assert!(close(j.packet_latency_q1_ns, j.latency.q1_ns), "{j:?}");
    assert!(close(j.packet_latency_max_ns, j.latency.max_ns + packet_ns), "{j:?}");
    assert!(j.packet_latency_q1_ns < j.packet_latency_q3_ns && j.packet_latency_q3_ns <= j.packet_latency_max_ns);
}

/// The source queue is SST's link control output buffer (30 packets in the SC'22 platform): an
/// eager message that fits completes as soon as its packets are in, and each of them then
/// waits there for the ones ahead, which SST's packet latency counts.
#[test]
fn the_source_queue_holds_the_link_controls_thirty_packets() {
    // 10 × 512 B of payload and the 512 B header: 11 packets.
    let send = |window: u32| {
        let mut e = with_jobs(
            net(),
            vec![pair_job(json!([
                { "rank": 0, "op": "send", "peer": 71, "bytes": 5120 },
                { "rank": 71, "op": "recv", "peer": 0 },
            ]))],
        );
        e.workload.as_mut().unwrap().mpi.nic_window_packets = window;
        report(&e)
    };
    let packet = ps(512.0 / net().network.host_bw_gbps / 1000.0);
    let deep = send(30);
    assert_eq!(30, WorkloadConfig::default().mpi.nic_window_packets);
    assert_eq!(stop(&deep, 0), SEND_START);
    // The k-th packet (from 0) leaves k packet-times after it entered: (11 - 1) / 2 on average.
    let j = &deep.jobs[0];
    let waited = j.packet_latency_mean_ns - j.latency.mean_ns;
    assert!((waited - 5.0 * packet as f64 / 1000.0).abs() < 1e-6, "{waited} ns, {j:?}");
    // A two-packet window lets the send complete only when its 11th packet gets in: the first
    // leaves at once and two wait, so it enters after 8 departures; the packets leave the NIC
    // at the same times, the receiver is not moved.
    let shallow = send(2);
    assert_eq!(stop(&shallow, 0), SEND_START + 8 * packet);
    assert_eq!(stop(&shallow, 71), stop(&deep, 71));
    assert_eq!(shallow.jobs[0].latency.mean_ns, j.latency.mean_ns);
    assert!(shallow.jobs[0].packet_latency_mean_ns < j.packet_latency_mean_ns - 100.0);
}

#[test]
fn a_rendezvous_is_request_clear_to_send_then_data() {
    // 40 full packets of payload, above the 12,000 B eager limit.
    let bytes = 40 * 512;
    let e = with_jobs(
        net(),
        vec![pair_job(json!([
            { "rank": 0, "op": "send", "peer": 71, "bytes": bytes },
            { "rank": 71, "op": "recv", "peer": 0 },
        ]))],
    );
    let rep = report(&e);
    let data = rendezvous_data_in(&e_without_workload(&e), SEND_START);
    assert_eq!(stop(&rep, 71), data + ARRIVE);
    let j = &rep.jobs[0];
    assert_eq!((j.messages, j.wire_bytes, j.packets), (1, bytes as u64 + 2 * 512, 42));
}

#[test]
fn an_unexpected_message_waits_for_its_receive() {
    // The receiver computes for 50 us; the eager message is long there.
    let e = with_jobs(
        net(),
        vec![pair_job(json!([
            { "rank": 0, "op": "send", "peer": 71, "bytes": 100 },
            { "rank": 71, "op": "compute", "ns": 50000 },
            { "rank": 71, "op": "recv", "peer": 0 },
        ]))],
    );
    let rep = report(&e);
    assert_eq!(stop(&rep, 71), ps(50.0) + 10 * NS + MATCH);
    // Its communication time excludes the computation.
    let row = rep.iterations.iter().find(|r| r.rank == 71).unwrap();
    assert!((row.comm_us - 0.025).abs() < 1e-9, "{row:?}");
}

#[test]
fn receives_match_by_source_and_tag_whatever_the_posting_order() {
    let e = with_jobs(
        net(),
        vec![pair_job(json!([
            { "rank": 0, "op": "isend", "peer": 71, "bytes": 100, "tag": 1 },
            { "rank": 0, "op": "isend", "peer": 71, "bytes": 20000, "tag": 2 },
            { "rank": 0, "op": "waitall" },
            { "rank": 71, "op": "recv", "peer": 0, "tag": 2 },
            { "rank": 71, "op": "recv", "peer": 0, "tag": 1 },
        ]))],
    );
    let rep = report(&e);
    assert!(rep.jobs[0].finished);
    assert_eq!(rep.jobs[0].messages, 2);
    // Two sends posted before the wait: the burst is both payloads.
    assert_eq!(rep.jobs[0].peak_ingress_bytes, 20100);
}

#[test]
fn a_receive_that_never_matches_is_reported_by_job_rank_and_operation() {
    let e = with_jobs(
        net(),
        vec![pair_job(json!([
            { "rank": 0, "op": "send", "peer": 71, "bytes": 100, "tag": 1 },
            { "rank": 71, "op": "recv", "peer": 0, "tag": 9 },
        ]))],
    );
    match dflab_core::simulate(&e) {
        Err(Error::Deadlock(m)) => {
            assert!(m.contains("job 0 (table) rank 71"), "{m}");
            assert!(m.contains("Recv { from: 0"), "{m}");
            assert!(m.contains("tag: 9"), "{m}");
        }
        other => panic!("expected a deadlock report, got {:?}", other.map(|r| r.summary)),
    }
}

/// Every collective on 13 ranks completes, with the number of messages its algorithm sends.
#[test]
fn collectives_complete_with_their_message_counts() {
    let n = 13u64;
    for (op, extra, messages) in [
        ("allreduce", json!({"bytes": 8}), 2 * (n - 1)),
        ("barrier", json!({}), 2 * (n - 1)),
        ("bcast", json!({"peer": 5, "bytes": 20000}), n - 1),
        ("reduce", json!({"peer": 12, "bytes": 64}), n - 1),
        ("alltoall", json!({"bytes": 3000}), n * (n - 1)),
    ] {
        let ops: Vec<Value> = (0..n)
            .map(|r| {
                let mut row = json!({ "rank": r, "op": op });
                for (k, v) in extra.as_object().unwrap() {
                    row[k] = v.clone();
                }
                row
            })
            .collect();
        let rep = report(&with_jobs(net(), vec![job(n as u32, Value::Array(ops))]));
        assert!(rep.jobs[0].finished, "{op}");
        assert_eq!(rep.jobs[0].messages, messages, "{op}");
    }
}

/// Two jobs on disjoint nodes, repeated: the same report to the byte; under `random`
/// placement another seed moves the ranks.
#[test]
fn runs_repeat_exactly_and_jobs_get_disjoint_nodes() {
    let mut e = with_jobs(net(), vec![ring(30, 50_000), ring(40, 3_000)]);
    e.workload.as_mut().unwrap().placement = Placement::Random;
    let a = dflab_core::simulate(&e).unwrap();
    let b = dflab_core::simulate(&e).unwrap();
    assert_eq!(serde_json::to_string(&a.workload).unwrap(), serde_json::to_string(&b.workload).unwrap());
    let wa = a.workload.unwrap();
    assert!(wa.jobs.iter().all(|j| j.finished));
    assert_eq!(wa.jobs[0].messages, 30);
    e.seed = 2;
    let c = dflab_core::simulate(&e).unwrap().workload.unwrap();
    assert_ne!(wa.jobs[0].latency.mean_ns, c.jobs[0].latency.mean_ns);
    // Every packet of the jobs was delivered and counted once, by the engine too.
    assert_eq!(a.summary.packets_delivered, wa.jobs.iter().map(|j| j.packets).sum::<u64>());
}

/// A ring of `n` ranks, each sending `bytes` to the next.
fn ring(n: u32, bytes: u64) -> JobConfig {
    let ops: Vec<Value> = (0..n)
        .flat_map(|r| {
            [
                json!({ "rank": r, "op": "irecv", "peer": (r + n - 1) % n }),
                json!({ "rank": r, "op": "isend", "peer": (r + 1) % n, "bytes": bytes }),
                json!({ "rank": r, "op": "waitall" }),
            ]
        })
        .collect();
    job(n, Value::Array(ops))
}

#[test]
fn a_run_ended_by_its_target_job_reports_that_job_exactly() {
    // Job 0 (30 ranks, 50 kB each) finishes long before job 1 (40 ranks, 600 kB each). Ended
    // by job 0, the run stops when it finishes; job 0's row is the one the whole run gives,
    // with and without synthetic traffic on the idle nodes, and job 1's says unfinished.
    for background in [Background::None, Background::IdleNodes] {
        let mut whole = with_jobs(net(), vec![ring(30, 50_000), ring(40, 600_000)]);
        let w = whole.workload.as_mut().unwrap();
        (w.placement, w.background) = (Placement::Random, background);
        whole.traffic.load = 0.2;
        let mut early = whole.clone();
        early.workload.as_mut().unwrap().end_with_jobs = vec![0];
        let (a, b) = (dflab_core::simulate(&whole).unwrap(), dflab_core::simulate(&early).unwrap());
        let (wa, wb) = (a.workload.unwrap(), b.workload.unwrap());
        assert!(
            wa.jobs.iter().all(|j| j.finished),
            "{background:?} {:?}",
            wa.jobs.iter().map(|j| j.exec_us).collect::<Vec<_>>()
        );
        let target = |j: &dflab_core::workload::mpi::metrics::JobRow| serde_json::to_string(j).unwrap();
        assert_eq!(target(&wa.jobs[0]), target(&wb.jobs[0]), "{background:?}");
        let times = |r: &[dflab_core::workload::mpi::metrics::JobRow]| {
            r.iter().map(|j| (j.finished, j.exec_us)).collect::<Vec<_>>()
        };
        assert!(
            !wb.jobs[1].finished && wb.jobs[1].exec_us < wa.jobs[1].exec_us / 2.0,
            "{background:?} {:?} {:?}",
            times(&wa.jobs),
            times(&wb.jobs)
        );
        assert_eq!(wb.jobs[1].exec_us, wb.jobs[0].exec_us, "the run ends when job 0 finishes");
        assert!(wb.jobs[1].packets < wa.jobs[1].packets);
    }
}

#[test]
fn bad_workloads_get_field_named_errors() {
    let cases = [
        (json!({"jobs": []}), "workload.jobs"),
        (json!({"jobs": [{"motif": "table", "ranks": 100}]}), "workload.jobs"),
        (json!({"jobs": [{"motif": "nosuch", "ranks": 2}]}), "workload.jobs[0].motif"),
        (
            json!({"jobs": [{"motif": "table", "ranks": 2, "params": {"ops": [{"rank": 5, "op": "waitall"}]}}]}),
            "workload.jobs[0].params.ops[0].rank",
        ),
        (
            json!({"jobs": [{"motif": "table", "ranks": 2, "params": {"ops": [{"rank": 0, "op": "fly"}]}}]}),
            "workload.jobs[0].params.ops[0].op",
        ),
        (json!({"jobs": [{"motif": "table", "ranks": 2}], "placement": "file"}), "workload.placement_file"),
        (
            json!({"jobs": [{"motif": "table", "ranks": 2}], "placement": "file", "placement_file": "/nonexistent"}),
            "workload.placement_file",
        ),
        (json!({"jobs": [{"motif": "table", "ranks": 2}], "mpi": {"header_bytes": 0}}), "workload.mpi.header_bytes"),
        (json!({"jobs": [{"motif": "table", "ranks": 2}], "end_with_jobs": [1]}), "workload.end_with_jobs"),
        (
            json!({"jobs": [{"motif": "table", "ranks": 2}, {"motif": "table", "ranks": 2}], "end_with_jobs": [1, 1]}),
            "workload.end_with_jobs",
        ),
    ];
    for (w, field) in cases {
        let mut cfg = serde_json::to_value(net()).unwrap();
        cfg["workload"] = w.clone();
        let err = Experiment::from_json(&cfg.to_string()).and_then(|e| dflab_core::simulate(&e).map(drop));
        match err {
            Err(Error::Config { field: f, .. }) => assert_eq!(f, field, "{w}"),
            other => panic!("{w}: expected an error on {field}, got {other:?}"),
        }
    }
}

/// When the last of the 40 data packets of a rendezvous from node 0 to node 71 is delivered,
/// its request to send leaving node 0 at `rts_start`: the request, the receiver's match and
/// send setup, the clear to send, the NIC's turnaround, then the data, each crossing timed on
/// the idle network `plain`.
fn rendezvous_data_in(plain: &Experiment, rts_start: Time) -> Time {
    let rts = rts_start + timed(plain, &[(rts_start, 0, 71)])[0];
    let cts_start = rts + ARRIVE + MATCH + SEND_START;
    let cts = cts_start + timed(plain, &[(cts_start, 71, 0)])[0];
    let data_start = cts + ARRIVE + 5 * NS;
    let sends: Vec<_> = (0..40).map(|_| (data_start, 0, 71)).collect();
    data_start + timed(plain, &sends).into_iter().max().unwrap()
}

/// The same network without the workload (for `timed`).
fn e_without_workload(e: &Experiment) -> Experiment {
    let mut e = e.clone();
    e.workload = None;
    e
}

/// Every motif of the library runs to its end on a network, and the MPI layer counts the
/// messages, wire bytes and peak ingress that `motifs::totals` computes without one.
#[test]
fn every_motif_completes_and_sends_what_its_totals_say() {
    use dflab_core::workload::motifs::{self, totals::totals};
    let ranks = 16;
    for &name in motifs::names() {
        let params = match name {
            "null" | "table" => continue,
            // Short runs: the ranks' programs are the same every iteration.
            "ur" => json!({"iterations": 20}),
            "cosmoflow" => json!({"iterations": 1, "compute_us": 10.0}),
            // The 400^3 grid of the reference makes MB messages at 16 ranks.
            "fft3d" => json!({"iterations": 1, "n": 40}),
            "lqcd" => json!({"iterations": 1, "nx": 8, "ny": 8, "nz": 8, "nt": 8}),
            _ => json!({"iterations": 1}),
        };
        let params = params.as_object().unwrap().clone();
        let mut j = JobConfig { motif: name.into(), ranks, name: None, wait2start_us: 1.0, params };
        let m = motifs::build(name, ranks, &j.params, "j").unwrap_or_else(|e| panic!("{name}: {e}"));
        let want = totals(m.as_ref(), ranks, 40, 12_000);
        j.name = Some(name.into());
        let mut e = with_jobs(net(), vec![j]);
        e.workload.as_mut().unwrap().mpi.header_bytes = 40;
        e.run.measure_us = 100_000.0;
        let rep = report(&e);
        let got = &rep.jobs[0];
        assert!(got.finished, "{name}");
        assert_eq!(
            (got.messages, got.payload_bytes, got.wire_bytes, got.peak_ingress_bytes),
            (want.messages, want.payload_bytes, want.wire_bytes, want.peak_ingress_bytes),
            "{name}"
        );
    }
}

/// A network that stays empty while the ranks compute for longer than the watchdog is not
/// stuck when packets enter it again (barriers skip empty windows, so the watchdog's last
/// progress was before the computation).
#[test]
fn packets_after_a_long_computation_are_not_a_deadlock() {
    let mut e = with_jobs(
        net(),
        vec![pair_job(json!([
            { "rank": 0, "op": "send", "peer": 71, "bytes": 100 },
            { "rank": 71, "op": "recv", "peer": 0 },
            { "rank": 0, "op": "compute", "ns": 500000 },
            { "rank": 0, "op": "send", "peer": 71, "bytes": 100 },
            { "rank": 71, "op": "recv", "peer": 0 },
        ]))],
    );
    e.run.watchdog_us = 50.0;
    let rep = report(&e);
    assert!(rep.jobs[0].finished);
    assert!(rep.jobs[0].exec_us > 500.0);
}

/// A packet shorter than `network.packet_flits` holds the links for its own flits: 1,000
/// header-only messages (one flit each) leave a NIC in about 1,000 flit-times, under both port
/// timings, not in 1,000 packet-times.
#[test]
fn short_packets_hold_links_for_their_own_flits() {
    for timing in [PortTiming::LinkBusy, PortTiming::Sst] {
        let ops: Vec<Value> = (0..1000)
            .map(|_| json!({ "rank": 0, "op": "isend", "peer": 71, "bytes": 0 }))
            .chain([json!({ "rank": 0, "op": "waitall" })])
            .chain((0..1000).map(|_| json!({ "rank": 71, "op": "irecv", "peer": 0 })))
            .chain([json!({ "rank": 71, "op": "waitall" })])
            .collect();
        let mut e = with_jobs(net(), vec![pair_job(Value::Array(ops))]);
        e.network.timing = timing;
        let w = e.workload.as_mut().unwrap();
        w.mpi.header_bytes = 40;
        let rep = report(&e);
        assert_eq!(rep.jobs[0].packets, 1000);
        let flit_ns = e.network.flit_bytes as f64 / e.network.host_bw_gbps;
        let took = rep.jobs[0].exec_us * 1e3;
        assert!(took > 1000.0 * flit_ns && took < 1000.0 * flit_ns * 1.5, "{timing:?}: {took} ns, flit {flit_ns} ns");
    }
}

/// Per port: every byte a job received crossed one ejection (host) port, and ports stall only
/// when packets wait for credits (a congested all-to-all, not a lone message).
#[test]
fn ports_count_each_jobs_bytes_and_their_stalls() {
    let alltoall = |n: u32| {
        let ops: Vec<Value> = (0..n).map(|r| json!({ "rank": r, "op": "alltoall", "bytes": 20000 })).collect();
        job(n, Value::Array(ops))
    };
    let mut e = with_jobs(net(), vec![alltoall(30), alltoall(20)]);
    e.workload.as_mut().unwrap().placement = Placement::Random;
    let r = dflab_core::simulate(&e).unwrap();
    let (w, ports) = (r.workload.unwrap(), r.ports.unwrap());
    assert_eq!(ports.len(), 36 * 7); // 36 routers of radix 2 + 3 + 2
    for j in 0..2 {
        let ejected: u64 = ports.iter().filter(|p| p.class == "host").map(|p| p.bytes[j]).sum();
        let received: u64 = w.throughput_bytes[j].iter().sum();
        assert_eq!(ejected, received, "job {j}");
        let moved: u64 = ports.iter().filter(|p| p.class != "host").map(|p| p.bytes[j]).sum();
        assert!(moved > 0);
    }
    assert!(ports.iter().any(|p| p.stall_us > 0.0), "a congested all-to-all stalls some port");
    // A lone one-packet message never waits for credits.
    let lone = with_jobs(
        net(),
        vec![pair_job(json!([
            { "rank": 0, "op": "send", "peer": 71, "bytes": 100 },
            { "rank": 71, "op": "recv", "peer": 0 },
        ]))],
    );
    let ports = dflab_core::simulate(&lone).unwrap().ports.unwrap();
    assert!(ports.iter().all(|p| p.stall_us == 0.0));
    assert_eq!(ports.iter().filter(|p| p.class == "global" && p.bytes[0] > 0).count(), 1);
}

/// Equal simulations have equal canonical forms (the result store's key): a motif parameter
/// written out at its default is the default; another value is another experiment. A motif's
/// own errors come when the experiment is read.
#[test]
fn motif_parameters_are_canonical_and_checked_when_read() {
    let halo = |params: Value| {
        let mut cfg = serde_json::to_value(net()).unwrap();
        cfg["workload"] = json!({"jobs": [{"motif": "halo3d", "ranks": 48, "params": params}]});
        Experiment::from_json(&cfg.to_string())
    };
    let canon = |e: Experiment| serde_json::to_string(&e.canonical().unwrap()).unwrap();
    let plain = canon(halo(json!({})).unwrap());
    assert_eq!(plain, canon(halo(json!({"iterations": 30})).unwrap()));
    assert_ne!(plain, canon(halo(json!({"iterations": 3})).unwrap()));
    match halo(json!({"iterations": "many"})) {
        Err(Error::Config { field, .. }) => assert_eq!(field, "workload.jobs[0].params.iterations"),
        other => panic!("{:?}", other.map(|_| ())),
    }
    let mut cfg = serde_json::to_value(net()).unwrap();
    cfg["workload"] = json!({"jobs": [{"motif": "lqcd", "ranks": 7}]});
    match Experiment::from_json(&cfg.to_string()) {
        Err(Error::Config { field, .. }) => assert!(field.starts_with("workload.jobs[0]"), "{field}"),
        other => panic!("{:?}", other.map(|_| ())),
    }
}

/// Millions of per-iteration rows are refused before the run, naming the key that avoids them.
#[test]
fn too_many_iteration_rows_are_refused_before_the_run() {
    let mut cfg = serde_json::to_value(net()).unwrap();
    cfg["workload"] = json!({"jobs": [{"motif": "ur", "ranks": 72}], "record_iterations": true});
    match Experiment::from_json(&cfg.to_string()) {
        Ok(_) => {} // 72 x 7,200 = 518,400 rows: allowed
        Err(e) => panic!("{e}"),
    }
    cfg["workload"]["jobs"][0]["params"] = json!({"iterations": 20000});
    match Experiment::from_json(&cfg.to_string()) {
        Err(Error::Config { field, message }) => {
            assert_eq!(field, "workload.record_iterations");
            assert!(message.contains("1440000 rank-iterations"), "{message}");
        }
        other => panic!("{:?}", other.map(|_| ())),
    }
    cfg["workload"]["record_iterations"] = json!(false);
    assert!(Experiment::from_json(&cfg.to_string()).is_ok());
}

/// The SC'22 toolkit's host costs, when asked for: the eager copy delays the packets by its
/// bytes; pinning delays the request to send; an acknowledged rendezvous send completes one
/// network crossing after the data is in.
#[test]
fn toolkit_host_costs_shift_the_schedule_by_their_own_amounts() {
    let pair = |bytes: u64| {
        pair_job(json!([
            { "rank": 0, "op": "send", "peer": 71, "bytes": bytes },
            { "rank": 71, "op": "recv", "peer": 0 },
        ]))
    };
    // Eager: 512 B at 344 ps per byte, before the same two packets.
    let mut e = with_jobs(net(), vec![pair(512)]);
    e.workload.as_mut().unwrap().mpi.eager_copy_ps_per_byte = 344.0;
    let plain = e_without_workload(&e);
    let copy: Time = 512 * 344;
    let lat = timed(&plain, &[(SEND_START + copy, 0, 71), (SEND_START + copy, 0, 71)]);
    assert_eq!(stop(&report(&e), 71), SEND_START + copy + lat[0].max(lat[1]) + ARRIVE + MATCH);

    // Rendezvous of 40 packets (20,480 B = 5 pages): pinned, then acknowledged.
    let mut e = with_jobs(net(), vec![pair(40 * 512)]);
    {
        let m = &mut e.workload.as_mut().unwrap().mpi;
        (m.rendezvous_pin_ns, m.rendezvous_pin_ns_per_page, m.rendezvous_ack) = (300.0, 10.0, true);
    }
    let rep = report(&e);
    let pin: Time = 350 * NS;
    let data = rendezvous_data_in(&plain, SEND_START + pin);
    assert_eq!(stop(&rep, 71), data + ARRIVE);
    let ack_start = data + ARRIVE + SEND_START;
    let ack = ack_start + timed(&plain, &[(ack_start, 71, 0)])[0];
    assert_eq!(stop(&rep, 0), ack + ARRIVE);
    // The acknowledgement is a third control message on the wire.
    assert_eq!((rep.jobs[0].wire_bytes, rep.jobs[0].packets), (40 * 512 + 3 * 512, 43));
}

/// `rendezvous_recv_pin`: a receive above the eager limit is in place only after its buffer
/// is pinned (300 ns + 10 ns per page). Posted after the request to send has arrived, it
/// delays the clear to send, and so everything after it, by exactly the pinning; posted long
/// before, it costs nothing; a receive of eager size never pins.
#[test]
fn a_rendezvous_receive_pins_its_buffer_before_it_is_in_place() {
    let run = |recv_after_ns: u64, recv_bytes: u64, pin: bool| {
        let mut e = with_jobs(
            net(),
            vec![pair_job(json!([
                { "rank": 0, "op": "send", "peer": 71, "bytes": 40 * 512 },
                { "rank": 71, "op": "compute", "ns": recv_after_ns },
                { "rank": 71, "op": "recv", "peer": 0, "bytes": recv_bytes },
            ]))],
        );
        let m = &mut e.workload.as_mut().unwrap().mpi;
        (m.rendezvous_pin_ns, m.rendezvous_pin_ns_per_page, m.rendezvous_recv_pin) = (300.0, 10.0, pin);
        let rep = report(&e);
        (stop(&rep, 0), stop(&rep, 71))
    };
    // 20,480 B: 5 pages, 350 ns. The send side pins too (before its request to send).
    let pin: Time = 350 * NS;
    for bytes in [40 * 512, 12_000] {
        // Posted at 5 µs, well after the request to send arrived (unexpected).
        let (off, on) = (run(5_000, bytes, false), run(5_000, bytes, true));
        let delay = if bytes > 12_000 { pin } else { 0 };
        assert_eq!((on.0 - off.0, on.1 - off.1), (delay, delay), "{bytes} B");
    }
    // Posted at once: pinned long before the request arrives, the schedule is unchanged.
    assert_eq!(run(0, 40 * 512, true), run(0, 40 * 512, false));
}

/// Every MPI call of a program costs its entry (30 ns) before it takes effect and its return
/// (30 ns) after it completes, a `waitall` with nothing left to wait for too; a collective is
/// one call, its own messages pay nothing.
#[test]
fn every_mpi_call_pays_its_entry_and_return() {
    const CALL: Time = 30 * NS;
    let calls = |mut e: Experiment| {
        let m = &mut e.workload.as_mut().unwrap().mpi;
        (m.call_enter_ns, m.call_return_ns) = (30.0, 30.0);
        e
    };
    // Rank 0: isend (posted at 30 ns, its packets in the source queue at 48), waitall: four
    // calls' worth. Rank 71: irecv (posted at 30), waitall until the message is matched.
    let e = calls(with_jobs(
        net(),
        vec![pair_job(json!([
            { "rank": 0, "op": "isend", "peer": 71, "bytes": 512 },
            { "rank": 0, "op": "waitall" },
            { "rank": 71, "op": "irecv", "peer": 0 },
            { "rank": 71, "op": "waitall" },
        ]))],
    ));
    let rep = report(&e);
    assert_eq!(stop(&rep, 0), 4 * CALL);
    let start = CALL + SEND_START;
    let lat = timed(&e_without_workload(&e), &[(start, 0, 71), (start, 0, 71)]);
    assert_eq!(stop(&rep, 71), start + lat[0].max(lat[1]) + ARRIVE + MATCH + CALL);

    // A barrier of ranks 0 and 1 (nodes 0 and 1): rank 1 sends up the tree at 30 ns and
    // receives the answer; rank 0 receives, then answers; each pays one entry and one return.
    let barrier = json!([{ "rank": 0, "op": "barrier" }, { "rank": 1, "op": "barrier" }]);
    let e = calls(with_jobs(net(), vec![job(2, barrier)]));
    let rep = report(&e);
    let plain = e_without_workload(&e);
    let up = CALL + SEND_START;
    let down = up + timed(&plain, &[(up, 1, 0)])[0] + ARRIVE + MATCH + SEND_START;
    assert_eq!(stop(&rep, 0), down + CALL);
    assert_eq!(stop(&rep, 1), down + timed(&plain, &[(down, 0, 1)])[0] + ARRIVE + MATCH + CALL);
}

/// `nic_control_stream`: node 71 streams 400 packets to rank 1 when rank 0's request to send
/// reaches it. In the NIC's one FIFO its clear to send waits for the rest of that stream; on
/// the control stream it waits for `nic_staged_packets` of them, and the stream to rank 1
/// waits for the clear to send.
#[test]
fn a_clear_to_send_on_the_control_stream_overtakes_all_but_the_staged_packets() {
    let run = |stream: Option<u32>| {
        let mut e = with_jobs(
            net(),
            vec![pair_job(json!([
                { "rank": 71, "op": "isend", "peer": 1, "bytes": 400 * 512 },
                { "rank": 71, "op": "irecv", "peer": 0 },
                { "rank": 71, "op": "waitall" },
                { "rank": 1, "op": "recv", "peer": 71 },
                { "rank": 0, "op": "compute", "ns": 2000 },
                { "rank": 0, "op": "send", "peer": 71, "bytes": 40 * 512 },
            ]))],
        );
        if let Some(staged) = stream {
            let m = &mut e.workload.as_mut().unwrap().mpi;
            (m.nic_control_stream, m.nic_staged_packets) = (true, staged);
        }
        let rep = report(&e);
        (stop(&rep, 0), stop(&rep, 1))
    };
    let fifo = run(None);
    // Staging more than the stream holds is the FIFO, to the picosecond.
    assert_eq!(run(Some(1_000_000)), fifo);
    let at: Vec<_> = [0, 10, 100].into_iter().map(|k| run(Some(k))).collect();
    // Each staged packet delays rank 0's send by one of the stream's packet-times (153.6 ns
    // here: the 20-flit buffers' credits pace the stream below the link's 128 ns).
    let packet = (at[2].0 - at[1].0) / 90;
    assert_eq!(packet, 153_600);
    assert_eq!(at[1].0 - at[0].0, 10 * packet);
    // Overtaking most of the stream: rank 0's send ends far sooner than behind all of it.
    assert!(fifo.0 > at[2].0 + 100 * packet, "{fifo:?} {at:?}");
    // The stream to rank 1 gives way to the clear to send (256 ns here), wherever it
    // overtakes.
    for a in &at {
        assert_eq!(a.1 - fifo.1, 256_000, "{at:?}");
    }
}

/// Firefly's other receive-side rendezvous costs, each an option: an `irecv` above the eager
/// limit holds its rank while its buffer is pinned (`rendezvous_recv_pin_blocks`), and a
/// completed rendezvous receive is unpinned, at the pinning's cost, before its wait returns
/// (`rendezvous_recv_unpin`). Each shifts what follows by exactly the pinning (5 pages: 350 ns).
#[test]
fn firefly_receive_pin_blocks_and_unpin_cost_exactly_the_pinning() {
    let run = |blocks: bool, unpin: bool| {
        let mut e = with_jobs(
            net(),
            vec![pair_job(json!([
                { "rank": 0, "op": "send", "peer": 71, "bytes": 40 * 512 },
                { "rank": 71, "op": "irecv", "peer": 0, "bytes": 40 * 512 },
                { "rank": 71, "op": "send", "peer": 1, "bytes": 512 },
                { "rank": 71, "op": "waitall" },
                { "rank": 1, "op": "recv", "peer": 71 },
            ]))],
        );
        let m = &mut e.workload.as_mut().unwrap().mpi;
        (m.rendezvous_pin_ns, m.rendezvous_pin_ns_per_page, m.rendezvous_recv_pin) = (300.0, 10.0, true);
        (m.rendezvous_recv_pin_blocks, m.rendezvous_recv_unpin) = (blocks, unpin);
        let rep = report(&e);
        (stop(&rep, 71), stop(&rep, 1))
    };
    let pin: Time = 350 * NS;
    let base = run(false, false);
    // The eager send to rank 1 leaves a pinning later; the rendezvous is not held up (its
    // receive was pinned before the request to send came), so rank 71's wait ends as before.
    let blocks = run(true, false);
    assert_eq!((blocks.0, blocks.1), (base.0, base.1 + pin));
    // Unpinning delays the end of rank 71's wait by the pinning, nothing else.
    assert_eq!(run(false, true), (base.0 + pin, base.1));
    assert_eq!(run(true, true), (base.0 + pin, base.1 + pin));
}
