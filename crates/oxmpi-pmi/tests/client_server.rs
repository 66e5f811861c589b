//! Drives real `PmiClient`s against the sans-IO `PmiServer` over Unix
//! socket pairs, one thread per rank on each side.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::sync::{Arc, Mutex};
use std::thread;

use oxmpi_pmi::{
    parse_process_mapping, single_node_mapping, PmiClient, PmiError, PmiServer, ServerEvent,
};

type Events = Arc<Mutex<Vec<ServerEvent>>>;

fn start_server(n: u32) -> (Vec<UnixStream>, Events) {
    let mut server = PmiServer::new("kvs_test_0", n);
    server.set_process_mapping(single_node_mapping(n));
    let server = Arc::new(Mutex::new(server));
    let events: Events = Arc::default();
    let mut clients = Vec::new();
    let mut writers = Vec::new();
    let mut readers = Vec::new();
    for _ in 0..n {
        let (c, s) = UnixStream::pair().unwrap();
        clients.push(c);
        writers.push(Mutex::new(s.try_clone().unwrap()));
        readers.push(s);
    }
    let writers = Arc::new(writers);
    for (rank, sock) in readers.into_iter().enumerate() {
        let (server, writers, events) = (server.clone(), writers.clone(), events.clone());
        thread::spawn(move || {
            for line in BufReader::new(sock).lines() {
                let Ok(line) = line else { break };
                let out = server.lock().unwrap().handle_line(rank as u32, &line);
                events.lock().unwrap().extend(out.events);
                for (to, reply) in out.replies {
                    let _ = writers[to as usize]
                        .lock()
                        .unwrap()
                        .write_all(reply.as_bytes());
                }
            }
        });
    }
    (clients, events)
}

#[test]
fn ranks_exchange_through_the_kvs() {
    let n = 4;
    let (clients, events) = start_server(n);
    let handles: Vec<_> = clients
        .into_iter()
        .enumerate()
        .map(|(rank, sock)| {
            thread::spawn(move || {
                let mut c = PmiClient::from_stream(sock, rank as u32, n).unwrap();
                assert_eq!(c.rank(), rank as u32);
                assert_eq!(c.size(), n);
                assert_eq!(c.appnum(), 0);
                assert_eq!(c.universe_size(), n as i32);
                assert_eq!(c.kvs_name(), "kvs_test_0");
                c.put(&format!("card-{rank}"), &format!("{:04x}==", rank * 7))
                    .unwrap();
                c.barrier().unwrap();
                for peer in 0..n as usize {
                    let v = c.get(&format!("card-{peer}")).unwrap();
                    assert_eq!(v, Some(format!("{:04x}==", peer * 7)));
                }
                assert_eq!(c.get("missing").unwrap(), None);
                assert_eq!(c.get_from("other_kvs", "card-0").unwrap(), None);
                let mapping = c.process_mapping().unwrap().unwrap();
                assert_eq!(parse_process_mapping(&mapping), Some(vec![0; n as usize]));
                c.barrier().unwrap();
                c.finalize().unwrap();
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let events = events.lock().unwrap();
    let finalized = events
        .iter()
        .filter(|e| matches!(e, ServerEvent::Finalized { .. }))
        .count();
    assert_eq!(finalized, n as usize);
}

#[test]
fn client_side_validation() {
    let (mut clients, _events) = start_server(1);
    let mut c = PmiClient::from_stream(clients.remove(0), 0, 1).unwrap();
    for key in ["", "a b", "a=b", "a\nb"] {
        assert!(
            matches!(c.put(key, "v"), Err(PmiError::InvalidKey { .. })),
            "{key:?}"
        );
    }
    let long_key = "k".repeat(c.key_len_max());
    assert!(matches!(
        c.put(&long_key, "v"),
        Err(PmiError::InvalidKey { .. })
    ));
    for value in ["a b", "a\nb", "\t"] {
        let err = c.put("k", value).unwrap_err();
        assert!(matches!(err, PmiError::InvalidValue { .. }), "{value:?}");
        assert!(err.to_string().contains("base64"), "{err}");
    }
    let long_value = "v".repeat(c.value_len_max());
    assert!(matches!(
        c.put("k", &long_value),
        Err(PmiError::InvalidValue { .. })
    ));
    let ok_value = "v".repeat(c.value_len_max() - 1);
    c.put("k", &ok_value).unwrap();
    assert_eq!(c.get("k").unwrap(), Some(ok_value));
    c.finalize().unwrap();
}

#[test]
fn abort_reaches_the_server() {
    let (mut clients, events) = start_server(2);
    let mut c = PmiClient::from_stream(clients.remove(1), 1, 2).unwrap();
    c.abort(5, "disk\nfull").unwrap();
    for _ in 0..200 {
        if events
            .lock()
            .unwrap()
            .iter()
            .any(|e| matches!(e, ServerEvent::Abort { .. }))
        {
            break;
        }
        thread::sleep(std::time::Duration::from_millis(5));
    }
    assert!(events.lock().unwrap().contains(&ServerEvent::Abort {
        rank: 1,
        exit_code: 5,
        message: Some("disk full".into()),
    }));
}

#[test]
fn closed_connection_is_a_clear_error() {
    let (c, s) = UnixStream::pair().unwrap();
    drop(s);
    let err = PmiClient::from_stream(c, 0, 1).unwrap_err();
    assert!(
        matches!(err, PmiError::Closed { .. } | PmiError::Io { .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains("init"), "{err}");
}

#[test]
fn garbage_reply_is_a_codec_error() {
    let (c, mut s) = UnixStream::pair().unwrap();
    let t = thread::spawn(move || {
        let mut line = String::new();
        BufReader::new(s.try_clone().unwrap())
            .read_line(&mut line)
            .unwrap();
        s.write_all(b"this is not pmi\n").unwrap();
    });
    let err = PmiClient::from_stream(c, 0, 1).unwrap_err();
    assert!(matches!(err, PmiError::Codec { .. }), "{err:?}");
    t.join().unwrap();
}

#[test]
fn initack_over_tcp() {
    use std::net::TcpListener;
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let t = thread::spawn(move || {
        let (sock, _) = listener.accept().unwrap();
        let mut writer = sock.try_clone().unwrap();
        let mut server = PmiServer::new("kvs_tcp_0", 2);
        let mut rank = None;
        for line in BufReader::new(sock).lines() {
            let Ok(line) = line else { break };
            if rank.is_none() {
                rank = line
                    .split_whitespace()
                    .find_map(|t| t.strip_prefix("pmiid="))
                    .and_then(|v| v.parse().ok());
            }
            let out = server.handle_line(rank.unwrap(), &line);
            for (_, reply) in out.replies {
                writer.write_all(reply.as_bytes()).unwrap();
            }
            if out.events.contains(&ServerEvent::Finalized { rank: 1 }) {
                break;
            }
        }
    });
    let c = PmiClient::connect_tcp(&addr, 1).unwrap();
    assert_eq!((c.rank(), c.size()), (1, 2));
    assert_eq!(c.kvs_name(), "kvs_tcp_0");
    c.finalize().unwrap();
    t.join().unwrap();
}

#[test]
fn initack_carries_secret_and_job_secret_comes_from_kvs() {
    use std::net::TcpListener;
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let t = thread::spawn(move || {
        let (sock, _) = listener.accept().unwrap();
        let mut writer = sock.try_clone().unwrap();
        let mut server = PmiServer::new("kvs_tcp_1", 1);
        server.publish(oxmpi_pmi::JOB_SECRET_KEY, "00ff");
        let mut first = None;
        for line in BufReader::new(sock).lines() {
            let Ok(line) = line else { break };
            if first.is_none() {
                first = Some(line.clone());
            }
            let out = server.handle_line(0, &line);
            for (_, reply) in out.replies {
                writer.write_all(reply.as_bytes()).unwrap();
            }
            if out.events.contains(&ServerEvent::Finalized { rank: 0 }) {
                break;
            }
        }
        first.unwrap()
    });
    let mut c = PmiClient::connect_tcp_with_secret(&addr, 0, Some("tok123")).unwrap();
    // The test process has no OXMPI_JOB_SECRET, so the KVS answers.
    if std::env::var_os(oxmpi_pmi::JOB_SECRET_ENV).is_none() {
        assert_eq!(c.job_secret().unwrap().as_deref(), Some("00ff"));
    }
    c.finalize().unwrap();
    let first = t.join().unwrap();
    assert!(first.starts_with("cmd=initack "), "{first}");
    assert!(first.contains(" pmiid=0"), "{first}");
    assert!(first.contains(" secret=tok123"), "{first}");
}
