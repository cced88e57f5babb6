//! Extractors that parse a path id and a JSON body the way every handler
//! does, so that a handler's arguments are already its inputs: a
//! malformed id is its resource's not-found (the same answer as another
//! partner's or the other mode's), and a body is read by
//! [`crate::body::parse`].
//!
//! Actix polls a handler's extractors in argument order and answers the
//! first failure, so an id argument before the body keeps "not found"
//! ahead of "invalid body", as the handlers always answered.

use std::future::{Ready, ready};
use std::marker::PhantomData;
use std::ops::Deref;

use actix_web::dev::Payload;
use actix_web::{FromRequest, HttpRequest, web};
use futures_util::future::LocalBoxFuture;
use serde::de::DeserializeOwned;

use domain::ids::{EnrollmentId, EventId, GroupId, QuoteId};

use crate::body;
use crate::error::ApiError;

/// A resource named by one segment of the path.
pub trait PathResource: Sized {
    /// The path parameter holding the id (`{groupId}`, `{id}`).
    const PARAM: &'static str;
    /// The not-found message of this resource.
    const MISSING: &'static str;
    /// The id, if `raw` is one.
    fn parse_id(raw: &str) -> Option<Self>;
}

macro_rules! path_resource {
    ($($id:ty => $param:literal, $missing:literal;)*) => {$(
        impl PathResource for $id {
            const PARAM: &'static str = $param;
            const MISSING: &'static str = $missing;
            fn parse_id(raw: &str) -> Option<Self> {
                <$id>::parse(raw).ok()
            }
        }
    )*};
}

path_resource! {
    GroupId => "groupId", "no such group in this mode";
    EnrollmentId => "id", "no such enrollment in this mode";
    QuoteId => "id", "no such quote in this mode";
    EventId => "id", "no such event in this mode (events are kept for 30 days)";
}

/// The id of the path, parsed.
#[derive(Debug)]
pub struct PathId<T>(pub T);

impl<T> Deref for PathId<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T: PathResource> PathId<T> {
    /// The id `raw`.
    ///
    /// # Errors
    /// The resource's not-found when `raw` is not one of its ids.
    pub fn parse(raw: &str) -> Result<T, ApiError> {
        T::parse_id(raw).ok_or_else(|| ApiError::not_found(T::MISSING))
    }

    /// A not-found of the operation on this resource said as the
    /// resource's not-found; other errors pass through.
    pub fn missing(e: impl Into<ApiError>) -> ApiError {
        crate::routes::not_found_as(e, T::MISSING)
    }
}

impl<T: PathResource> FromRequest for PathId<T> {
    type Error = ApiError;
    type Future = Ready<Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        ready(Self::parse(req.match_info().get(T::PARAM).unwrap_or_default()).map(PathId))
    }
}

/// How a body of `T` may be sent: required, or left out for its default.
pub trait Presence<T> {
    /// Parses `bytes` as `T`.
    ///
    /// # Errors
    /// As [`crate::body::parse`].
    fn parse(req: &HttpRequest, bytes: &[u8]) -> Result<T, ApiError>;
}

/// A body that must be sent.
#[derive(Debug)]
pub enum Required {}

/// A body that may be left out (empty): then `T`'s default.
#[derive(Debug)]
pub enum Optional {}

/// A body that must be sent, of a resource with read-only fields
/// ([`ReadOnlyFields`]): each one sent is refused as read-only rather than
/// as unknown.
#[derive(Debug)]
pub enum Writable {}

/// The fields of a resource a body may not write.
pub trait ReadOnlyFields {
    /// Their names, snake_case.
    const READ_ONLY: &'static [&'static str];
}

impl<T: DeserializeOwned> Presence<T> for Required {
    fn parse(req: &HttpRequest, bytes: &[u8]) -> Result<T, ApiError> {
        body::parse(req, bytes, &[])
    }
}

impl<T: DeserializeOwned + Default> Presence<T> for Optional {
    fn parse(req: &HttpRequest, bytes: &[u8]) -> Result<T, ApiError> {
        body::parse_optional(req, bytes)
    }
}

impl<T: DeserializeOwned + ReadOnlyFields> Presence<T> for Writable {
    fn parse(req: &HttpRequest, bytes: &[u8]) -> Result<T, ApiError> {
        body::parse(req, bytes, T::READ_ONLY)
    }
}

/// A JSON body of `T` (snake_case or camelCase keys; unknown fields
/// refused), required unless `P` is [`Optional`]; with [`Writable`], its
/// read-only fields are named as such.
#[derive(Debug)]
pub struct Body<T, P = Required>(pub T, pub PhantomData<P>);

impl<T, P> FromRequest for Body<T, P>
where
    T: 'static,
    P: Presence<T> + 'static,
{
    type Error = actix_web::Error;
    type Future = LocalBoxFuture<'static, Result<Self, actix_web::Error>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let bytes = web::Bytes::from_request(req, payload);
        let req = req.clone();
        Box::pin(async move {
            let bytes = bytes.await?;
            Ok(Self(P::parse(&req, &bytes)?, PhantomData))
        })
    }
}
