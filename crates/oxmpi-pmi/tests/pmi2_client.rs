//! Drives real `PmiClient`s speaking PMI-2 against a small fake PMI-2 server
//! (modelled on Slurm's `mpi/pmi2` plugin: Slurm's left-aligned length
//! field, `appnum=-1`, a fence that answers when every rank arrived) over
//! Unix socket pairs, one thread per rank on each side.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::sync::{Arc, Condvar, Mutex};
use std::thread;

use oxmpi_pmi::{
    parse_process_mapping, FrameDecoder, Message, Pmi2Message, PmiClient, PmiError, PmiProtocol,
};

#[derive(Default)]
struct Kvs {
    /// What ranks put since the last fence, published by the next one.
    pending: HashMap<String, String>,
    visible: HashMap<String, String>,
    /// Ranks that entered the current fence, and fences completed.
    arrived: u32,
    generation: u64,
    aborts: Vec<Pmi2Message>,
    /// Every command received, in order, per rank.
    log: Vec<(u32, String)>,
}

struct Server {
    size: u32,
    jobid: String,
    kvs: Mutex<Kvs>,
    fenced: Condvar,
}

/// Frames a response the way Slurm does: `%-6d` then the body.
fn slurm_frame(body: &str) -> Vec<u8> {
    format!("{:<6}{body}", body.len()).into_bytes()
}

fn serve(server: Arc<Server>, rank: u32, mut sock: UnixStream) {
    let mut dec = FrameDecoder::default();
    let mut buf = [0u8; 512];
    // The PMI-1 style init line.
    let line = loop {
        if let Some(l) = dec.next_line() {
            break l.unwrap();
        }
        let n = sock.read(&mut buf).unwrap();
        if n == 0 {
            return;
        }
        dec.feed(&buf[..n]);
    };
    let init = Message::parse(&line).unwrap();
    assert_eq!(init.name(), "init");
    assert_eq!(init.get("pmi_version"), Some("2"));
    sock.write_all(b"cmd=response_to_init rc=0 pmi_version=2 pmi_subversion=0\n")
        .unwrap();
    loop {
        let body = loop {
            if let Some(f) = dec.next_frame() {
                break f.unwrap();
            }
            let n = sock.read(&mut buf).unwrap_or(0);
            if n == 0 {
                return;
            }
            dec.feed(&buf[..n]);
        };
        let m = Pmi2Message::parse_body(&body).unwrap();
        server.kvs.lock().unwrap().log.push((rank, body.clone()));
        let reply = match m.name() {
            "fullinit" => {
                assert_eq!(m.get("pmijobid"), Some(server.jobid.as_str()));
                assert_eq!(m.get_int::<u32>("pmirank"), Some(rank));
                assert_eq!(m.get_bool("threaded"), Some(false));
                format!(
                    "cmd=fullinit-response;rc=0;pmi-version=2;pmi-subversion=0;rank={rank};\
                     size={};appnum=-1;debugged=FALSE;pmiverbose=FALSE;",
                    server.size
                )
            }
            "job-getid" => format!("cmd=job-getid-response;rc=0;jobid={};", server.jobid),
            "info-getjobattr" => match m.get("key") {
                Some("PMI_process_mapping") => format!(
                    "cmd=info-getjobattr-response;rc=0;found=TRUE;value=(vector,(0,1,{}));",
                    server.size
                ),
                Some("universeSize") => {
                    "cmd=info-getjobattr-response;rc=0;found=TRUE;value=16;".into()
                }
                _ => "cmd=info-getjobattr-response;rc=0;found=FALSE;".into(),
            },
            "kvs-put" => {
                let (k, v) = (m.get("key").unwrap(), m.get("value").unwrap());
                server
                    .kvs
                    .lock()
                    .unwrap()
                    .pending
                    .insert(k.into(), v.into());
                "cmd=kvs-put-response;rc=0;".into()
            }
            "kvs-fence" => {
                let mut kvs = server.kvs.lock().unwrap();
                let gen = kvs.generation;
                kvs.arrived += 1;
                if kvs.arrived == server.size {
                    let pending = std::mem::take(&mut kvs.pending);
                    kvs.visible.extend(pending);
                    kvs.arrived = 0;
                    kvs.generation += 1;
                    server.fenced.notify_all();
                }
                while kvs.generation == gen {
                    kvs = server.fenced.wait(kvs).unwrap();
                }
                "cmd=kvs-fence-response;rc=0;".into()
            }
            "kvs-get" => {
                assert_eq!(m.get("jobid"), Some(server.jobid.as_str()));
                let kvs = server.kvs.lock().unwrap();
                match kvs.visible.get(m.get("key").unwrap()) {
                    Some(v) => format!("cmd=kvs-get-response;rc=0;found=TRUE;value={v};"),
                    None => "cmd=kvs-get-response;rc=0;found=FALSE;".into(),
                }
            }
            "abort" => {
                server.kvs.lock().unwrap().aborts.push(m);
                continue;
            }
            "finalize" => {
                sock.write_all(&slurm_frame("cmd=finalize-response;rc=0;"))
                    .unwrap();
                return;
            }
            other => panic!("unexpected command {other}"),
        };
        sock.write_all(&slurm_frame(&reply)).unwrap();
    }
}

fn start(n: u32) -> (Vec<UnixStream>, Arc<Server>) {
    let server = Arc::new(Server {
        size: n,
        jobid: "42.0".into(),
        kvs: Mutex::default(),
        fenced: Condvar::new(),
    });
    let mut clients = Vec::new();
    for rank in 0..n {
        let (c, s) = UnixStream::pair().unwrap();
        clients.push(c);
        let server = server.clone();
        thread::spawn(move || serve(server, rank, s));
    }
    (clients, server)
}

#[test]
fn ranks_exchange_through_the_pmi2_kvs() {
    let n = 4;
    let (clients, server) = start(n);
    let handles: Vec<_> = clients
        .into_iter()
        .enumerate()
        .map(|(rank, sock)| {
            thread::spawn(move || {
                let rank = rank as u32;
                let mut c = PmiClient::from_stream_pmi2(sock, rank, Some("42.0")).unwrap();
                assert_eq!(c.protocol(), PmiProtocol::Pmi2);
                assert_eq!((c.rank(), c.size()), (rank, n));
                assert_eq!(c.appnum(), 0, "Slurm's appnum=-1 means app 0");
                assert_eq!(c.universe_size(), 16);
                assert_eq!(c.kvs_name(), "42.0");
                assert_eq!((c.key_len_max(), c.value_len_max()), (64, 1024));
                let mapping = c.process_mapping().unwrap().unwrap();
                assert_eq!(parse_process_mapping(&mapping), Some(vec![0; n as usize]));
                // Nothing is visible before the first fence, and asking is
                // not even sent (Hydra would abort the job).
                assert_eq!(c.job_secret().unwrap(), None);
                c.put(
                    &format!("addr-{rank}"),
                    &format!("host{rank}:{}", 1000 + rank),
                )
                .unwrap();
                c.barrier().unwrap();
                for r in 0..n {
                    assert_eq!(
                        c.get(&format!("addr-{r}")).unwrap().as_deref(),
                        Some(format!("host{r}:{}", 1000 + r).as_str())
                    );
                }
                assert_eq!(c.get("nobody-put-this").unwrap(), None);
                // A second round through the same KVS.
                c.put(&format!("round2-{rank}"), "x=y").unwrap();
                c.barrier().unwrap();
                assert_eq!(
                    c.get(&format!("round2-{}", (rank + 1) % n))
                        .unwrap()
                        .as_deref(),
                    Some("x=y")
                );
                c.finalize().unwrap();
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let kvs = server.kvs.lock().unwrap();
    // The secret lookup before the first fence never reached the server.
    assert!(
        !kvs.log.iter().any(|(_, b)| b.contains("oxmpi-job-secret")),
        "{:?}",
        kvs.log
    );
    // Every barrier is a fence followed by a probe get.
    let rank0: Vec<&str> = kvs
        .log
        .iter()
        .filter(|(r, _)| *r == 0)
        .map(|(_, b)| b.split(';').next().unwrap())
        .collect();
    assert_eq!(
        rank0,
        [
            "cmd=fullinit",
            "cmd=job-getid",
            "cmd=info-getjobattr",
            "cmd=info-getjobattr",
            "cmd=kvs-put",
            "cmd=kvs-fence",
            "cmd=kvs-get",
            "cmd=kvs-get",
            "cmd=kvs-get",
            "cmd=kvs-get",
            "cmd=kvs-get",
            "cmd=kvs-get",
            "cmd=kvs-put",
            "cmd=kvs-fence",
            "cmd=kvs-get",
            "cmd=kvs-get",
            "cmd=finalize"
        ]
    );
}

#[test]
fn abort_sends_a_clean_message_and_expects_no_reply() {
    let (mut clients, server) = start(1);
    let mut c = PmiClient::from_stream_pmi2(clients.remove(0), 0, Some("42.0")).unwrap();
    c.abort(7, "bad;thing\nhappened ").unwrap();
    // The server must have received it without replying; give its thread a moment.
    for _ in 0..100 {
        if !server.kvs.lock().unwrap().aborts.is_empty() {
            break;
        }
        thread::sleep(std::time::Duration::from_millis(10));
    }
    let kvs = server.kvs.lock().unwrap();
    let abort = &kvs.aborts[0];
    assert_eq!(abort.get_bool("isworld"), Some(true));
    assert_eq!(abort.get("exitcode"), Some("7"));
    assert_eq!(abort.get("msg"), Some("bad thing happened"));
}

#[test]
fn put_refuses_what_pmi2_servers_cannot_carry() {
    let (mut clients, _server) = start(1);
    let mut c = PmiClient::from_stream_pmi2(clients.remove(0), 0, Some("42.0")).unwrap();
    for (k, v) in [("k", "a;b"), ("k", "a b"), ("k", "a\nb")] {
        assert!(
            matches!(c.put(k, v), Err(PmiError::InvalidValue { .. })),
            "{v:?}"
        );
    }
    for k in ["a;b", "a=b", "", &"k".repeat(64)] {
        assert!(
            matches!(c.put(k, "v"), Err(PmiError::InvalidKey { .. })),
            "{k:?}"
        );
    }
    assert!(matches!(
        c.put("k", &"v".repeat(1024)),
        Err(PmiError::InvalidValue { .. })
    ));
    c.put("k", &"v".repeat(1023)).unwrap();
}

/// Runs a client against a scripted server: after the init line it sends
/// `replies` (raw bytes) one per request, then hangs up.
fn scripted(replies: Vec<Vec<u8>>) -> Result<PmiClient, PmiError> {
    let (c, mut s) = UnixStream::pair().unwrap();
    thread::spawn(move || {
        let mut buf = [0u8; 4096];
        let mut dec = FrameDecoder::default();
        let mut replies = replies.into_iter();
        // Init line, answered by the first reply.
        loop {
            if dec.next_line().is_some() {
                break;
            }
            let n = s.read(&mut buf).unwrap_or(0);
            if n == 0 {
                return;
            }
            dec.feed(&buf[..n]);
        }
        if let Some(r) = replies.next() {
            let _ = s.write_all(&r);
        }
        for r in replies {
            loop {
                if dec.next_frame().is_some() {
                    break;
                }
                let n = s.read(&mut buf).unwrap_or(0);
                if n == 0 {
                    return;
                }
                dec.feed(&buf[..n]);
            }
            let _ = s.write_all(&r);
        }
    });
    PmiClient::from_stream_pmi2(c, 1, None)
}

const INIT_OK: &[u8] = b"cmd=response_to_init pmi_version=2 pmi_subversion=0 rc=0\n";

#[test]
fn mpich_style_server_without_jobid_env() {
    // Hydra: right-aligned lengths, rc last, no PMI_JOBID, universe unknown.
    let frame = |b: &str| format!("{:>6}{b}", b.len()).into_bytes();
    let c = scripted(vec![
        INIT_OK.to_vec(),
        frame("cmd=fullinit-response;pmi-version=2;pmi-subversion=0;rank=1;size=3;appnum=0;debugged=FALSE;pmiverbose=FALSE;rc=0;"),
        frame("cmd=job-getid-response;jobid=kvs_77_0;rc=0;"),
        frame("cmd=info-getjobattr-response;found=FALSE;rc=0;"),
    ])
    .unwrap();
    assert_eq!((c.rank(), c.size(), c.universe_size()), (1, 3, 3));
    assert_eq!(c.kvs_name(), "kvs_77_0");
}

#[test]
fn start_up_failures_are_clear_errors() {
    let frame = |b: &str| slurm_frame(b);
    // A PMI-1-only server.
    let e = scripted(vec![
        b"cmd=response_to_init rc=0 pmi_version=1 pmi_subversion=1\n".to_vec(),
    ])
    .unwrap_err();
    assert!(matches!(e, PmiError::Server { .. }), "{e}");
    assert!(e.to_string().contains("OXMPI_PMI=1"), "{e}");
    // Refused fullinit.
    let e = scripted(vec![
        INIT_OK.to_vec(),
        frame("cmd=fullinit-response;rc=3;errmsg=bad args;"),
    ])
    .unwrap_err();
    assert!(matches!(e, PmiError::Server { rc: 3, .. }), "{e}");
    // Missing size.
    let e = scripted(vec![
        INIT_OK.to_vec(),
        frame("cmd=fullinit-response;rc=0;rank=1;"),
    ])
    .unwrap_err();
    assert!(matches!(e, PmiError::Protocol { .. }), "{e}");
    // Rank not below size.
    let e = scripted(vec![
        INIT_OK.to_vec(),
        frame("cmd=fullinit-response;rc=0;rank=4;size=4;"),
    ])
    .unwrap_err();
    assert!(matches!(e, PmiError::Protocol { .. }), "{e}");
    // Wrong command.
    let e = scripted(vec![
        INIT_OK.to_vec(),
        frame("cmd=kvs-fence-response;rc=0;"),
    ])
    .unwrap_err();
    assert!(matches!(e, PmiError::Protocol { .. }), "{e}");
    // Garbage length field and garbage body.
    let e = scripted(vec![INIT_OK.to_vec(), b"abcdefcmd=x;".to_vec()]).unwrap_err();
    assert!(matches!(e, PmiError::Pmi2Codec { .. }), "{e}");
    let e = scripted(vec![INIT_OK.to_vec(), frame("rank=1;size=2;")]).unwrap_err();
    assert!(matches!(e, PmiError::Pmi2Codec { .. }), "{e}");
    // Hang-ups: before the init reply, mid-frame, before fullinit's reply.
    let e = scripted(vec![]).unwrap_err();
    assert!(matches!(e, PmiError::Closed { .. }), "{e}");
    let e = scripted(vec![INIT_OK.to_vec(), b"    40cmd=fullinit-resp".to_vec()]).unwrap_err();
    assert!(matches!(e, PmiError::Closed { .. }), "{e}");
    // (Writing fullinit may already fail with EPIPE.)
    let e = scripted(vec![INIT_OK.to_vec()]).unwrap_err();
    assert!(
        matches!(e, PmiError::Closed { .. } | PmiError::Io { .. }),
        "{e}"
    );
}
