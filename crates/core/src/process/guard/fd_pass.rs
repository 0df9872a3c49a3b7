//! Descriptors over a Unix socket (`SCM_RIGHTS`): the host hands the guard a copy of each
//! child's stdin with the line that registers the child ([`super::wire`]).

use std::collections::VecDeque;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::net::UnixStream;

/// Room for this many descriptors in one message.
const MAX_FDS: usize = 16;

/// Sends `bytes` with a copy of `fd` attached to their first byte.
pub fn send(socket: &UnixStream, bytes: &[u8], fd: RawFd) -> std::io::Result<()> {
    let mut space = [0u8; 64];
    // SAFETY: the message points at live buffers; CMSG_* compute offsets inside `space`,
    // which is large enough for one descriptor.
    let sent = unsafe {
        let mut iov = libc::iovec { iov_base: bytes.as_ptr() as *mut libc::c_void, iov_len: bytes.len() };
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = space.as_mut_ptr().cast();
        msg.msg_controllen = libc::CMSG_SPACE(std::mem::size_of::<RawFd>() as u32) as _;
        let header = libc::CMSG_FIRSTHDR(&msg);
        (*header).cmsg_level = libc::SOL_SOCKET;
        (*header).cmsg_type = libc::SCM_RIGHTS;
        (*header).cmsg_len = libc::CMSG_LEN(std::mem::size_of::<RawFd>() as u32) as _;
        std::ptr::write_unaligned(libc::CMSG_DATA(header).cast::<RawFd>(), fd);
        libc::sendmsg(socket.as_raw_fd(), &msg, 0)
    };
    if sent < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // The rest (rarely any) without the descriptor.
    std::io::Write::write_all(&mut &*socket, &bytes[sent as usize..])
}

/// Reads bytes, appending any descriptors that came with them to `received`.
pub fn recv(socket: &UnixStream, buf: &mut [u8], received: &mut VecDeque<OwnedFd>) -> std::io::Result<usize> {
    // Aligned room for MAX_FDS descriptors.
    let mut space = [0u64; 64];
    // SAFETY: as in `send`; the kernel writes at most msg_controllen bytes of control data,
    // and every descriptor it reports is new and ours to own.
    unsafe {
        let mut iov = libc::iovec { iov_base: buf.as_mut_ptr().cast(), iov_len: buf.len() };
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = space.as_mut_ptr().cast();
        msg.msg_controllen = libc::CMSG_SPACE((MAX_FDS * std::mem::size_of::<RawFd>()) as u32) as _;
        let n = libc::recvmsg(socket.as_raw_fd(), &mut msg, 0);
        if n < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let mut header = libc::CMSG_FIRSTHDR(&msg);
        while !header.is_null() {
            if (*header).cmsg_level == libc::SOL_SOCKET && (*header).cmsg_type == libc::SCM_RIGHTS {
                let data = libc::CMSG_DATA(header);
                let count =
                    ((*header).cmsg_len as usize - (data as usize - header as usize)) / std::mem::size_of::<RawFd>();
                for i in 0..count {
                    let fd = std::ptr::read_unaligned(data.cast::<RawFd>().add(i));
                    received.push_back(OwnedFd::from_raw_fd(fd));
                }
            }
            header = libc::CMSG_NXTHDR(&msg, header);
        }
        Ok(n as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

    #[test]
    fn descriptors_travel_with_their_lines() {
        let (host, guard) = UnixStream::pair().unwrap();
        let (pipe_read, pipe_write) = std::io::pipe().unwrap();
        send(&host, b"+9 1 t f\n", pipe_write.as_raw_fd()).unwrap();
        drop(pipe_write);
        let mut received = VecDeque::new();
        let mut buf = [0u8; 64];
        let n = recv(&guard, &mut buf, &mut received).unwrap();
        assert_eq!(&buf[..n], b"+9 1 t f\n");
        assert_eq!(received.len(), 1);
        // The copy keeps the pipe open: the reader sees no end-of-file until it goes.
        let copy = received.pop_front().unwrap();
        let mut pipe_read = pipe_read;
        std::io::Write::write_all(&mut std::fs::File::from(copy), b"x").unwrap();
        let mut got = [0u8; 1];
        std::io::Read::read_exact(&mut pipe_read, &mut got).unwrap();
        assert_eq!(&got, b"x");
    }
}
