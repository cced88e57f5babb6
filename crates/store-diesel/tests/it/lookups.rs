//! Reads by id alone (operator commands), the latest job result, and a partner's activity.
