//! Host lists (`-hosts`, `-f`) and rank placement (`-ppn`, block or
//! round-robin).

use crate::args::MAX_PROCS;
use crate::sys;

/// One entry of the host list, after merging repeated names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Host {
    pub name: String,
    /// Slot count given as `HOST:SLOTS`; `None` means 1.
    pub slots: Option<u32>,
}

/// Parses `-hosts a,b:2,c`.
pub fn parse_list(list: &str) -> Result<Vec<Host>, String> {
    let mut hosts = Vec::new();
    for item in list.split(',') {
        let item = item.trim();
        if item.is_empty() {
            return Err(format!("-hosts: empty host name in '{list}'"));
        }
        hosts.push(parse_entry(item)?);
    }
    Ok(merge(hosts))
}

/// Parses a host file: `HOST[:SLOTS]` per line, `#` to end of line is a
/// comment, blank lines are skipped.
pub fn parse_file(text: &str) -> Result<Vec<Host>, String> {
    let mut hosts = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        if line.split_whitespace().count() != 1 {
            return Err(format!("line {}: expected HOST or HOST:SLOTS", n + 1));
        }
        hosts.push(parse_entry(line).map_err(|e| format!("line {}: {e}", n + 1))?);
    }
    if hosts.is_empty() {
        return Err("the host file lists no hosts".into());
    }
    Ok(merge(hosts))
}

fn parse_entry(item: &str) -> Result<Host, String> {
    // `host:slots`; a bare IPv6 address has several colons and no slots.
    let (name, slots) = match item.rsplit_once(':') {
        Some((name, slots)) if !name.contains(':') => {
            let slots = match slots.parse::<u32>() {
                Ok(s) if (1..=MAX_PROCS).contains(&s) => s,
                _ => return Err(format!("bad slot count in '{item}'")),
            };
            (name, Some(slots))
        }
        _ => (item, None),
    };
    let valid = !name.is_empty()
        && !name.starts_with('-')
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._:@[]".contains(&b));
    if !valid {
        return Err(format!("'{name}' is not a valid host name"));
    }
    Ok(Host {
        name: name.to_string(),
        slots,
    })
}

/// A host listed twice is one host with the slots added up (Hydra does the
/// same), in the position of its first mention.
fn merge(hosts: Vec<Host>) -> Vec<Host> {
    let mut out: Vec<Host> = Vec::new();
    for h in hosts {
        if let Some(prev) = out.iter_mut().find(|p| p.name == h.name) {
            let total = prev.slots.unwrap_or(1).saturating_add(h.slots.unwrap_or(1));
            prev.slots = Some(total.min(MAX_PROCS));
        } else {
            out.push(h);
        }
    }
    out
}

/// Places ranks on hosts. Returns the job size and, for every rank, the
/// index of its host in `hosts`.
///
/// Each host takes `ppn` ranks, or its slot count without `-ppn`. Block
/// placement fills a host before moving to the next; round-robin gives each
/// host with room one rank in turn. When `nprocs` exceeds the total, the
/// placement starts over from the first host (oversubscription, as in
/// Hydra). Without `nprocs`, the job fills every host exactly once.
pub fn place(
    hosts: &[Host],
    ppn: Option<u32>,
    nprocs: Option<u32>,
    round_robin: bool,
) -> Result<(u32, Vec<u32>), String> {
    assert!(!hosts.is_empty());
    let caps: Vec<u64> = hosts
        .iter()
        .map(|h| u64::from(ppn.or(h.slots).unwrap_or(1)))
        .collect();
    let total: u64 = caps.iter().sum();
    let size = match nprocs {
        Some(n) => n,
        None if total <= u64::from(MAX_PROCS) => total as u32,
        None => {
            return Err(format!(
                "the hosts offer {total} slots; give -n (at most {MAX_PROCS})"
            ))
        }
    };
    let mut nodes = Vec::with_capacity(size as usize);
    let want = size as usize;
    let max_cap = caps.iter().copied().max().unwrap_or(1);
    while nodes.len() < want {
        if round_robin {
            'pass: for round in 0..max_cap {
                for (i, &cap) in caps.iter().enumerate() {
                    if round < cap {
                        if nodes.len() == want {
                            break 'pass;
                        }
                        nodes.push(i as u32);
                    }
                }
            }
        } else {
            for (i, &cap) in caps.iter().enumerate() {
                let take = cap.min((want - nodes.len()) as u64);
                nodes.extend(std::iter::repeat_n(i as u32, take as usize));
            }
        }
    }
    Ok((size, nodes))
}

/// Whether `name` is this machine, where ranks are started directly.
pub fn is_local(name: &str) -> bool {
    if matches!(name, "localhost" | "127.0.0.1" | "::1" | "[::1]") {
        return true;
    }
    let Some(me) = sys::hostname() else {
        return false;
    };
    let short = |s: &str| s.split('.').next().unwrap_or(s).to_ascii_lowercase();
    let name_l = name.to_ascii_lowercase();
    name_l == me.to_ascii_lowercase() || (!name.contains('.') && name_l == short(&me))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(name: &str, slots: Option<u32>) -> Host {
        Host {
            name: name.into(),
            slots,
        }
    }

    #[test]
    fn lists_and_files() {
        assert_eq!(
            parse_list("a,b:3,a:2").unwrap(),
            vec![h("a", Some(3)), h("b", Some(3))]
        );
        assert_eq!(
            parse_file("# hosts\n n1:2 \n\nn2 # second\n10.0.0.3:1\n").unwrap(),
            vec![h("n1", Some(2)), h("n2", None), h("10.0.0.3", Some(1))]
        );
        assert_eq!(parse_list("fe80::1").unwrap(), vec![h("fe80::1", None)]);
        for bad in ["", "a,,b", "a:0", "a:x", "-a", "a b", "a;b"] {
            assert!(parse_list(bad).is_err(), "{bad:?}");
        }
        assert!(parse_file("# nothing\n").is_err());
        assert!(parse_file("a b\n").is_err());
    }

    #[test]
    fn placement() {
        let two = [h("a", None), h("b", None)];
        assert_eq!(
            place(&two, Some(2), None, false).unwrap(),
            (4, vec![0, 0, 1, 1])
        );
        assert_eq!(
            place(&two, Some(2), None, true).unwrap(),
            (4, vec![0, 1, 0, 1])
        );
        assert_eq!(place(&two, None, None, false).unwrap(), (2, vec![0, 1]));
        // Oversubscription wraps around.
        assert_eq!(
            place(&two, Some(2), Some(6), false).unwrap(),
            (6, vec![0, 0, 1, 1, 0, 0])
        );
        assert_eq!(
            place(&two, Some(2), Some(3), false).unwrap(),
            (3, vec![0, 0, 1])
        );
        let uneven = [h("a", Some(3)), h("b", Some(1))];
        assert_eq!(
            place(&uneven, None, None, true).unwrap(),
            (4, vec![0, 1, 0, 0])
        );
        assert_eq!(
            place(&uneven, None, Some(5), false).unwrap(),
            (5, vec![0, 0, 0, 1, 0])
        );
    }

    #[test]
    fn locality() {
        assert!(is_local("localhost"));
        assert!(is_local("127.0.0.1"));
        assert!(!is_local("oxmpi-h1"));
        if let Some(me) = sys::hostname() {
            assert!(is_local(&me));
        }
    }
}
