//! Non-blocking socket primitives the transport is built on: nonces, connecting
//! without blocking, writes that raise no SIGPIPE, partial writes and exact reads
//! that resume where they stopped.

use std::io::{self, Read};
use std::net::{SocketAddr, TcpStream};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use super::wire::{self, Nonce};

/// Fills a nonce from the kernel's CSPRNG.
pub(super) fn random_nonce() -> io::Result<Nonce> {
    let mut n = [0u8; wire::NONCE_LEN];
    let mut filled = 0;
    while filled < n.len() {
        // SAFETY: writes at most `n.len() - filled` bytes into `n[filled..]`.
        let r = unsafe { libc::getrandom(n[filled..].as_mut_ptr().cast(), n.len() - filled, 0) };
        if r < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            // Old kernels without getrandom(2).
            let mut f = std::fs::File::open("/dev/urandom")?;
            f.read_exact(&mut n)?;
            return Ok(n);
        }
        filled += r as usize;
    }
    Ok(n)
}

/// Starts a non-blocking, close-on-exec, TCP_NODELAY connection to `addr`.
pub(super) fn connect_nonblocking(addr: &SocketAddr) -> io::Result<TcpStream> {
    // SAFETY: plain socket(2); the fd is owned right away.
    let fd = unsafe {
        libc::socket(
            if addr.is_ipv4() {
                libc::AF_INET
            } else {
                libc::AF_INET6
            },
            libc::SOCK_STREAM | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
            0,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` is a fresh descriptor we own.
    let stream = TcpStream::from(unsafe { OwnedFd::from_raw_fd(fd) });
    stream.set_nodelay(true)?;
    let r = match addr {
        SocketAddr::V4(a) => {
            // SAFETY: all-zero is a valid sockaddr_in.
            let mut sa: libc::sockaddr_in = unsafe { std::mem::zeroed() };
            sa.sin_family = libc::AF_INET as libc::sa_family_t;
            sa.sin_port = a.port().to_be();
            sa.sin_addr = libc::in_addr {
                s_addr: u32::from_ne_bytes(a.ip().octets()),
            };
            // SAFETY: `sa` is a valid sockaddr_in of the given size.
            unsafe {
                libc::connect(
                    fd,
                    (&sa as *const libc::sockaddr_in).cast(),
                    std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
                )
            }
        }
        SocketAddr::V6(a) => {
            // SAFETY: all-zero is a valid sockaddr_in6.
            let mut sa: libc::sockaddr_in6 = unsafe { std::mem::zeroed() };
            sa.sin6_family = libc::AF_INET6 as libc::sa_family_t;
            sa.sin6_port = a.port().to_be();
            sa.sin6_addr = libc::in6_addr {
                s6_addr: a.ip().octets(),
            };
            sa.sin6_flowinfo = a.flowinfo();
            sa.sin6_scope_id = a.scope_id();
            // SAFETY: `sa` is a valid sockaddr_in6 of the given size.
            unsafe {
                libc::connect(
                    fd,
                    (&sa as *const libc::sockaddr_in6).cast(),
                    std::mem::size_of::<libc::sockaddr_in6>() as libc::socklen_t,
                )
            }
        }
    };
    if r < 0 {
        let e = io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EINPROGRESS) && e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
    Ok(stream)
}

/// Whether a non-blocking connect finished: `Ok(true)` connected, `Ok(false)` not yet.
pub(super) fn connect_done(stream: &TcpStream) -> io::Result<bool> {
    let mut p = libc::pollfd {
        fd: stream.as_raw_fd(),
        events: libc::POLLOUT,
        revents: 0,
    };
    // SAFETY: one valid pollfd, zero timeout.
    let r = unsafe { libc::poll(&mut p, 1, 0) };
    if r < 0 {
        let e = io::Error::last_os_error();
        return if e.kind() == io::ErrorKind::Interrupted {
            Ok(false)
        } else {
            Err(e)
        };
    }
    if r == 0 || p.revents == 0 {
        return Ok(false);
    }
    if let Some(e) = stream.take_error()? {
        return Err(e);
    }
    if p.revents & (libc::POLLERR | libc::POLLHUP) != 0 {
        return Err(io::Error::new(
            io::ErrorKind::ConnectionRefused,
            "connection failed",
        ));
    }
    Ok(true)
}

/// send(2) with MSG_NOSIGNAL: a peer that vanished gives EPIPE, not a SIGPIPE that
/// would kill a C program that has not ignored it.
fn send_nosig(stream: &TcpStream, buf: &[u8]) -> io::Result<usize> {
    loop {
        // SAFETY: reads `buf.len()` bytes from `buf`.
        let r = unsafe {
            libc::send(
                stream.as_raw_fd(),
                buf.as_ptr().cast(),
                buf.len(),
                libc::MSG_NOSIGNAL,
            )
        };
        if r >= 0 {
            return Ok(r as usize);
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// sendmsg(2) of the slices in order (gathered: no copy into a staging buffer), with
/// MSG_NOSIGNAL; the bytes the socket took (0 if it would block).
pub(super) fn send_gather(stream: &TcpStream, parts: &[&[u8]]) -> io::Result<usize> {
    // On the stack: one call per message sent from the user's buffer (at most the
    // queue plus GATHER_MAX packets of three parts each).
    const MAX_IOV: usize = 16;
    let empty = libc::iovec {
        iov_base: std::ptr::null_mut(),
        iov_len: 0,
    };
    let mut iov = [empty; MAX_IOV];
    let mut n = 0;
    for p in parts.iter().filter(|p| !p.is_empty()) {
        assert!(n < MAX_IOV, "send_gather: more than {MAX_IOV} parts");
        iov[n] = libc::iovec {
            iov_base: p.as_ptr() as *mut libc::c_void,
            iov_len: p.len(),
        };
        n += 1;
    }
    if n == 0 {
        return Ok(0);
    }
    // SAFETY: all-zero is a valid msghdr (no name, no control data).
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = iov.as_mut_ptr();
    msg.msg_iovlen = n as _;
    loop {
        // SAFETY: `msg` names `iov`, whose entries point into the live slices `parts`, read only.
        let r = unsafe { libc::sendmsg(stream.as_raw_fd(), &msg, libc::MSG_NOSIGNAL) };
        if r >= 0 {
            return Ok(r as usize);
        }
        let e = io::Error::last_os_error();
        match e.kind() {
            io::ErrorKind::Interrupted => continue,
            io::ErrorKind::WouldBlock => return Ok(0),
            _ => return Err(e),
        }
    }
}

/// readv(2) into `a`, then `b` (the bytes after `a`); EINTR is retried.
pub(super) fn read_two(stream: &TcpStream, a: &mut [u8], b: &mut [u8]) -> io::Result<usize> {
    let iov = [
        libc::iovec {
            iov_base: a.as_mut_ptr().cast(),
            iov_len: a.len(),
        },
        libc::iovec {
            iov_base: b.as_mut_ptr().cast(),
            iov_len: b.len(),
        },
    ];
    loop {
        // SAFETY: both iovecs describe live, writable slices borrowed mutably for this call.
        let r = unsafe { libc::readv(stream.as_raw_fd(), iov.as_ptr(), 2) };
        if r >= 0 {
            return Ok(r as usize);
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// Writes as much of `buf[*off..]` as the socket takes; `Ok(true)` if all of it went.
pub(super) fn write_some(
    stream: &TcpStream,
    buf: &[u8],
    off: &mut usize,
    did: &mut bool,
) -> io::Result<bool> {
    while *off < buf.len() {
        match send_nosig(stream, &buf[*off..]) {
            Ok(0) => {
                return Err(io::Error::new(
                    io::ErrorKind::WriteZero,
                    "send wrote nothing",
                ))
            }
            Ok(n) => {
                *off += n;
                *did = true;
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
            Err(e) => return Err(e),
        }
    }
    Ok(true)
}

/// Reads handshake bytes into `inbuf` until it holds `want` bytes (never more, so
/// later bytes stay in the socket). `Ok(true)` when complete.
pub(super) fn read_exact_nb(
    stream: &mut TcpStream,
    inbuf: &mut Vec<u8>,
    want: usize,
    did: &mut bool,
) -> io::Result<bool> {
    let mut tmp = [0u8; wire::CLIENT_MSG_LEN];
    while inbuf.len() < want {
        let need = (want - inbuf.len()).min(tmp.len());
        match stream.read(&mut tmp[..need]) {
            Ok(0) => {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "connection closed during the handshake",
                ))
            }
            Ok(n) => {
                inbuf.extend_from_slice(&tmp[..n]);
                *did = true;
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(true)
}
