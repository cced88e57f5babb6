//! Cursor pagination query parameters (`limit` 1..200, default 50;
//! `cursor` opaque) and the `next_cursor` of a page.

use actix_web::HttpRequest;

use domain::page::{Page, PageError, PageRequest, encode_cursor};

use crate::error::ApiError;
use crate::query::Query;

/// Parses `limit` and `cursor` of list `list` from the query string.
///
/// # Errors
/// 400 `invalid_request` with `field: "limit"` or `"cursor"`.
pub fn request(req: &HttpRequest, list: &str) -> Result<PageRequest, ApiError> {
    let query = Query::of(req);
    PageRequest::parse(list, query.text("limit"), query.text("cursor")).map_err(|e| match e {
        PageError::Limit => ApiError::invalid_field("limit", "must be an integer from 1 to 200"),
        PageError::Cursor => ApiError::invalid_field("cursor", "is not a cursor of this list"),
    })
}

/// The `next_cursor` of a page of list `list`.
#[must_use]
pub fn next_cursor<T>(list: &str, page: &Page<T>) -> Option<String> {
    page.next.as_ref().map(|c| encode_cursor(list, c))
}

#[cfg(test)]
mod tests {
    use actix_web::test::TestRequest;

    use super::*;

    fn parse(q: &str) -> Result<PageRequest, String> {
        let req = TestRequest::with_uri(&format!("/v1/groups?{q}")).to_http_request();
        request(&req, "groups").map_err(|e| {
            e.body()
                .details
                .unwrap_or_default()
                .first()
                .map(|d| d.field.clone())
                .unwrap_or_default()
        })
    }

    #[test]
    fn limits_and_cursors_are_checked() {
        assert_eq!(parse("").map(|p| p.limit), Ok(50));
        assert_eq!(parse("limit=200").map(|p| p.limit), Ok(200));
        for bad in ["limit=0", "limit=201", "limit=abc", "limit=1.5", "limit=-1"] {
            assert_eq!(parse(bad), Err("limit".to_owned()), "{bad}");
        }
        assert_eq!(parse("cursor=%%%"), Err("cursor".to_owned()));
    }
}
