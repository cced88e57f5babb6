//! Readers for the public input files: plain and gzip CSV, and the small
//! block-style YAML subset that PolicyEngine's parameter files use.
//!
//! The readers are deliberately strict: anything outside the subset (quoted
//! CSV fields, flow collections, inconsistent indentation) is an error, so a
//! change in an upstream file fails loudly instead of being misread.

use std::collections::BTreeMap;
use std::fs;
use std::io::Read as _;
use std::path::Path;

use anyhow::{Context as _, bail, ensure};
use flate2::read::GzDecoder;

/// Reads a UTF-8 text file, gunzipping it when its name ends in `.gz`.
pub(crate) fn read_text(path: &Path) -> anyhow::Result<String> {
    let bytes = fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    if path.extension().is_some_and(|ext| ext == "gz") {
        let mut text = String::new();
        GzDecoder::new(bytes.as_slice())
            .read_to_string(&mut text)
            .with_context(|| format!("cannot gunzip {}", path.display()))?;
        Ok(text)
    } else {
        String::from_utf8(bytes).with_context(|| format!("{} is not UTF-8", path.display()))
    }
}

/// A CSV file without quoting: a header and rows of plain fields.
#[derive(Debug)]
pub(crate) struct Csv {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl Csv {
    /// Parses CSV text with LF or CRLF line endings; quoted fields are refused.
    pub(crate) fn parse(text: &str) -> anyhow::Result<Self> {
        let mut lines = text
            .lines()
            .map(|line| line.strip_suffix('\r').unwrap_or(line))
            .enumerate()
            .filter(|(_, line)| !line.is_empty());
        let (_, header) = lines.next().context("the csv file is empty")?;
        let header: Vec<String> = header.split(',').map(str::to_owned).collect();
        let mut rows = Vec::new();
        for (index, line) in lines {
            ensure!(
                !line.contains('"'),
                "line {}: quoted csv fields are not supported",
                index + 1
            );
            let row: Vec<String> = line.split(',').map(str::to_owned).collect();
            ensure!(
                row.len() == header.len(),
                "line {}: expected {} fields, found {}",
                index + 1,
                header.len(),
                row.len()
            );
            rows.push(row);
        }
        Ok(Self { header, rows })
    }

    /// Reads and parses a CSV file (gzip if the name ends in `.gz`).
    pub(crate) fn read(path: &Path) -> anyhow::Result<Self> {
        let text = read_text(path)?;
        Self::parse(&text).with_context(|| format!("cannot parse {}", path.display()))
    }

    /// The index of the named column.
    pub(crate) fn column(&self, name: &str) -> anyhow::Result<usize> {
        self.header
            .iter()
            .position(|h| h == name)
            .with_context(|| format!("missing column {name:?}"))
    }

    /// The data rows.
    pub(crate) fn rows(&self) -> &[Vec<String>] {
        &self.rows
    }
}

/// The field of `row` at `column` (both come from the same [`Csv`]).
pub(crate) fn field(row: &[String], column: usize) -> anyhow::Result<&str> {
    row.get(column)
        .map(String::as_str)
        .context("row is shorter than its header")
}

/// A node of the YAML subset: a scalar, a mapping (in file order) or a list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Yaml {
    /// A plain or quoted scalar, or the empty string for a null value.
    Scalar(String),
    /// A block mapping with unique keys.
    Map(BTreeMap<String, Yaml>),
    /// A block sequence.
    List(Vec<Yaml>),
}

impl Yaml {
    /// Parses the block-style subset: `key: value`, `key:` followed by an
    /// indented block (or a `- ` list at the same indentation), `- item`,
    /// `- key: value` and `#` comments.
    pub(crate) fn parse(text: &str) -> anyhow::Result<Self> {
        let mut lines = Vec::new();
        for (index, raw) in text.lines().enumerate() {
            let line = strip_comment(raw.strip_suffix('\r').unwrap_or(raw)).trim_end();
            if line.trim().is_empty() {
                continue;
            }
            ensure!(
                !line.contains('\t'),
                "line {}: tabs are not supported",
                index + 1
            );
            let indent = line.len() - line.trim_start().len();
            lines.push(Line {
                number: index + 1,
                indent,
                text: line.trim_start().to_owned(),
            });
        }
        let mut parser = Parser { lines, pos: 0 };
        let Some(first) = parser.lines.first() else {
            return Ok(Self::Map(BTreeMap::new()));
        };
        let indent = first.indent;
        let root = parser.node(indent)?;
        if let Some(line) = parser.lines.get(parser.pos) {
            bail!("line {}: unexpected indentation", line.number);
        }
        Ok(root)
    }

    /// Reads and parses a YAML file.
    pub(crate) fn read(path: &Path) -> anyhow::Result<Self> {
        let text = read_text(path)?;
        Self::parse(&text).with_context(|| format!("cannot parse {}", path.display()))
    }

    /// The mapping, or an error naming `what`.
    pub(crate) fn as_map(&self, what: &str) -> anyhow::Result<&BTreeMap<String, Yaml>> {
        match self {
            Self::Map(map) => Ok(map),
            _ => bail!("{what} is not a mapping"),
        }
    }

    /// The scalar text, or an error naming `what`.
    pub(crate) fn as_scalar(&self, what: &str) -> anyhow::Result<&str> {
        match self {
            Self::Scalar(text) => Ok(text),
            _ => bail!("{what} is not a scalar"),
        }
    }

    /// The list items, or an error naming `what`.
    pub(crate) fn as_list(&self, what: &str) -> anyhow::Result<&[Yaml]> {
        match self {
            Self::List(items) => Ok(items),
            _ => bail!("{what} is not a list"),
        }
    }
}

/// For a `{YYYY-MM-DD: value}` mapping, the value in force on `date`: the
/// entry with the latest date not after it.
pub(crate) fn value_on<'a>(dated: &'a Yaml, date: &str, what: &str) -> anyhow::Result<&'a str> {
    let map = dated.as_map(what)?;
    let (_, value) = map
        .iter()
        .rfind(|(key, _)| key.as_str() <= date)
        .with_context(|| format!("{what} has no value on {date}"))?;
    value.as_scalar(what)
}

/// One significant line of YAML.
#[derive(Debug)]
struct Line {
    number: usize,
    indent: usize,
    text: String,
}

impl Line {
    fn is_item(&self) -> bool {
        self.text == "-" || self.text.starts_with("- ")
    }
}

/// Recursive-descent parser over the significant lines.
struct Parser {
    lines: Vec<Line>,
    pos: usize,
}

impl Parser {
    /// Parses the block (mapping or list) starting at the current line, whose
    /// indentation is `indent`.
    fn node(&mut self, indent: usize) -> anyhow::Result<Yaml> {
        match self.lines.get(self.pos) {
            Some(line) if line.is_item() => self.list(indent),
            Some(_) => self.map(indent),
            None => Ok(Yaml::Scalar(String::new())),
        }
    }

    fn map(&mut self, indent: usize) -> anyhow::Result<Yaml> {
        let mut map = BTreeMap::new();
        while let Some(line) = self.lines.get(self.pos) {
            if line.indent < indent || (line.indent == indent && line.is_item()) {
                break;
            }
            ensure!(
                line.indent == indent,
                "line {}: unexpected indentation",
                line.number
            );
            let number = line.number;
            let (key, value) = split_key(&line.text)
                .with_context(|| format!("line {number}: expected `key: value`"))?;
            let (key, value) = (unquote(key), value.to_owned());
            self.pos += 1;
            let node = if value.is_empty() {
                match self.lines.get(self.pos) {
                    Some(next)
                        if next.indent > indent || (next.indent == indent && next.is_item()) =>
                    {
                        let child = next.indent;
                        self.node(child)?
                    }
                    _ => Yaml::Scalar(String::new()),
                }
            } else {
                ensure!(
                    !value.starts_with(['[', '{', '|', '>', '&', '*', '!']),
                    "line {number}: unsupported yaml value {value:?}"
                );
                Yaml::Scalar(unquote(&value))
            };
            ensure!(
                map.insert(key.clone(), node).is_none(),
                "line {number}: duplicate key {key:?}"
            );
        }
        Ok(Yaml::Map(map))
    }

    fn list(&mut self, indent: usize) -> anyhow::Result<Yaml> {
        let mut items = Vec::new();
        while let Some(line) = self.lines.get_mut(self.pos) {
            if line.indent != indent || !line.is_item() {
                ensure!(
                    line.indent <= indent,
                    "line {}: unexpected indentation",
                    line.number
                );
                break;
            }
            let rest = line.text.get(1..).unwrap_or_default();
            let content = rest.trim_start();
            if content.is_empty() {
                self.pos += 1;
                match self.lines.get(self.pos) {
                    Some(next) if next.indent > indent => {
                        let child = next.indent;
                        items.push(self.node(child)?);
                    }
                    _ => items.push(Yaml::Scalar(String::new())),
                }
            } else if split_key(content).is_some() || content.starts_with("- ") {
                // `- key: value`: the item is a block that starts on this
                // line, at the column of `key`.
                let column = indent + 1 + (rest.len() - content.len());
                line.indent = column;
                line.text = content.to_owned();
                items.push(self.node(column)?);
            } else {
                items.push(Yaml::Scalar(unquote(content)));
                self.pos += 1;
            }
        }
        Ok(Yaml::List(items))
    }
}

/// Splits `key: value` or `key:`; `None` for a plain scalar.
fn split_key(text: &str) -> Option<(&str, &str)> {
    if let Some(key) = text.strip_suffix(':') {
        return Some((key.trim_end(), ""));
    }
    text.split_once(": ")
        .map(|(key, value)| (key.trim_end(), value.trim()))
}

/// Removes a trailing ` # comment` (or a whole-line comment) outside quotes.
fn strip_comment(line: &str) -> &str {
    let mut quote = None;
    let mut previous = ' ';
    for (index, ch) in line.char_indices() {
        match quote {
            Some(q) if ch == q => quote = None,
            Some(_) => {}
            None if ch == '"' || ch == '\'' => quote = Some(ch),
            None if ch == '#' && previous.is_whitespace() => {
                return line.get(..index).unwrap_or(line);
            }
            None => {}
        }
        previous = ch;
    }
    line
}

/// Removes matching surrounding quotes from a scalar.
fn unquote(text: &str) -> String {
    let text = text.trim();
    for q in ['"', '\''] {
        if let Some(inner) = text.strip_prefix(q).and_then(|t| t.strip_suffix(q)) {
            return inner.to_owned();
        }
    }
    text.to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scalar(text: &str) -> Yaml {
        Yaml::Scalar(text.to_owned())
    }

    #[test]
    fn parses_nested_maps_with_comments() {
        let yaml = Yaml::parse(
            "description: a: b # comment\nmetadata:\n  breakdown:\n     - state_code\n     - range(1, 68) #max\nAK:\n  1:\n    2026-01-01: 613.00\n\n  2:\n    2025-01-01: 1\n    2026-01-01: 2\n",
        )
        .unwrap();
        let root = yaml.as_map("root").unwrap();
        assert_eq!(root["description"], scalar("a: b"));
        assert_eq!(
            root["metadata"].as_map("m").unwrap()["breakdown"],
            Yaml::List(vec![scalar("state_code"), scalar("range(1, 68)")])
        );
        let ak = root["AK"].as_map("AK").unwrap();
        assert_eq!(value_on(&ak["1"], "2026-01-01", "x").unwrap(), "613.00");
        assert_eq!(value_on(&ak["2"], "2026-06-01", "x").unwrap(), "2");
        assert_eq!(value_on(&ak["2"], "2025-06-01", "x").unwrap(), "1");
        assert!(value_on(&ak["2"], "2024-06-01", "x").is_err());
    }

    #[test]
    fn parses_compact_lists_of_maps() {
        let yaml = Yaml::parse(
            "brackets:\n- threshold:\n   2018-01-01: 0\n  amount:\n   2018-01-01: 1.0\n- threshold:\n    2018-01-01: 21\n  amount:\n    2018-01-01: 1.3\n",
        )
        .unwrap();
        let brackets = yaml.as_map("root").unwrap()["brackets"]
            .as_list("brackets")
            .unwrap();
        assert_eq!(brackets.len(), 2);
        let second = brackets[1].as_map("bracket").unwrap();
        assert_eq!(
            value_on(&second["threshold"], "2026-01-01", "t").unwrap(),
            "21"
        );
        assert_eq!(
            value_on(&second["amount"], "2026-01-01", "a").unwrap(),
            "1.3"
        );
    }

    #[test]
    fn refuses_what_it_does_not_understand() {
        assert!(Yaml::parse("a: 1\n   b: 2\n").is_err());
        assert!(Yaml::parse("a: [1, 2]\n").is_err());
        assert!(Yaml::parse("a: 1\na: 2\n").is_err());
        assert!(Yaml::parse("a:\n  - 1\n    - 2\n").is_err());
    }

    #[test]
    fn parses_csv_with_crlf_and_refuses_quotes() {
        let csv = Csv::parse("county,rating_area\r\nA_AK,1\r\nB_AK,2\r\n").unwrap();
        let area = csv.column("rating_area").unwrap();
        assert_eq!(field(&csv.rows()[1], area).unwrap(), "2");
        assert!(Csv::parse("a,b\n\"x,y\",1\n").is_err());
        assert!(Csv::parse("a,b\n1\n").is_err());
    }
}
