//! The plan catalogue behind `GET /plans`: the rate card's two versions
//! with the metadata the card does not price (approved display names,
//! assets, disclaimers), read from `rate-cards/plans.toml`.

use std::collections::BTreeMap;

use pricing_core::RateCard;
use pricing_core::rate_card::VersionId;
use serde::Deserialize;

/// The catalogue that ships beside the built-in rate card.
pub const BUILTIN_CATALOGUE: &str = include_str!("../../../rate-cards/plans.toml");

/// Plan facts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanFacts {
    /// Member out-of-pocket maximum, self-only, cents.
    pub member_oop_max_individual_cents: i64,
    /// Member out-of-pocket maximum, family, cents.
    pub member_oop_max_family_cents: i64,
    /// Whether the joint plan stays HSA-eligible.
    pub hsa_eligible: bool,
    /// Network.
    pub network: String,
}

/// One plan of the catalogue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanInfo {
    /// `diamond` or `value`.
    pub id: &'static str,
    /// Name.
    pub name: String,
    /// Approved display names.
    pub display_names: Vec<String>,
    /// One-sentence description.
    pub description: String,
    /// Facts.
    pub facts: PlanFacts,
    /// Display assets by name (`icon`, `color`, `badge_text`).
    pub assets: BTreeMap<String, String>,
    /// Disclaimers.
    pub disclaimers: Vec<String>,
    /// Feature lines (title, description).
    pub features: Vec<(String, String)>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    format: u32,
    plans: BTreeMap<String, Entry>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    display_names: Vec<String>,
    network: String,
    assets: BTreeMap<String, String>,
    disclaimers: Vec<String>,
}

/// Why a catalogue does not load.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("plan catalogue: {0}")]
pub struct CatalogueError(String);

/// Builds the catalogue from the card's default layer and `text`.
///
/// # Errors
/// [`CatalogueError`] when the file does not parse, has another format or
/// lacks a version.
pub fn catalogue(card: &RateCard, text: &str) -> Result<Vec<PlanInfo>, CatalogueError> {
    let file: File = toml::from_str(text).map_err(|e| CatalogueError(e.to_string()))?;
    if file.format != 1 {
        return Err(CatalogueError(format!("unknown format {}", file.format)));
    }
    let params = card
        .group_params(None, None)
        .map_err(|e| CatalogueError(e.to_string()))?;
    VersionId::ALL
        .into_iter()
        .map(|id| {
            let v = params.version(id);
            let entry = file
                .plans
                .get(id.as_str())
                .ok_or_else(|| CatalogueError(format!("no entry for `{}`", id.as_str())))?;
            Ok(PlanInfo {
                id: id.as_str(),
                name: v.name.clone(),
                display_names: entry.display_names.clone(),
                description: v.description.clone(),
                facts: PlanFacts {
                    member_oop_max_individual_cents: v.member_oop_max_individual_cents,
                    member_oop_max_family_cents: v.member_oop_max_family_cents,
                    hsa_eligible: true,
                    network: entry.network.clone(),
                },
                assets: entry.assets.clone(),
                disclaimers: entry.disclaimers.clone(),
                features: v
                    .features
                    .iter()
                    .map(|f| (f.title.clone(), f.description.clone()))
                    .collect(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_builtin_catalogue_names_both_versions_with_the_cards_maxima() {
        let card = RateCard::builtin_2026().unwrap();
        let plans = catalogue(&card, BUILTIN_CATALOGUE).unwrap();
        let ids: Vec<&str> = plans.iter().map(|p| p.id).collect();
        assert_eq!(ids, ["diamond", "value"]);
        assert_eq!(
            plans
                .first()
                .map(|p| p.facts.member_oop_max_individual_cents),
            Some(170_000)
        );
        assert!(catalogue(&card, "format = 2\n[plans]\n").is_err());
        assert!(catalogue(&card, "format = 1\n[plans]\n").is_err());
    }
}
