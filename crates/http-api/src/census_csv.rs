//! The CSV form of a census write (contract section 9): one row per
//! person under a header of member field names. An employee row leaves
//! `relationship` empty; a dependent row names its `relationship` and the
//! `employee_external_id` of its employee. Rows become the JSON members
//! the JSON form takes, and every error is re-pointed at the CSV data row
//! it came from (0-based), as `members[<row>].<field>`.

use serde_json::{Map, Value};

use domain::error::FieldError;

use crate::casing::camel_to_snake;
use crate::wire::census::{DEPENDENT_FIELDS, MEMBER_FIELDS};

/// Columns that are not member fields.
const RELATIONSHIP: &str = "relationship";
const EMPLOYEE: &str = "employee_external_id";

/// Number-valued columns.
const NUMERIC: &[&str] = &["age"];

/// Members built from CSV, and where each came from.
#[derive(Debug, Default)]
pub struct CsvCensus {
    /// Members, as JSON objects in snake_case.
    pub members: Vec<Value>,
    /// For each member, its CSV row and the rows of its dependents.
    pub rows: Vec<(usize, Vec<usize>)>,
    /// Errors found while reading (unknown columns, orphan dependents).
    pub errors: Vec<FieldError>,
}

impl CsvCensus {
    /// Every error of the write in CSV terms, by row: the errors found
    /// while reading, and `errors` of the JSON form re-pointed at their
    /// rows.
    #[must_use]
    pub fn errors_with(&self, errors: Vec<FieldError>) -> Vec<FieldError> {
        let mut all = self.errors.clone();
        all.extend(errors.into_iter().map(|e| self.locate(e)));
        all.sort_by_key(|e| e.index);
        all
    }

    /// Re-points an error of the JSON form (`members[i]…`, index `i`) at
    /// its CSV data row: `members[r].field` with index `r`, where `r` is
    /// the row of the member or, for `members[i].dependents[j].field`, of
    /// that dependent.
    #[must_use]
    pub fn locate(&self, e: FieldError) -> FieldError {
        let Some(rest) = e.field.strip_prefix("members[") else {
            return e;
        };
        let Some((i, rest)) = rest.split_once(']') else {
            return e;
        };
        let Some((row, deps)) = i.parse::<usize>().ok().and_then(|i| self.rows.get(i)) else {
            return e;
        };
        let (row, field) = match rest
            .strip_prefix(".dependents[")
            .and_then(|r| r.split_once(']'))
        {
            Some((j, field)) => match j.parse::<usize>().ok().and_then(|j| deps.get(j)) {
                Some(dep_row) => (*dep_row, field.to_owned()),
                None => (*row, rest.to_owned()),
            },
            None => (*row, rest.to_owned()),
        };
        FieldError {
            field: format!("members[{row}]{field}"),
            message: e.message,
            index: Some(row),
        }
    }
}

/// Reads a CSV census.
///
/// # Errors
/// One [`FieldError`] when the text is not CSV or the header is empty.
pub fn read(bytes: &[u8]) -> Result<CsvCensus, FieldError> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(true)
        .trim(csv::Trim::All)
        .flexible(false)
        .from_reader(bytes);
    let header: Vec<String> = reader
        .headers()
        .map_err(|e| FieldError::new("body", format!("is not CSV ({e})")))?
        .iter()
        .map(camel_to_snake)
        .collect();
    if header.iter().all(String::is_empty) {
        return Err(FieldError::new(
            "body",
            "needs a header row of member field names",
        ));
    }
    let mut out = CsvCensus::default();
    for column in &header {
        let known = MEMBER_FIELDS.contains(&column.as_str())
            || DEPENDENT_FIELDS.contains(&column.as_str())
            || column == EMPLOYEE
            || column == "name";
        if !known || column == "dependents" {
            out.errors
                .push(FieldError::new(column.clone(), "is not a known column"));
        }
    }
    if !out.errors.is_empty() {
        return Ok(out);
    }
    let mut dependents: Vec<(usize, String, Map<String, Value>)> = Vec::new();
    for (row, record) in reader.records().enumerate() {
        let record = record.map_err(|e| FieldError {
            field: format!("members[{row}]"),
            message: format!("is not a CSV row ({e})"),
            index: Some(row),
        })?;
        let cells: Vec<(&str, &str)> = header
            .iter()
            .map(String::as_str)
            .zip(record.iter())
            .filter(|(_, v)| !v.is_empty())
            .collect();
        let relationship = cells
            .iter()
            .find(|(k, _)| *k == RELATIONSHIP)
            .map(|(_, v)| *v);
        let value = |k: &str, v: &str| {
            if NUMERIC.contains(&k) {
                v.parse::<i64>()
                    .map_or_else(|_| Value::String(v.to_owned()), Value::from)
            } else {
                Value::String(v.to_owned())
            }
        };
        match relationship {
            None => {
                let mut m = Map::new();
                for (k, v) in cells.iter().filter(|(k, _)| *k != EMPLOYEE && *k != "name") {
                    m.insert((*k).to_owned(), value(k, v));
                }
                out.members.push(Value::Object(m));
                out.rows.push((row, Vec::new()));
            }
            Some(_) => {
                let employee = cells
                    .iter()
                    .find(|(k, _)| *k == EMPLOYEE)
                    .map(|(_, v)| (*v).to_owned())
                    .unwrap_or_default();
                let mut d = Map::new();
                for (k, v) in &cells {
                    if DEPENDENT_FIELDS.contains(k) {
                        d.insert((*k).to_owned(), value(k, v));
                    }
                }
                if !d.contains_key("name") {
                    let name: Vec<&str> = cells
                        .iter()
                        .filter(|(k, _)| *k == "first_name" || *k == "last_name")
                        .map(|(_, v)| *v)
                        .collect();
                    if !name.is_empty() {
                        d.insert("name".to_owned(), Value::String(name.join(" ")));
                    }
                }
                dependents.push((row, employee, d));
            }
        }
    }
    for (row, employee, d) in dependents {
        let owner = out.members.iter().position(|m| {
            !employee.is_empty()
                && m.get("external_id").and_then(Value::as_str) == Some(employee.as_str())
        });
        match owner {
            Some(i) => {
                if let (Some(Value::Object(m)), Some((_, rows))) =
                    (out.members.get_mut(i), out.rows.get_mut(i))
                {
                    let list = m
                        .entry("dependents")
                        .or_insert_with(|| Value::Array(Vec::new()));
                    if let Value::Array(list) = list {
                        list.push(Value::Object(d));
                        rows.push(row);
                    }
                }
            }
            None => out.errors.push(FieldError {
                field: format!("members[{row}].{EMPLOYEE}"),
                message: "must name the external_id of an employee row".to_owned(),
                index: Some(row),
            }),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_become_members_with_their_dependents() {
        let text = "external_id,firstName,dob,zip,relationship,employee_external_id,age\n\
                    E1,Ana,1988-04-12,60601,,,\n\
                    ,Leo,2016-09-30,,child,E1,\n\
                    E2,Ben,,60614,,,44\n\
                    ,Zoe,,,spouse,E9,40\n";
        let c = read(text.as_bytes()).unwrap();
        assert_eq!(c.members.len(), 2);
        assert_eq!(
            c.members.first().unwrap(),
            &serde_json::json!({"external_id": "E1", "first_name": "Ana", "dob": "1988-04-12",
                "zip": "60601", "dependents": [{"relationship": "child", "dob": "2016-09-30", "name": "Leo"}]})
        );
        assert_eq!(c.members.get(1).unwrap()["age"], 44);
        assert_eq!(c.rows, vec![(0, vec![1]), (2, vec![])]);
        assert_eq!(c.errors.len(), 1);
        assert_eq!(
            c.errors.first().unwrap().field,
            "members[3].employee_external_id"
        );
        let at = |field: &str, index| FieldError {
            field: field.to_owned(),
            message: "bad".to_owned(),
            index: Some(index),
        };
        let e = c.locate(at("members[0].dependents[0].dob", 0));
        assert_eq!((e.field.as_str(), e.index), ("members[1].dob", Some(1)));
        let e = c.locate(at("members[1].zip", 1));
        assert_eq!((e.field.as_str(), e.index), ("members[2].zip", Some(2)));
    }

    #[test]
    fn unknown_columns_and_ragged_rows_are_refused() {
        let c = read(b"external_id,shoe_size\nE1,9\n").unwrap();
        assert_eq!(
            c.errors.first().map(|e| e.field.as_str()),
            Some("shoe_size")
        );
        assert!(read(b"external_id,zip\nE1\n").is_err());
    }
}
