//! `GET /plans`: the catalogue of the service's two versions.

use std::collections::BTreeMap;

use serde::Serialize;
use utoipa::ToSchema;

use domain::plans::PlanInfo;

/// Plan facts.
#[derive(Debug, Clone, Serialize, ToSchema)]
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

/// A feature line.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct PlanFeature {
    /// Title.
    pub title: String,
    /// Description.
    pub description: String,
}

/// One plan.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Plan {
    /// `diamond` or `value`.
    pub id: String,
    /// Name.
    pub name: String,
    /// Approved display names.
    pub display_names: Vec<String>,
    /// Description.
    pub description: String,
    /// Facts.
    pub facts: PlanFacts,
    /// Feature lines.
    pub features: Vec<PlanFeature>,
    /// Display assets by name: `icon`, `color` (hex), `badge_text`.
    pub assets: BTreeMap<String, String>,
    /// Disclaimers.
    pub disclaimers: Vec<String>,
}

impl From<&PlanInfo> for Plan {
    fn from(p: &PlanInfo) -> Self {
        Self {
            id: p.id.to_owned(),
            name: p.name.clone(),
            display_names: p.display_names.clone(),
            description: p.description.clone(),
            facts: PlanFacts {
                member_oop_max_individual_cents: p.facts.member_oop_max_individual_cents,
                member_oop_max_family_cents: p.facts.member_oop_max_family_cents,
                hsa_eligible: p.facts.hsa_eligible,
                network: p.facts.network.clone(),
            },
            features: p
                .features
                .iter()
                .map(|(title, description)| PlanFeature {
                    title: title.clone(),
                    description: description.clone(),
                })
                .collect(),
            assets: p.assets.clone(),
            disclaimers: p.disclaimers.clone(),
        }
    }
}

/// The answer of `GET /plans`.
#[derive(Debug, Serialize, ToSchema)]
#[schema(example = json!({"plans": [{
    "id": "diamond", "name": "Diamond", "display_names": ["Diamond", "Diamond HSA layer"],
    "description": "Caps members' out-of-pocket costs at $1,700 individual / $3,400 family on top of the base HSA plan, with care navigation.",
    "facts": {"member_oop_max_individual_cents": 170000, "member_oop_max_family_cents": 340000, "hsa_eligible": true, "network": "The partner plan's network"},
    "features": [{"title": "Out-of-pocket cap", "description": "Members pay at most $1,700 a year individually and $3,400 as a family."}],
    "assets": {"badge_text": "Diamond", "color": "#1F4E79", "icon": "diamond"},
    "disclaimers": ["Preliminary pricing; final pricing, eligibility and plan documents are confirmed during underwriting and onboarding."]
}]}))]
pub struct Plans {
    /// `diamond` then `value`.
    pub plans: Vec<Plan>,
}
