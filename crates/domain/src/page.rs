//! Keyset pagination, newest first over `(created_at, id)`.
//!
//! A cursor names the list it belongs to and the last item of the page it
//! ends; the next page holds items strictly older in `(created_at, id)`
//! order. Items created after the first page was read are newer than every
//! cursor, so they never shift a later page. Cursors are opaque to partners
//! (URL-safe base64) and a cursor of one list is rejected by another.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

use crate::ids::GroupId;

/// Default page size.
pub const DEFAULT_LIMIT: u32 = 50;
/// Largest page size.
pub const MAX_LIMIT: u32 = 200;

/// Why a `limit` or `cursor` query parameter is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum PageError {
    /// `limit` is not an integer in 1..=200.
    #[error("limit must be an integer from 1 to 200")]
    Limit,
    /// `cursor` does not decode, or belongs to another list.
    #[error("cursor is not a cursor of this list")]
    Cursor,
}

/// A position in a list: the `(created_at, id)` of the last item returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cursor {
    /// Creation time of the last item, Unix seconds.
    pub created_at: i64,
    /// Id of the last item.
    pub id: String,
}

/// One page request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageRequest {
    /// Page size, 1..=200.
    pub limit: u32,
    /// Start after this position; `None` for the first page.
    pub after: Option<Cursor>,
}

impl PageRequest {
    /// The first page of `limit` items.
    #[must_use]
    pub fn first(limit: u32) -> Self {
        Self {
            limit: limit.clamp(1, MAX_LIMIT),
            after: None,
        }
    }

    /// Parses the `limit` and `cursor` query parameters of list `list`.
    ///
    /// # Errors
    /// [`PageError::Limit`] or [`PageError::Cursor`].
    pub fn parse(list: &str, limit: Option<&str>, cursor: Option<&str>) -> Result<Self, PageError> {
        let limit = match limit {
            None => DEFAULT_LIMIT,
            Some(text) => text
                .parse::<u32>()
                .ok()
                .filter(|n| (1..=MAX_LIMIT).contains(n))
                .ok_or(PageError::Limit)?,
        };
        let after = cursor.map(|c| decode_cursor(list, c)).transpose()?;
        Ok(Self { limit, after })
    }
}

/// A page of one group's list, as the storage ports read it: the group,
/// which of its items (`filter`, e.g. a
/// [`MemberFilter`](crate::member::MemberFilter)) and which page.
#[derive(Debug, Clone, Copy)]
pub struct GroupQuery<'a, F> {
    /// The group.
    pub group: &'a GroupId,
    /// Which items.
    pub filter: F,
    /// Which page.
    pub page: &'a PageRequest,
}

impl<'a, F: Default> GroupQuery<'a, F> {
    /// Page `page` of all of `group`'s items.
    #[must_use]
    pub fn all(group: &'a GroupId, page: &'a PageRequest) -> Self {
        Self {
            group,
            filter: F::default(),
            page,
        }
    }
}

/// One page of a list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page<T> {
    /// Items, newest first.
    pub items: Vec<T>,
    /// Where the next page starts; `None` on the last page.
    pub next: Option<Cursor>,
}

impl<T> Page<T> {
    /// Builds a page from up to `limit + 1` rows fetched newest first: the
    /// extra row only tells that a further page exists.
    #[must_use]
    pub fn from_rows(mut rows: Vec<T>, limit: u32, key: impl Fn(&T) -> Cursor) -> Self {
        let limit = usize::try_from(limit).unwrap_or(usize::MAX);
        let more = rows.len() > limit;
        rows.truncate(limit);
        let next = if more { rows.last().map(key) } else { None };
        Self { items: rows, next }
    }

    /// Maps the items, keeping the cursor.
    #[must_use]
    pub fn map<U>(self, f: impl FnMut(T) -> U) -> Page<U> {
        Page {
            items: self.items.into_iter().map(f).collect(),
            next: self.next,
        }
    }
}

/// Encodes a cursor of list `list` as an opaque string.
#[must_use]
pub fn encode_cursor(list: &str, cursor: &Cursor) -> String {
    URL_SAFE_NO_PAD.encode(format!("{list}|{}|{}", cursor.created_at, cursor.id))
}

/// Decodes a cursor of list `list`.
///
/// # Errors
/// [`PageError::Cursor`] when it does not decode or names another list.
pub fn decode_cursor(list: &str, text: &str) -> Result<Cursor, PageError> {
    let bytes = URL_SAFE_NO_PAD
        .decode(text)
        .map_err(|_| PageError::Cursor)?;
    let text = String::from_utf8(bytes).map_err(|_| PageError::Cursor)?;
    let mut parts = text.splitn(3, '|');
    let (Some(l), Some(at), Some(id)) = (parts.next(), parts.next(), parts.next()) else {
        return Err(PageError::Cursor);
    };
    if l != list || id.is_empty() || id.len() > 64 {
        return Err(PageError::Cursor);
    }
    let created_at = at.parse::<i64>().map_err(|_| PageError::Cursor)?;
    Ok(Cursor {
        created_at,
        id: id.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_and_cursors_are_checked() {
        let p = PageRequest::parse("groups", None, None).unwrap();
        assert_eq!(p.limit, 50);
        assert_eq!(
            PageRequest::parse("groups", Some("200"), None)
                .unwrap()
                .limit,
            200
        );
        for bad in ["0", "201", "-1", "1.5", "ten", ""] {
            assert_eq!(
                PageRequest::parse("groups", Some(bad), None),
                Err(PageError::Limit),
                "{bad}"
            );
        }
        let c = Cursor {
            created_at: 1_795_000_000,
            id: "grp_0123456789ab".to_owned(),
        };
        let text = encode_cursor("groups", &c);
        let p = PageRequest::parse("groups", Some("2"), Some(&text)).unwrap();
        assert_eq!(p.after, Some(c));
        assert_eq!(decode_cursor("quotes", &text), Err(PageError::Cursor));
        for bad in ["", "!!!", "Zm9v", &URL_SAFE_NO_PAD.encode("groups|x|grp_1")] {
            assert_eq!(
                decode_cursor("groups", bad),
                Err(PageError::Cursor),
                "{bad}"
            );
        }
    }

    #[test]
    fn a_page_keeps_limit_rows_and_points_after_the_last() {
        let key = |n: &i64| Cursor {
            created_at: *n,
            id: n.to_string(),
        };
        let p = Page::from_rows(vec![5, 4, 3], 2, key);
        assert_eq!(p.items, vec![5, 4]);
        assert_eq!(p.next.map(|c| c.created_at), Some(4));
        let p = Page::from_rows(vec![5, 4], 2, key);
        assert_eq!(p.next, None);
    }
}
