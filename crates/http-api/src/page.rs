//! Cursor pagination query parameters (`limit` 1..200, default 50;
//! `cursor` opaque) and the `next_cursor` of a page.

use actix_web::HttpRequest;

use domain::page::{Page, PageError, PageRequest, encode_cursor};

use crate::error::ApiError;

/// Parses `limit` and `cursor` of list `list` from the query string.
///
/// # Errors
/// 400 `invalid_request` with `field: "limit"` or `"cursor"`.
pub fn request(req: &HttpRequest, list: &str) -> Result<PageRequest, ApiError> {
    let mut limit = None;
    let mut cursor = None;
    for pair in req.query_string().split('&').filter(|p| !p.is_empty()) {
        let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
        let value = percent_decode(value);
        match name {
            "limit" => limit = Some(value),
            "cursor" => cursor = Some(value),
            _ => {}
        }
    }
    PageRequest::parse(list, limit.as_deref(), cursor.as_deref()).map_err(|e| match e {
        PageError::Limit => ApiError::invalid_field("limit", "must be an integer from 1 to 200"),
        PageError::Cursor => ApiError::invalid_field("cursor", "is not a cursor of this list"),
    })
}

/// The `next_cursor` of a page of list `list`.
#[must_use]
pub fn next_cursor<T>(list: &str, page: &Page<T>) -> Option<String> {
    page.next.as_ref().map(|c| encode_cursor(list, c))
}

/// Decodes `%XX` escapes and `+` (cursors are URL-safe base64, so this only
/// matters for hand-written queries).
pub(crate) fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        match b {
            b'+' => out.push(b' '),
            b'%' => {
                let hex = bytes
                    .get(i + 1..i + 3)
                    .and_then(|h| std::str::from_utf8(h).ok())
                    .and_then(|h| u8::from_str_radix(h, 16).ok());
                if let Some(v) = hex {
                    out.push(v);
                    i += 2;
                } else {
                    out.push(b);
                }
            }
            _ => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
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
        assert_eq!(percent_decode("a%3Db+c"), "a=b c");
    }
}
