//! The body deadline: a client has `HttpConfig::body_timeout` (60 s by
//! default) from the moment its request head arrived to send the whole
//! body. A slower body ends in an error the handler's extractor sees, and
//! [`super::observe`] answers 408 in the envelope — so a client that sends
//! half a body and stalls holds its connection for a bounded time.

use std::cell::Cell;
use std::future::Future as _;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};
use std::time::Duration;

use actix_web::dev::{self, ServiceRequest};
use actix_web::error::PayloadError;
use actix_web::rt::time::{Sleep, sleep};
use actix_web::web::Bytes;
use futures_util::Stream;

/// Whether the request's body ran out of time (shared with the stream).
#[derive(Debug, Clone, Default)]
pub(crate) struct TimedOut(Rc<Cell<bool>>);

impl TimedOut {
    /// Whether the deadline passed while the body was being read.
    pub(crate) fn get(&self) -> bool {
        self.0.get()
    }
}

/// Replaces the request's payload with one that fails after `limit`.
pub(crate) fn guard(req: ServiceRequest, limit: Duration) -> (ServiceRequest, TimedOut) {
    let flag = TimedOut::default();
    let (http_req, payload) = req.into_parts();
    // A request without a body (most GETs) has nothing to wait for.
    if matches!(payload, dev::Payload::None) {
        return (ServiceRequest::from_parts(http_req, payload), flag);
    }
    let stream = Deadline {
        inner: payload,
        timer: Box::pin(sleep(limit)),
        flag: flag.clone(),
        done: false,
    };
    let stream: Pin<Box<dyn Stream<Item = Result<Bytes, PayloadError>>>> = Box::pin(stream);
    let payload = dev::Payload::Stream { payload: stream };
    (ServiceRequest::from_parts(http_req, payload), flag)
}

/// The payload under a deadline.
struct Deadline {
    inner: dev::Payload,
    timer: Pin<Box<Sleep>>,
    flag: TimedOut,
    done: bool,
}

impl Stream for Deadline {
    type Item = Result<Bytes, PayloadError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if self.done {
            return Poll::Ready(None);
        }
        match Pin::new(&mut self.inner).poll_next(cx) {
            Poll::Ready(None) => {
                self.done = true;
                Poll::Ready(None)
            }
            Poll::Ready(Some(chunk)) => Poll::Ready(Some(chunk)),
            Poll::Pending => match self.timer.as_mut().poll(cx) {
                Poll::Ready(()) => {
                    self.done = true;
                    self.flag.0.set(true);
                    Poll::Ready(Some(Err(PayloadError::Io(std::io::Error::new(
                        std::io::ErrorKind::TimedOut,
                        "the request body was not received in time",
                    )))))
                }
                Poll::Pending => Poll::Pending,
            },
        }
    }
}
