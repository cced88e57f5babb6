//! A connection whose protocol-level error answers get the envelope.
//!
//! When actix's HTTP/1.1 layer cannot parse a request head it answers on
//! its own, before any middleware runs, with an empty body: `431` for a
//! head over its limits, `400` for a malformed one, `408` for a head that
//! never completes, `500` for an internal failure. Each is the last answer
//! on its connection (`connection: close`, `content-length: 0`, no
//! `content-type`). Every answer of the app carries a body and a
//! `content-type`, and no body the service writes holds a raw CR LF (JSON
//! escapes it, and no stored text may contain one), so such a head is
//! recognised exactly in the outgoing bytes and rewritten into the same
//! status with the error envelope and a `Request-Id`.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use domain::error::Code;
use domain::ports::Minter;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use crate::system::OsEntropy;

/// The wrapped connection.
#[derive(Debug)]
pub struct Enveloped<T> {
    io: T,
    /// Rewritten bytes not yet written, from `sent`.
    pending: Vec<u8>,
    sent: usize,
}

impl<T> Enveloped<T> {
    /// Wraps `io`.
    pub const fn new(io: T) -> Self {
        Self {
            io,
            pending: Vec::new(),
            sent: 0,
        }
    }
}

impl<T: AsyncWrite + Unpin> Enveloped<T> {
    /// Writes what is pending; `Ready` once nothing is.
    fn drain(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while let Some(rest) = self.pending.get(self.sent..).filter(|r| !r.is_empty()) {
            match Pin::new(&mut self.io).poll_write(cx, rest) {
                Poll::Ready(Ok(0)) => return Poll::Ready(Err(io::ErrorKind::WriteZero.into())),
                Poll::Ready(Ok(n)) => self.sent = self.sent.saturating_add(n),
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Pending => return Poll::Pending,
            }
        }
        self.pending.clear();
        self.sent = 0;
        Poll::Ready(Ok(()))
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for Enveloped<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_read(cx, buf)
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for Enveloped<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        match this.drain(cx) {
            Poll::Ready(Ok(())) => {}
            Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
            Poll::Pending => return Poll::Pending,
        }
        match find_bare_error(buf) {
            None => Pin::new(&mut this.io).poll_write(cx, buf),
            Some((0, head)) => {
                this.pending = rewrite(buf.get(..head).unwrap_or_default());
                this.sent = 0;
                // The rewritten head is written by the next write, flush or
                // shutdown; the caller's bytes count as taken.
                let _ = this.drain(cx);
                Poll::Ready(Ok(head))
            }
            Some((start, _)) => {
                Pin::new(&mut this.io).poll_write(cx, buf.get(..start).unwrap_or_default())
            }
        }
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = &mut *self;
        match this.drain(cx) {
            Poll::Ready(Ok(())) => Pin::new(&mut this.io).poll_flush(cx),
            other => other,
        }
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = &mut *self;
        match this.drain(cx) {
            Poll::Ready(Ok(())) => Pin::new(&mut this.io).poll_shutdown(cx),
            other => other,
        }
    }
}

/// Where a bodiless protocol-level error head starts in `buf`, and where
/// it ends (after its blank line). Every response passes here, so the
/// common case (a head that is not a 4xx or 5xx) is told from its status
/// line alone, without allocating.
fn find_bare_error(buf: &[u8]) -> Option<(usize, usize)> {
    const START: &[u8] = b"HTTP/1.1 ";
    let mut from = 0;
    while let Some(at) = memchr::memmem::find(buf.get(from..)?, START) {
        let start = from.saturating_add(at);
        let rest = buf.get(start..)?;
        if is_error_status(rest)
            && let Some(len) = memchr::memmem::find(rest, b"\r\n\r\n").map(|n| n.saturating_add(4))
        {
            let head = rest.get(..len).unwrap_or_default();
            if is_bare(head) {
                return Some((start, start.saturating_add(len)));
            }
        }
        from = start.saturating_add(START.len());
    }
    None
}

/// Whether the status line at the start of `head` is a 4xx or 5xx.
fn is_error_status(head: &[u8]) -> bool {
    matches!(head.get(9), Some(b'4' | b'5'))
}

/// A head with `content-length: 0` and no `content-type`.
fn is_bare(head: &[u8]) -> bool {
    let mut empty = false;
    for line in head.split(|&b| b == b'\n').skip(1) {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if starts_with_ignore_case(line, b"content-type:") {
            return false;
        }
        empty |= line.eq_ignore_ascii_case(b"content-length: 0");
    }
    empty
}

fn starts_with_ignore_case(line: &[u8], prefix: &[u8]) -> bool {
    line.get(..prefix.len())
        .is_some_and(|p| p.eq_ignore_ascii_case(prefix))
}

/// The same status with the envelope, a `Request-Id` and the original
/// `date`.
fn rewrite(head: &[u8]) -> Vec<u8> {
    let text = String::from_utf8_lossy(head);
    let mut lines = text.split("\r\n");
    let status_line = lines.next().unwrap_or("HTTP/1.1 400 Bad Request");
    let code = status_line.get(9..12).unwrap_or("400");
    let date = lines.find(|l| l.to_ascii_lowercase().starts_with("date:"));
    let invalid = Code::InvalidRequest.as_str();
    let (error, message) = match code {
        "431" => (
            invalid,
            "the request head is too large: at most 96 header fields and 128 KiB",
        ),
        "408" => (invalid, "the request head was not received within 5 s"),
        c if c.starts_with('5') => ("internal_error", "the service failed to read the request"),
        _ => (
            invalid,
            "the request is not valid HTTP/1.1: a malformed request line or header field",
        ),
    };
    let id = Minter::new(&OsEntropy::new()).request_id();
    let body = serde_json::json!({"error": error, "message": message}).to_string();
    let mut out = format!(
        "{status_line}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\
         connection: close\r\nrequest-id: {}\r\n",
        body.len(),
        id.as_str()
    );
    if let Some(date) = date {
        out.push_str(date);
        out.push_str("\r\n");
    }
    out.push_str("\r\n");
    out.push_str(&body);
    out.into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_bodiless_error_heads_are_found() {
        let bare = b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-length: 0\r\nconnection: close\r\ndate: Wed, 25 Nov 2026 17:57:45 GMT\r\n\r\n";
        assert_eq!(find_bare_error(bare), Some((0, bare.len())));
        let ok =
            b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\ncontent-type: application/json\r\n\r\n{}";
        let mut both = ok.to_vec();
        both.extend_from_slice(bare);
        assert_eq!(find_bare_error(&both), Some((ok.len(), both.len())));
        assert_eq!(find_bare_error(ok), None);
        let enveloped = b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\ncontent-type: application/json\r\n\r\n";
        assert_eq!(find_bare_error(enveloped), None);
        let empty_ok = b"HTTP/1.1 204 No Content\r\ncontent-length: 0\r\n\r\n";
        assert_eq!(find_bare_error(empty_ok), None);
        let text_in_a_body =
            b"HTTP/1.1 200 OK\r\ncontent-length: 30\r\n\r\n{\"a\":\"HTTP/1.1 400 Bad Request\"}";
        assert_eq!(find_bare_error(text_in_a_body), None);
    }

    #[test]
    fn the_rewrite_keeps_the_status_and_adds_the_envelope() {
        let out = rewrite(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\nconnection: close\r\ndate: Wed, 25 Nov 2026 17:57:45 GMT\r\n\r\n");
        let text = String::from_utf8(out).unwrap_or_default();
        assert!(text.starts_with("HTTP/1.1 400 Bad Request\r\n"), "{text}");
        assert!(
            text.contains("\r\ndate: Wed, 25 Nov 2026 17:57:45 GMT\r\n"),
            "{text}"
        );
        assert!(text.contains("\r\nrequest-id: req_"), "{text}");
        let (head, body) = text.split_once("\r\n\r\n").unwrap_or_default();
        assert!(
            head.contains(&format!("content-length: {}", body.len())),
            "{text}"
        );
        let v: serde_json::Value = serde_json::from_str(body).unwrap_or_default();
        assert_eq!(v["error"], "invalid_request");
    }
}
